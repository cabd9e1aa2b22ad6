"""Spelling qualified names the way the edited module imports them.

A rule's edit says ``keras.ops.mean``; the module may already import ``ops`` from
``keras``, or bind ``keras`` to something else: :class:`Speller` picks the spelling and
records the imports it needs, in the rules' import style (``ContextSpec.import_style``).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kmigrate.engine.model import PLACEHOLDER, EditPlan, EnsureImport, ReplaceNode
from kmigrate.engine.names import ScopeBindings, dotted_parts, import_bindings, scope_bindings
from kmigrate.engine.project_entry import module_statements
from kmigrate.engine.spec import ImportStyle


class UnspellableNameError(ValueError):
    """The module binds the root of a qualified name to something else (``import
    tf_keras as keras``): writing ``keras.X`` there would name that, not Keras."""


@dataclass
class Speller:
    """Turns ``keras.ops.mean`` into what this module should write (``ops.mean``)
    and remembers which imports that spelling needs. The import style is the rules'
    (``ContextSpec.import_style``)."""

    bindings: dict[str, str]  # module-level local name -> qualified name
    taken: set[str]  # every module-level name, imported or not
    style: ImportStyle
    needed: list[EnsureImport] = field(default_factory=list)
    added: set[str] = field(default_factory=set)  # local names this edit introduces
    _first_names: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False)

    @classmethod
    def for_text(cls, text: str, style: ImportStyle) -> Speller:
        return cls.for_tree(ast.parse(text), style)

    @classmethod
    def for_tree(
        cls, tree: ast.Module, style: ImportStyle, plans: Iterable[EditPlan] = ()
    ) -> Speller:
        return cls.for_scope(scope_bindings(tree), tree, style, plans)

    @classmethod
    def for_scope(
        cls,
        scope: ScopeBindings,
        tree: ast.Module,
        style: ImportStyle,
        plans: Iterable[EditPlan] = (),
    ) -> Speller:
        """From the module's bindings (``scope``: its ``scope_bindings``): its imports,
        and the names it binds once to an imported dotted name (``keras = tf.keras``);
        then what the import statements that ``plans`` (made in the same edit) replace
        bind instead (:func:`rebound_imports`)."""
        bindings = {**assigned_aliases(tree, scope.imports), **scope.imports}
        bindings.update(rebound_imports(tree, plans))
        return cls(bindings, set(scope.imports) | scope.others, style)

    def _need(self, wanted: EnsureImport) -> None:
        if wanted not in self.needed:
            self.needed.append(wanted)

    def spell(self, qualified: str) -> str:
        parts = qualified.split(".")
        # 1. The module's own imports: `layers.Dense` after `from keras import layers`.
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            for local, target in self.bindings.items():
                if target == prefix and local not in self.added:
                    return ".".join([local, *parts[cut:]])
        # 2. Namespaces imported by name (`from keras import ops` then `ops.mean`).
        namespace = self._from_import(qualified, self.style.from_imports)
        if namespace:
            return self._spell_from_import(qualified, namespace)
        # 3. A module imported under its conventional alias, when that name is free.
        root = parts[0]
        refused = self.refused_import(root)
        if refused:
            raise UnspellableNameError(f"`{qualified}` cannot be written here: {refused}")
        alias = self._free_alias(root)
        if alias:
            self._add(alias, root, EnsureImport(root, asname=alias))
            return ".".join([alias, *parts[1:]])
        # 4. Otherwise the full dotted name under `import <root>`.
        why = self.conflict(root)
        namespace = self._from_import(qualified, self.style.from_imports_where_root_taken)
        if why and namespace:
            return self._spell_from_import(qualified, namespace)
        if why:
            raise UnspellableNameError(f"`{qualified}` cannot be written here: {why}")
        self._add(root, root, EnsureImport(root))
        return qualified

    def _from_import(self, qualified: str, namespaces: Iterable[str]) -> str:
        """The one of ``namespaces`` that ``qualified`` lies in and that can be imported
        by name here (its last part is free, or bound to it already), or ""."""
        for namespace in namespaces:
            local = namespace.rpartition(".")[2]
            if qualified.startswith(namespace + ".") and (
                self.bindings.get(local) == namespace or local not in self.taken
            ):
                return namespace
        return ""

    def _spell_from_import(self, qualified: str, namespace: str) -> str:
        parent, _, local = namespace.rpartition(".")
        self._add(local, namespace, EnsureImport(parent, local))
        return qualified[len(parent) + 1 :]

    def refused_import(self, root: str) -> str:
        """Why ``import <root>`` may not be added here ("" when it may): the style's
        ``only_where_imported`` modules are imported only by modules that import them
        already (a sub-package it names, ``tensorflow.keras``, does not count)."""
        for module, excluded in self.style.only_where_imported:
            if module != root:
                continue
            for target in self.bindings.values():
                inside = target == root or target.startswith(root + ".")
                if inside and not any(target == e or target.startswith(e + ".") for e in excluded):
                    return ""
            return f"this module does not import `{root}`, and kmigrate never adds that import"
        return ""

    def conflict(self, root: str) -> str:
        """Why ``import <root>`` cannot give the name ``root`` here ("" when it can): the
        module binds it to something else, which would shadow or be shadowed."""
        bound = self.bindings.get(root)
        if (
            root not in self.taken
            or bound == root
            or any(bound == f"{p}.{root}" for p in self.style.superseded_parents)
            or bound in self.style.superseded_modules
        ):
            return ""
        what = f"`{bound}`" if bound else "a value of its own"
        return f"this module binds `{root}` to {what}"

    def unspellable(self, qualified: str) -> str:
        """Why :meth:`spell` would refuse ``qualified`` ("" when it can spell it), without
        recording anything: scan asks, so that it promises only the fixes apply makes."""
        return self.first_name(qualified)[1]

    def first_name(self, qualified: str) -> tuple[str, str]:
        """(the module-level name :meth:`spell` would write ``qualified`` through, why it
        cannot: "" when it can), without recording anything."""
        found = self._first_names.get(qualified)
        if found is None:
            found = self._first_names[qualified] = self._first_name(qualified)
        return found

    def _first_name(self, qualified: str) -> tuple[str, str]:
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            for local, target in self.bindings.items():
                if target == prefix:
                    return local, ""
        namespace = self._from_import(qualified, self.style.from_imports)
        if namespace:
            return namespace.rpartition(".")[2], ""
        refused = self.refused_import(parts[0])
        if refused:
            return parts[0], refused
        alias = self._free_alias(parts[0])
        if alias:
            return alias, ""
        why = self.conflict(parts[0])
        namespace = self._from_import(qualified, self.style.from_imports_where_root_taken)
        if why and namespace:
            return namespace.rpartition(".")[2], ""
        return parts[0], why

    def _free_alias(self, root: str) -> str:
        """The style's alias of module ``root`` when no module-level name is it, or this
        edit binds it already ("" when there is none or it is taken: then the module is
        imported under its own name)."""
        alias = dict(self.style.module_aliases).get(root, "")
        free = alias not in self.taken or self.bindings.get(alias) == root
        return alias if alias and free else ""

    def _add(self, local: str, target: str, wanted: EnsureImport) -> None:
        self._first_names.clear()  # the answers change with the bindings
        if local not in self.bindings:
            self.bindings[local] = target
            self.added.add(local)
        self.taken.add(local)
        self._need(wanted)

    def fill(self, text: str) -> str:
        """Replace ``{name:qualified}`` placeholders with spellings."""
        return PLACEHOLDER.sub(lambda m: self.spell(m.group(1)), text)


def rebound_imports(tree: ast.Module, plans: Iterable[EditPlan]) -> dict[str, str]:
    """Names whose binding the edit's ``plans`` change: local name -> what the new
    import binds it to. Only for an import statement of the module's own body (not in
    an ``if`` or ``try``: on another path the name would be unbound) that a plan
    replaces by an import of the same name, and only for names no other statement of
    the module binds (``if ...: import tf_keras as keras / else: keras = tf.keras``
    stays as it is): ``import tf_keras as keras`` replaced by ``import keras`` lets the
    edit write ``keras.random.SeedGenerator``."""
    replaced = {
        (edit.span.line, edit.span.column): edit.text
        for plan in plans
        for edit in plan.edits
        if isinstance(edit, ReplaceNode) and edit.kind == "stmt"
    }
    if not replaced:
        return {}
    counts = module_binding_counts(tree)
    rebound: dict[str, str] = {}
    for stmt in tree.body:
        text = replaced.get((stmt.lineno, stmt.col_offset))
        if text is None or not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        try:
            new_body = ast.parse(text).body
        except SyntaxError:
            continue
        new = dict(
            binding
            for new_stmt in new_body
            if isinstance(new_stmt, (ast.Import, ast.ImportFrom))
            for binding in import_bindings(new_stmt)
        )
        for local, _ in import_bindings(stmt):
            if counts[local] == 1 and local in new:
                rebound[local] = new[local]
    return rebound


def module_binding_counts(tree: ast.Module) -> Counter[str]:
    """How many module-level statements (those in ``if``/``try``/``with`` blocks too)
    bind each name: a name bound once has one meaning wherever the module reads it."""
    counts: Counter[str] = Counter()
    for stmt in module_statements(tree.body):
        counts.update(_names_bound_by(stmt))
    return counts


def assigned_aliases(tree: ast.Module, imports: dict[str, str]) -> dict[str, str]:
    """Module-level names bound exactly once, by ``name = dotted.path`` whose root the
    module imports: name -> the qualified path (``keras = tf.keras`` gives
    ``tensorflow.keras``). A name bound in any other way as well is left out."""
    counts: Counter[str] = Counter()
    found: dict[str, str] = {}
    for stmt in module_statements(tree.body):
        counts.update(_names_bound_by(stmt))
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            parts = dotted_parts(stmt.value)
            if isinstance(target, ast.Name) and parts and parts[0] in imports:
                found[target.id] = ".".join([imports[parts[0]], *parts[1:]])
    return {name: path for name, path in found.items() if counts[name] == 1}


def _names_bound_by(stmt: ast.stmt) -> list[str]:
    """The names one module-level statement binds itself (not in its nested blocks)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
