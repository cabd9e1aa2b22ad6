"""What several KM5xx rules share: optimizer tables, keyword order, Keras class lookup."""

from __future__ import annotations

import ast

from kmigrate.engine import CallSite, Context, Node, Scope
from kmigrate.rules.common.namespaces import in_keras_namespaces
from kmigrate.rules.context_spec import CONTEXT_SPEC


def keywords_in_order(site: CallSite) -> list[str]:
    return [k.arg for k in site.node.keywords if k.arg is not None]  # type: ignore[attr-defined]


OPTIMIZERS = (
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Ftrl",
    "Lion",
    "Nadam",
    "RMSprop",
    "SGD",
)
# tf_keras/src/optimizers/legacy/*.py, positional order (without **kwargs).
LEGACY_OPTIMIZERS: dict[str, tuple[str, ...]] = {
    "Adadelta": ("learning_rate", "rho", "epsilon", "name"),
    "Adagrad": ("learning_rate", "initial_accumulator_value", "epsilon", "name"),
    "Adam": ("learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad", "name"),
    "Adamax": ("learning_rate", "beta_1", "beta_2", "epsilon", "name"),
    "Ftrl": (
        "learning_rate",
        "learning_rate_power",
        "initial_accumulator_value",
        "l1_regularization_strength",
        "l2_regularization_strength",
        "name",
        "l2_shrinkage_regularization_strength",
        "beta",
    ),
    "Nadam": ("learning_rate", "beta_1", "beta_2", "epsilon", "name"),
    "RMSprop": ("learning_rate", "rho", "momentum", "epsilon", "centered", "name"),
    "SGD": ("learning_rate", "momentum", "nesterov", "name"),
}
# keras/src/optimizers/*.py: how many leading positional parameters match the legacy
# ones exactly (after that Keras 3 puts `weight_decay`, legacy puts `name`).
KERAS3_SHARED_PREFIX = {
    "Adadelta": 3,
    "Adagrad": 3,
    "Adam": 5,
    "Adamax": 4,
    "Ftrl": 5,
    "Nadam": 4,
    "RMSprop": 5,
    "SGD": 3,
}
LEGACY_KWARGS = frozenset({"clipnorm", "clipvalue", "global_clipnorm", "lr", "decay"})
CURRENT_OPTIMIZERS = in_keras_namespaces(
    *(f"optimizers.{n}" for n in OPTIMIZERS),
    *(f"optimizers.experimental.{n}" for n in OPTIMIZERS),
)
LEGACY_OPTIMIZER_SYMBOLS = in_keras_namespaces(
    *(f"optimizers.legacy.{n}" for n in LEGACY_OPTIMIZERS)
)


def optimizer_name(symbol: str) -> str:
    return symbol.rsplit(".", 1)[-1]


def decay_suggestion(site: CallSite) -> str:
    decay = site.keywords["decay"]
    lr = site.arg(0, "learning_rate") or site.keywords.get("lr")
    lr_text = site.text(lr) if lr is not None else "0.001"
    return (
        "learning_rate=keras.optimizers.schedules.InverseTimeDecay("
        f"{lr_text}, decay_steps=1, decay_rate={site.text(decay)})"
    )


def zero_decay(site: CallSite) -> bool:
    return site.literal(None, "decay") in (0, 0.0)


def _is_keras_class(
    node: ast.ClassDef, site: Node, local: set[str], through_project: bool = True
) -> bool:
    if through_project and node.name in site.module.project_model_classes():
        return True  # a base elsewhere in the project, or on one `model-bases` names
    for base in node.bases:
        symbol = site.module.resolve(base) or ""
        if symbol.startswith(CONTEXT_SPEC.model_base_prefixes):
            return True
        tail = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if tail in local or (not symbol and tail.endswith(CONTEXT_SPEC.model_name_suffixes)):
            return True
    return False


def module_site(module, node: ast.AST) -> Node:
    """A site for a node found by a module-level pass (its context is not tracked)."""
    return Node(
        node=node, span=module.span_of(node), context=Context.OTHER, scope=Scope(), module=module
    )


def keras_classes(module, through_project: bool = True) -> list[tuple[Node, ast.ClassDef]]:
    """The module-level classes deriving from a Keras layer, model, loss or metric (also
    through a local base), each with a site to report on. ``through_project``: also
    those the project's resolution found to be (a base in another module; a base from
    a package the config's ``model-bases`` names); a rule that needs to see what the
    bases define leaves them out."""
    classes = [c for c in module.tree.body if isinstance(c, ast.ClassDef)]
    local = {c.name for c in classes}
    found = []
    for node in classes:
        site = module_site(module, node)
        if _is_keras_class(node, site, local - {node.name}, through_project):
            found.append((site, node))
    return found


def class_methods(node: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {s.name: s for s in node.body if isinstance(s, ast.FunctionDef)}
