"""Where the literal part of a saved file's path is, and how to rewrite its suffix.

Shared by the KM4xx rules through ``_uses`` (a call's path) and ``PathUse.literal_edit``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from kmigrate.engine import CallSite, code_walk, scope_bindings
from kmigrate.rules.common.scopes import single_assignment

# Suffixes that name a legacy format and are replaced (not kept) by the new one.
_MODEL_LEGACY_SUFFIXES = (".hdf5", ".h5", ".tf")
# Trailing comments that only named the legacy format of a path whose suffix the fix
# rewrites (by PathInfo.legacy_kind): beside `model.keras` they would be false.
STALE_FORMAT_COMMENTS: dict[str, tuple[str, ...]] = {
    "h5": ("HDF5", "h5", "HDF5 format", "h5 format", "HDF5 file", "h5 file", "legacy HDF5"),
    "bare": ("SavedModel", "SavedModel format", "TF SavedModel", "SavedModel folder"),
}
_WEIGHTS_LEGACY_SUFFIXES = (".hdf5", ".h5", ".ckpt", ".tf", ".weights")
MODEL_SUFFIX = ".keras"
WEIGHTS_SUFFIX = ".weights.h5"
_PRINTF_TAIL = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]$")


@dataclass(frozen=True)
class PathInfo:
    """What is statically known about a path expression.

    ``tail`` is the literal text the path ends with and ``literal`` the string node
    (``Constant`` or f-string) holding it; ``complete`` says whether the tail holds the
    whole last path component (so "no suffix" really means no suffix). ``key``
    identifies the path for pairing saves with loads. ``folder`` is the source text
    of the folder the path points into when that folder is spelled out literally in
    the code (``os.path.join(out, "ckpt", "w")`` -> ``os.path.join(out, "ckpt")``).
    """

    tail: str
    complete: bool
    literal: ast.expr
    key: tuple
    folder: str | None = None
    via_variable: str | None = None

    @property
    def component(self) -> str:
        return re.split(r"[/\\]", self.tail)[-1]

    def legacy_kind(self) -> str | None:
        """``"keras"``, ``"weights"`` (Keras 3 formats), ``"h5"``, ``"bare"`` (no .h5/.keras
        suffix: SavedModel folder or TF checkpoint) or None when unknown."""
        name = self.component
        if name.endswith(WEIGHTS_SUFFIX):
            return "weights"
        if name.endswith(MODEL_SUFFIX):
            return "keras"
        if name.endswith((".h5", ".hdf5")):
            return "h5"
        if self.complete and name:
            return "bare"
        return None

    def new_tail(self, target: str) -> str:
        """The tail after moving the path to ``target`` (``"model"`` or ``"weights"``)."""
        legacy = _MODEL_LEGACY_SUFFIXES if target == "model" else _WEIGHTS_LEGACY_SUFFIXES
        suffix = MODEL_SUFFIX if target == "model" else WEIGHTS_SUFFIX
        for old in legacy:
            if self.tail.endswith(old):
                return self.tail[: -len(old)] + suffix
        return self.tail + suffix


def _string_body_end(source: str) -> int | None:
    """Index of the closing quote(s) of a (possibly prefixed/f-) string literal's source."""
    for quote in ('"""', "'''", '"', "'"):
        if source.endswith(quote) and len(source) >= 2 * len(quote):
            return len(source) - len(quote)
    return None


def rewrite_literal_tail(source: str, old_tail: str, new_tail: str) -> str | None:
    """Source of a string literal whose value ends with ``old_tail``, ending with
    ``new_tail`` instead; None when the source does not spell the tail verbatim
    (escapes, implicit concatenation across the boundary)."""
    end = _string_body_end(source)
    if end is None:
        return None
    common = 0
    while common < min(len(old_tail), len(new_tail)) and old_tail[common] == new_tail[common]:
        common += 1
    old_rest, new_rest = old_tail[common:], new_tail[common:]
    body = source[:end]
    if not body.endswith(old_tail) or "\\" in old_tail or "{" in new_rest:
        return None
    return body[: len(body) - len(old_rest)] + new_rest + source[end:]


def _cut_literal_folder(source: str, tail: str) -> str | None:
    """Source of the same literal without its last path component (``"a/b"`` -> ``"a"``)."""
    end = _string_body_end(source)
    cut = tail.rfind("/")
    if end is None or cut <= 0 or not source[:end].endswith(tail):
        return None
    drop = len(tail) - cut
    return source[: end - drop] + source[end:]


