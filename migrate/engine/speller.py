"""Spelling qualified names the way the edited module imports them.

A rule's edit says ``keras.ops.mean``; the module may already import ``ops`` from
``keras``, or bind ``keras`` to something else: :class:`Speller` picks the spelling and
records the imports it needs, in the rules' import style (``ContextSpec.import_style``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from kmigrate.engine.model import EnsureImport
from kmigrate.engine.names import scope_bindings
from kmigrate.engine.spec import ImportStyle

_PLACEHOLDER = re.compile(r"\{name:([A-Za-z_][\w.]*)\}")


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

    @classmethod
    def for_text(cls, text: str, style: ImportStyle) -> Speller:
        return cls.for_tree(ast.parse(text), style)

    @classmethod
    def for_tree(cls, tree: ast.Module, style: ImportStyle) -> Speller:
        scope = scope_bindings(tree)
        return cls(dict(scope.imports), set(scope.imports) | scope.others, style)

    def _need(self, module: str, name: str | None = None) -> None:
        wanted = EnsureImport(module, name)
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
        for namespace in self.style.from_imports:
            parent, _, local = namespace.rpartition(".")
            if qualified.startswith(namespace + ".") and (
                self.bindings.get(local) == namespace or local not in self.taken
            ):
                self._add(local, namespace, EnsureImport(parent, local))
                return qualified[len(parent) + 1 :]
        # 3. Otherwise the full dotted name under `import <root>`.
        root = parts[0]
        bound = self.bindings.get(root)
        if (
            root not in self.taken
            or bound == root
            or any(bound == f"{p}.{root}" for p in self.style.superseded_parents)
        ):
            self._add(root, root, EnsureImport(root))
        return qualified

    def _add(self, local: str, target: str, wanted: EnsureImport) -> None:
        if local not in self.bindings:
            self.bindings[local] = target
            self.added.add(local)
        self.taken.add(local)
        self._need(wanted.module, wanted.name)

    def fill(self, text: str) -> str:
        """Replace ``{name:qualified}`` placeholders with spellings."""
        return _PLACEHOLDER.sub(lambda m: self.spell(m.group(1)), text)
