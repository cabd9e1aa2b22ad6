"""KM519: a custom object registered under the name of a Keras built-in.

Keras 2 looked strings such as ``activation="gelu"`` up in the custom objects first, so
``get_custom_objects()["gelu"] = my_gelu`` replaced the built-in everywhere. Keras 3's
``activations.get`` and ``losses.get`` look in their own table only: the same string now
means Keras's function, and the numbers change without an error.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from kmigrate.engine import EditPlan, ModuleInfo, ReplaceNode, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.keras2_classes import module_site
from kmigrate.rules.common.keras_api import keras3_api

# Where a string names an activation or a loss, and which table Keras 3 reads it from.
_STRING_KEYWORDS = {"activation": "activations", "recurrent_activation": "activations"}
_STRING_FIRST_ARG = {"Activation": "activations"}
_LOSS_KEYWORD = "loss"
# Keras 3 loss aliases that are not public names of `keras.losses`.
_LOSS_ALIASES = frozenset({"mse", "mae", "mape", "msle", "kld", "logcosh"})


def _builtin(table: str, name: str) -> bool:
    if table == "losses" and name in _LOSS_ALIASES:
        return True
    return name.islower() and f"keras.{table}.{name}" in keras3_api()


_CUSTOM_OBJECTS = "get_custom_objects"


def _is_custom_objects(module: ModuleInfo, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (module.resolve(node.func) or "").endswith(
        "." + _CUSTOM_OBJECTS
    )


def _registrations(module: ModuleInfo) -> Iterator[tuple[ast.AST, str, ast.expr]]:
    """(node, name, value) of ``get_custom_objects()[name] = value`` and ``.update({...})``."""
    if _CUSTOM_OBJECTS not in module.text and not any(
        q.endswith(_CUSTOM_OBJECTS) for q in module.module_scope.imports.values()
    ):
        return  # never named here, nor bound to a name through another module
    for node in module.nodes(ast.Assign, ast.Call):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if (
                isinstance(target, ast.Subscript)
                and _is_custom_objects(module, target.value)
                and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str)
            ):
                yield node, target.slice.value, node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "update"
            and _is_custom_objects(module, node.func.value)
            and node.args
            and isinstance(node.args[0], ast.Dict)
        ):
            for key, value in zip(node.args[0].keys, node.args[0].values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    yield node, key.value, value


def _string_uses(module: ModuleInfo) -> Iterator[tuple[ast.Constant, str]]:
    """String constants where Keras reads an activation or loss name, with the table."""
    for node in module.nodes(ast.Call):
        for keyword in node.keywords:
            table = _STRING_KEYWORDS.get(keyword.arg or "")
            if keyword.arg == _LOSS_KEYWORD:
                table = "losses"
            if table and isinstance(keyword.value, ast.Constant):
                yield keyword.value, table
        leaf = (module.resolve(node.func) or "").rpartition(".")[2]
        table = _STRING_FIRST_ARG.get(leaf)
        if table and node.args and isinstance(node.args[0], ast.Constant):
            yield node.args[0], table


def _defined_once_before(module: ModuleInfo, name: str, line: int) -> bool:
    """Whether ``name`` is bound once in the whole module, at module level, before ``line``:
    then writing ``name`` at ``line`` means that object."""
    lines = []
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Name, ast.arg, ast.alias)
    for node in module.nodes(*kinds):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines += [node.lineno] if node.name == name else []
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            lines += [node.lineno] if node.id == name else []
        elif isinstance(node, ast.arg) and node.arg == name:
            return False
        elif isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            lines.append(getattr(node, "lineno", 0))
    top = {getattr(s, "lineno", 0) for s in module.tree.body}
    return (
        len(lines) == 1
        and lines[0] < line
        and any(first <= lines[0] for first in top)
        and name in module.bound_names()
    )


class CustomObjectShadowsBuiltin(Rule):
    id = "KM519"
    name = "custom-object-shadows-builtin"
    summary = "A custom object registered under a built-in name (`gelu`, `mse`) used as a string."
    rationale = (
        "Keras 2 resolved `activation='gelu'` through `get_custom_objects()` first, so a "
        "function registered as `gelu` replaced the built-in. Keras 3 reads activation and "
        "loss strings from its own table: the string silently means the built-in again, "
        "and the model computes something else."
    )
    fix_safety = (
        "Exact where the string is used in the same module and the registered function is "
        "a module-level name there: the string becomes that name, so Keras 3 gets the "
        "function object itself. Strings elsewhere (configs, other files) are reported."
    )
    severity = Severity.ERROR
    examples = [
        Flagged(
            """
            import keras

            def gelu(x):
                return 0.5 * x * (1.0 + keras.ops.tanh(0.8 * x))

            keras.utils.get_custom_objects()["gelu"] = gelu
            dense = keras.layers.Dense(4, activation="gelu")
            """,
            """
            import keras

            def gelu(x):
                return 0.5 * x * (1.0 + keras.ops.tanh(0.8 * x))

            keras.utils.get_custom_objects()["gelu"] = gelu
            dense = keras.layers.Dense(4, activation=gelu)
            """,
        ),
        Flagged(
            """
            from keras.utils import get_custom_objects
            from mypkg import swish

            get_custom_objects().update({"swish": swish})
            """
        ),
        Clean(
            """
            import keras

            def my_gelu(x):
                return x

            keras.utils.get_custom_objects()["my_gelu"] = my_gelu
            """
        ),
    ]

    def check_module(self, module: ModuleInfo) -> Iterable[Report]:
        shadowing: dict[str, ast.expr] = {}
        for node, name, value in _registrations(module):
            tables = [t for t in ("activations", "losses") if _builtin(t, name)]
            if not tables:
                continue
            shadowing[name] = value
            yield Report(
                module_site(module, node),
                f"`{name}` is registered as a custom object, but `{name}` is also a Keras 3 "
                f"built-in ({' and '.join(f'keras.{t}.{name}' for t in tables)}): Keras 3 "
                f"reads the string `'{name}'` from its own table, so every "
                f"`activation='{name}'` / `loss='{name}'` now gets the built-in; pass the "
                "function object instead of the string",
                span=module.span_of(node),
                symbol=name,
            )
        if not shadowing:
            return
        for constant, table in _string_uses(module):
            name = constant.value
            if not isinstance(name, str) or name not in shadowing or not _builtin(table, name):
                continue
            value = shadowing[name]
            site = module_site(module, constant)
            local = value.id if isinstance(value, ast.Name) else None
            if local is None or not _defined_once_before(module, local, constant.lineno):
                yield Report(
                    site,
                    f"`'{name}'` means Keras 3's built-in `{name}` here, not the function "
                    f"registered under that name: pass `{module.node_text(value)}` itself",
                    symbol=name,
                )
                continue
            yield Report(
                site,
                f"`'{name}'` means Keras 3's built-in `{name}` here, not the registered "
                f"`{local}`: pass `{local}`",
                fix=EditPlan((ReplaceNode(site.span, local),), f"pass {local}"),
                symbol=name,
            )