class PathAnalyzer:
    """Reads path expressions of one module; follows a variable to its single assignment."""

    def __init__(self, site: CallSite) -> None:
        self.site = site
        self.module = site.module
        self.function = site.scope.function_node

    def analyze(self, node: ast.expr | None, depth: int = 0) -> PathInfo | None:
        if node is None or depth > 3:
            return None
        if isinstance(node, ast.Name):
            return self._variable(node, depth)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            folder = _cut_literal_folder(self.module.node_text(node), node.value)
            return PathInfo(node.value, True, node, ("value", node.value), folder)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.BinOp):
            return self._binop(node, depth)
        return None

    # -- pieces ----------------------------------------------------------------
    def _key(self, node: ast.expr) -> tuple:
        names = {n.id for n in code_walk(node) if n.__class__ is ast.Name}  # type: ignore[attr-defined]
        scope = 0
        if self.function is not None:
            function = self.function
            local = self.module.memo(("KM4-bindings", function), lambda: scope_bindings(function))
            if names & (set(local.imports) | local.others):
                scope = id(self.function)
        return ("expr", scope, ast.dump(node, annotate_fields=False))

    def _fstring(self, node: ast.JoinedStr) -> PathInfo | None:
        if not node.values:
            return None
        last = node.values[-1]
        if not (isinstance(last, ast.Constant) and isinstance(last.value, str)):
            return None
        complete = "/" in last.value or len(node.values) == 1
        folder = None
        head = last.value.rsplit("/", 1)[0] if "/" in last.value else ""
        if head.strip("/"):
            folder = _cut_literal_folder(self.module.node_text(node), last.value)
        return PathInfo(last.value, complete, node, self._key(node), folder)

    def _call(self, node: ast.Call, depth: int) -> PathInfo | None:
        symbol = self.module.resolve(node.func) or ""
        if symbol == "os.path.join" and node.args and not node.keywords:
            last = node.args[-1]
            if any(isinstance(a, ast.Starred) for a in node.args):
                return None
            inner = self.analyze(last, depth + 1) if isinstance(last, ast.Constant) else None
            if inner is None:
                return None
            folder = None
            if len(node.args) >= 3 and isinstance(node.args[-2], ast.Constant):
                func = self.module.node_text(node.func)
                parts = ", ".join(self.module.node_text(a) for a in node.args[:-1])
                folder = f"{func}({parts})"
            elif inner.folder is not None:
                func = self.module.node_text(node.func)
                parts = [self.module.node_text(a) for a in node.args[:-1]] + [inner.folder]
                folder = f"{func}({', '.join(parts)})"
            return PathInfo(inner.tail, True, inner.literal, self._key(node), folder)
        if symbol in ("str", "os.fspath") or (
            isinstance(node.func, ast.Name) and node.func.id == "str" and not symbol
        ):
            if len(node.args) == 1 and not node.keywords:
                inner = self.analyze(node.args[0], depth + 1)
                if inner is not None:
                    return PathInfo(
                        inner.tail, inner.complete, inner.literal, self._key(node), inner.folder
                    )
            return None
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "format"
            and isinstance(func.value, ast.Constant)
            and isinstance(func.value.value, str)
        ):
            return self._format_literal(func.value, node)
        return None

    def _format_literal(self, literal: ast.Constant, whole: ast.expr) -> PathInfo | None:
        text = literal.value
        if text.endswith("}") or _PRINTF_TAIL.search(text):
            return None  # the end of the path is a substituted value
        tail = text.rsplit("/", 1)[-1]
        complete = "/" in text
        return PathInfo("/" + tail if complete else tail, complete, literal, self._key(whole))

    def _binop(self, node: ast.BinOp, depth: int) -> PathInfo | None:
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
            if isinstance(node.left.value, str):
                return self._format_literal(node.left, node)
            return None
        right = node.right
        if not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
            return None
        if isinstance(node.op, ast.Div):  # pathlib: Path(d) / "m.h5"
            folder = None
            left = node.left
            if (
                isinstance(left, ast.BinOp)
                and isinstance(left.op, ast.Div)
                and isinstance(left.right, ast.Constant)
            ):
                folder = self.module.node_text(left)
            return PathInfo(right.value, True, right, self._key(node), folder)
        if isinstance(node.op, ast.Add):  # out + "/m.h5"
            complete = "/" in right.value
            return PathInfo(right.value, complete, right, self._key(node))
        return None

    def _variable(self, node: ast.Name, depth: int) -> PathInfo | None:
        value = single_assignment(self.function or self.module.tree, node.id)
        if value is None:
            return None
        inner = self.analyze(value, depth + 1)
        if inner is None:
            return None
        folder = f"os.path.dirname({node.id})" if inner.folder else None
        key = inner.key if inner.key[0] == "value" else ("var", id(value))
        return PathInfo(inner.tail, inner.complete, inner.literal, key, folder, node.id)
