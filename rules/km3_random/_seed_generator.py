"""Rewriting a draw inside a layer: who owns the ``SeedGenerator`` it uses (an existing
one, or one the rewrite adds to ``__init__``), and the finding for the draw.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from kmigrate.engine import CallSite, ClassEdit, EditPlan, code_walk, statements
from kmigrate.rules.base import Report

if TYPE_CHECKING:
    from kmigrate.engine import ModuleInfo
from kmigrate.rules.km3_random._rewrite import (
    NotExactError,
    bind_arguments,
    plan_rewrite,
    seed_problem,
    short_symbol,
)
from kmigrate.rules.km3_random._table import (
    GENERATOR_ATTR,
    NON_LAYER_FAMILIES,
    SEED_GENERATOR,
    SEEDED,
    RandomMapping,
)

_NESTED_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _self_attribute_assignments(class_node: ast.ClassDef) -> list[tuple[str, ast.expr, str]]:
    """(attribute, value, method) for every ``self.<attribute> = value`` in the class."""
    found = []
    for method in class_node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in statements(method):
            if node.__class__ is not ast.Assign:
                continue
            for target in node.targets:  # type: ignore[attr-defined]
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    found.append((target.attr, node.value, method.name))  # type: ignore[attr-defined]
    return sorted(found, key=lambda item: (item[1].lineno, item[1].col_offset))


def _assignments_of(site: CallSite, class_node: ast.ClassDef) -> list[tuple[str, ast.expr, str]]:
    """:func:`_self_attribute_assignments`, once per class and module."""
    return site.module.memo(
        ("KM3-self-assignments", class_node), lambda: _self_attribute_assignments(class_node)
    )


def _class_chain(site: CallSite) -> list[ast.ClassDef]:
    """The enclosing class, then its base classes defined in the same module."""
    classes = {n.name: n for n in site.module.tree.body if isinstance(n, ast.ClassDef)}
    chain = [site.scope.class_node]
    for cls in chain:  # grows while walking: breadth-first over local bases
        for base in cls.bases:
            local = classes.get(base.id) if isinstance(base, ast.Name) else None
            if local is not None and local not in chain:
                chain.append(local)
    return chain


def _existing_generator(site: CallSite) -> str | None:
    """``x`` when the class (or a base in this module) does
    ``self.x = keras.random.SeedGenerator(...)``; ``__init__`` assignments first."""
    for cls in _class_chain(site):
        found = [
            (method != "__init__", attribute)
            for attribute, value, method in _assignments_of(site, cls)
            if isinstance(value, ast.Call) and site.module.resolve(value.func) in SEED_GENERATOR
        ]
        if found:
            return min(found)[1]
    return None


def _inside_lambda(site: CallSite) -> bool:
    """Whether the draw sits in a lambda inside its function."""
    function = site.scope.function_node
    parent = site.module.parent_of(site.node)
    while parent is not None and parent is not function:
        if parent.__class__ is ast.Lambda:
            return True
        parent = site.module.parent_of(parent)
    return False


def called_directly_in(module: ModuleInfo, nested: ast.AST | None) -> ast.FunctionDef | None:
    """The method a helper defined in its body runs in, when the method only ever calls
    it right there (``return helper() if training else x``): never passes it on (to
    ``tf.cond``, ``K.in_train_phase``, ``tf.map_fn``, which trace it on their own) nor
    calls it from a lambda or another nested function. None otherwise."""
    if not isinstance(nested, ast.FunctionDef) or nested.decorator_list:
        return None
    outer = module.parent_of(nested)
    if not isinstance(outer, ast.FunctionDef) or nested not in outer.body:
        return None
    uses = [
        node
        for node in module.nodes_in(outer, ast.Name)
        if node.id == nested.name and node.ctx.__class__ is ast.Load  # type: ignore[attr-defined]
    ]
    for use in uses:
        parent = module.parent_of(use)
        if not (isinstance(parent, ast.Call) and parent.func is use):
            return None  # passed on as a value
        while parent is not outer:
            if parent is None or parent.__class__ in _NESTED_SCOPES:
                return None  # called from a lambda or a nested function
            parent = module.parent_of(parent)
    return outer if uses else None


def _super_init_line(function: ast.AST) -> int | None:
    """The first line calling an ``__init__`` (``super().__init__(...)``) in ``function``."""
    lines = [
        node.lineno  # type: ignore[attr-defined]
        for node in code_walk(function)
        if node.__class__ is ast.Call
        and node.func.__class__ is ast.Attribute  # type: ignore[attr-defined]
        and node.func.attr == "__init__"  # type: ignore[attr-defined]
    ]
    return min(lines, default=None)


def non_layer_base(bases: tuple[str, ...]) -> str | None:
    for base in bases:
        path = base
        for namespace in ("tf.keras.", "tf_keras.", "keras."):
            if base.startswith(namespace):
                path = base[len(namespace) :]
        if path.startswith(NON_LAYER_FAMILIES) or base.startswith(("tf.Module", "tf.experimental")):
            return base
    return None


def _class_seed_default(site: CallSite) -> str:
    """The first int literal seed among the class's random calls, else ``None``.

    Every random call of one class must ask for the same ``ClassEdit`` (the editor
    merges identical ones), so the default is a property of the class, not the call.
    """
    return site.module.memo(
        ("KM3-seed-default", site.scope.class_node),
        lambda: _seed_default(site.module, site.scope.class_node),
    )


def _seed_default(module: ModuleInfo, class_node: ast.ClassDef) -> str:
    seeds = []
    for node in module.nodes_in(class_node, ast.Call):
        mapping = SEEDED.get(module.resolve(node.func) or "")
        if mapping is None or "seed" not in mapping.params:
            continue
        index = mapping.params.index("seed")
        seed = next((k.value for k in node.keywords if k.arg == "seed"), None)
        if seed is None and index < len(node.args):
            seed = node.args[index]
        literal = module.literal(seed) if seed is not None else None
        if isinstance(literal, int) and not isinstance(literal, bool):
            seeds.append((node.lineno, node.col_offset, literal))
    return str(min(seeds)[2]) if seeds else "None"


def generator_for(site: CallSite) -> tuple[str, ClassEdit | None]:
    """The ``seed=`` expression for a draw in model code, and the class edit it needs."""
    scope = site.scope
    method = scope.function_name or ""
    if scope.class_node is None:
        where = f"the function `{method}`" if method else "a lambda or module-level code"
        raise NotExactError(
            f"it is in {where}, outside any layer, so nothing owns a keras.random.SeedGenerator: "
            "move the draw into a layer's `call` (or use a built-in noise layer such as "
            "keras.layers.GaussianNoise), or give the function a `seed_generator` argument "
            "and pass seed=seed_generator"
        )
    if not method:
        raise NotExactError(
            "it runs in the class body, where there is no `self` to own a generator"
        )
    function = scope.function_node
    if "." in method or _inside_lambda(site):
        owner = None if _inside_lambda(site) else called_directly_in(site.module, function)
        if owner is None:
            raise NotExactError(
                f"it is in a function nested in `{method.split('.')[0]}`; such functions are "
                "often traced on their own (tf.map_fn, tf.while_loop, tf.cond), where a "
                "SeedGenerator's state update is not portable: draw the numbers in the method "
                "itself with seed=self.seed_generator and pass them in"
            )
        function, method = owner, owner.name  # it runs as part of the method itself
    args = getattr(function, "args", None)
    decorators = {d.id for d in getattr(function, "decorator_list", ()) if isinstance(d, ast.Name)}
    if not args or not args.args or args.args[0].arg != "self" or "staticmethod" in decorators:
        raise NotExactError(f"`{method}` has no `self` to hold a keras.random.SeedGenerator")
    base = non_layer_base(scope.class_bases)
    if base is not None:
        raise NotExactError(
            f"`{scope.class_name}` derives from `{base}`, not from a Layer or Model: only layers "
            "track a SeedGenerator's state; draw the numbers in a layer instead"
        )
    existing = _existing_generator(site)
    if existing is not None:
        return f"self.{existing}", None
    assignments = _assignments_of(site, scope.class_node)
    if any(attribute == GENERATOR_ATTR for attribute, _, _ in assignments):
        raise NotExactError(
            f"`self.{GENERATOR_ATTR}` already holds something other than a "
            "keras.random.SeedGenerator"
        )
    for attribute, value, _ in assignments:
        if attribute == "seed" and not (isinstance(value, ast.Name) and value.id == "seed"):
            raise NotExactError(
                f"`self.seed = {site.text(value)}` is not the `seed` argument of __init__, so "
                "the layer's seed cannot be round-tripped through get_config automatically"
            )
    if method == "__init__":
        line = _super_init_line(function)
        if line is None or line > site.node.lineno:
            raise NotExactError(
                "it runs in __init__ before super().__init__(), when the layer cannot hold a "
                "SeedGenerator yet: move the draw after super().__init__()"
            )
    edit = ClassEdit(
        scope.class_span,
        init_params=(("seed", _class_seed_default(site)),),
        init_statements=(
            "self.seed = seed",
            f"self.{GENERATOR_ATTR} = {{name:keras.random.SeedGenerator}}(seed)",
        ),
        config_items=(("seed", "self.seed"),),
    )
    return f"self.{GENERATOR_ATTR}", edit


def _layer_plan(site: CallSite, mapping: RandomMapping) -> tuple[EditPlan, str]:
    """The plan for a draw in model code and the generator it uses; raises NotExactError."""
    seed_expr, class_edit = generator_for(site)
    if "seed" in mapping.params:
        problem = seed_problem(site, bind_arguments(site, mapping.params).get("seed"))
        if problem:
            raise NotExactError(problem)
    call_edit = plan_rewrite(site, mapping, seed_expr)
    edits = (call_edit,) if class_edit is None else (call_edit, class_edit)
    return EditPlan(edits, f"use {mapping.target} with seed={seed_expr}"), seed_expr


def layer_report(site: CallSite, mapping: RandomMapping, why: str) -> Report:
    """The finding for a draw in model code: fixable, or manual with the reason."""
    try:
        plan, seed_expr = _layer_plan(site, mapping)
    except NotExactError as manual:
        return Report(
            site,
            f"`{site.symbol}` {why} and was not rewritten: {manual}",
        )
    if mapping.special == "shuffle":
        instead = f"ops.take(x, ops.argsort(keras.random.uniform(..., seed={seed_expr})), axis=0)"
    else:
        instead = f"keras.{short_symbol(mapping.target)}(..., seed={seed_expr})"
    return Report(
        site,
        f"`{site.symbol}` {why}: use `{instead}`, with a keras.random.SeedGenerator owned by "
        f"`{site.scope.class_name}`",
        fix=plan,
    )
