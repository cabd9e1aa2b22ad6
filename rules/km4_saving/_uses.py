"""Which calls write or read a saved model or weights: the KM4xx call tables, the
model-receiver guess and ``classify``, which turns a call site into a ``PathUse``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from kmigrate.engine import CallSite, Context, ReplaceNode
from kmigrate.rules.common.namespaces import KERAS_NAMESPACES, in_keras_namespaces
from kmigrate.rules.common.scopes import single_assignment
from kmigrate.rules.km4_saving._paths import (
    STALE_FORMAT_COMMENTS,
    PathAnalyzer,
    PathInfo,
    rewrite_literal_tail,
)

SAVE_MODEL_FUNCTIONS = in_keras_namespaces("models.save_model", "saving.save_model")
LOAD_MODEL_FUNCTIONS = in_keras_namespaces("models.load_model", "saving.load_model")
CHECKPOINT_CALLBACKS = in_keras_namespaces("callbacks.ModelCheckpoint")

WRITER_METHODS = frozenset({"save", "save_weights"})
READER_METHODS = frozenset({"load_weights"})


# Receiver names that say "this is a Keras model" for `x.save(...)` with no other clue.
_MODEL_NAME = re.compile(
    r"(model|net|classifier|regressor|encoder|decoder|generator|discriminator|critic|"
    r"vae|gan|cnn|rnn|lstm|mlp|transformer|bert|resnet|unet|backbone)",
    re.IGNORECASE,
)


@dataclass
class PathUse:
    """One call that writes or reads a saved model or weights."""

    site: CallSite
    role: str  # "save", "save_weights", "checkpoint", "load_model", "load_weights"
    path_node: ast.expr | None
    path: PathInfo | None
    target: str | None  # "model" / "weights": what Keras 3 needs; None = unknown
    problems: list[str] = field(default_factory=list)  # why it cannot be fixed

    @property
    def is_writer(self) -> bool:
        return self.role in ("save", "save_weights", "checkpoint")

    def literal_edit(self, new_tail: str) -> ReplaceNode | None:
        assert self.path is not None
        literal = self.path.literal
        source = self.site.module.node_text(literal)
        new = rewrite_literal_tail(source, self.path.tail, new_tail)
        if new is None:
            return None
        stale = STALE_FORMAT_COMMENTS.get(self.path.legacy_kind() or "", ())
        return ReplaceNode(self.site.module.span_of(literal), new, stale_comments=stale)


def _imports_keras(site: CallSite) -> bool:
    roots = ("tensorflow", "keras", "tf_keras")
    return any(q.split(".")[0] in roots for q in site.module.module_scope.imports.values())


def _receiver_name(receiver: ast.expr | None) -> str:
    if isinstance(receiver, ast.Name):
        return receiver.id
    if isinstance(receiver, ast.Attribute):
        return receiver.attr
    return ""


def assigned_from(site: CallSite, name: str) -> str:
    """The symbol of the call ``name`` is bound to once in the scope of ``site``
    (``model = keras.Sequential(...)``), else ""."""
    value = single_assignment(site.scope.function_node or site.module.tree, name)
    if isinstance(value, ast.Call):
        return site.module.resolve(value.func) or ""
    return ""


def _assigned_from_keras(site: CallSite, name: str) -> bool:
    return assigned_from(site, name).startswith(KERAS_NAMESPACES)


def looks_like_model(site: CallSite, path: PathInfo | None) -> bool:
    """Whether ``x.save(...)`` on an unresolved receiver is a Keras model's save."""
    if "save_format" in site.keywords:
        return True
    if path is not None and path.legacy_kind() == "h5":
        return True
    receiver = site.receiver
    if isinstance(receiver, ast.Name) and receiver.id == "self":
        return site.context == Context.MODEL
    name = _receiver_name(receiver)
    if name and _MODEL_NAME.search(name):
        return True
    return isinstance(receiver, ast.Name) and _assigned_from_keras(site, receiver.id)


def _checkpoint_target(site: CallSite) -> str | None:
    weights_only = site.literal(4, "save_weights_only")
    if weights_only is True:
        return "weights"
    if weights_only is False or not site.arg(4, "save_weights_only"):
        return "model"
    return None


_UNSUPPORTED = {
    "save": {"signatures", "options", "save_traces"},
    "save_weights": {"options"},
    "checkpoint": {"options", "period", "load_weights_on_restart"},
    "load_model": {"options"},
    "load_weights": {"options"},
}
_MAX_POSITIONAL = {"save": 2, "save_weights": 2, "checkpoint": 8, "load_model": 3}


def classify(site: CallSite) -> PathUse | None:
    """The :class:`PathUse` a call site is, or None when it is not one.

    Worked out once per call: the four path rules (KM401-KM403, KM405) each ask about
    every save and load, and following the path through the code is the costly part.
    The use is shared, so no rule may change it."""
    return site.module.memo(("km4-path-use", id(site.node)), lambda: _classify(site))


def _classify(site: CallSite) -> PathUse | None:
    symbol = site.symbol
    method = symbol[len("<method>.") :] if symbol.startswith("<method>.") else None
    if method == "save" or symbol in SAVE_MODEL_FUNCTIONS:
        role, position, target = "save", 0 if method else 1, "model"
    elif method == "save_weights":
        role, position, target = "save_weights", 0, "weights"
    elif method == "load_weights":
        role, position, target = "load_weights", 0, "weights"
    elif symbol in LOAD_MODEL_FUNCTIONS:
        role, position, target = "load_model", 0, "model"
    elif symbol in CHECKPOINT_CALLBACKS:
        role, position, target = "checkpoint", 0, _checkpoint_target(site)
    else:
        return None
    if method is not None and not _imports_keras(site):
        return None
    path_node = site.arg(position, "filepath")
    analyzer = PathAnalyzer(site)
    path = analyzer.analyze(path_node)
    if method == "save" and not looks_like_model(site, path):
        return None
    use = PathUse(site, role, path_node, path, target)
    bad = sorted(set(site.keywords) & _UNSUPPORTED[role])
    if bad:
        hint = " (serving signatures come from `model.export`)" if role == "save" else ""
        if "period" in bad:
            hint = " (use `save_freq=`, counted in batches)"
        use.problems.append(f"`{'=`, `'.join(bad)}=` is not supported by Keras 3{hint}")
    limit = _MAX_POSITIONAL.get(role, 1) + (1 if method is None and role == "save" else 0)
    if len(site.args) > limit or site.has_star_args:
        use.problems.append("pass the arguments after the path by keyword first")
    if role == "load_weights" and site.keywords.get("by_name") is not None:
        use.problems.append("`by_name=` only works with legacy `.h5` files in Keras 3")
    if role == "load_weights" and not isinstance(site.module.parent_of(site.node), ast.Expr):
        use.problems.append(
            "its result is used, and Keras 3's `load_weights` returns nothing (a TF "
            "checkpoint load returned a status: `.assert_consumed()`, `.expect_partial()`)"
        )
    return use
