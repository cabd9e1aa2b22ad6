"""Where a new import line goes: the sections and order isort and ruff's ``I001`` use.

A rewrite that appends ``import keras`` after the project's own imports reads like a
machine wrote it and fails the project's import-sorting check. The project's layout
(which top-level names are its own, the sorting options it sets) is plain data, read
from its config by ``kmigrate.project.import_settings``; this module only answers
"which section, and where in it".
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

FUTURE, STDLIB, THIRD_PARTY, FIRST_PARTY, LOCAL = range(5)

DEFAULT_LINE_LENGTH = 88  # black's and ruff's default


@dataclass(frozen=True)
class ImportLayout:
    """How a project sorts its imports (isort / ruff ``[lint.isort]`` settings)."""

    first_party: frozenset[str] = frozenset()  # top-level names of the project's own code
    third_party: frozenset[str] = frozenset()  # known-third-party: wins over a local folder
    force_sort_within_sections: bool = False  # `import x` and `from x import` interleaved
    line_length: int = DEFAULT_LINE_LENGTH

    def section(self, module: str, level: int = 0) -> int:
        """isort's section of an import of ``module`` (``level``: leading dots)."""
        if level:
            return LOCAL
        top = module.split(".")[0]
        if top == "__future__":
            return FUTURE
        if top in self.third_party:
            return THIRD_PARTY
        if top in self.first_party:
            return FIRST_PARTY
        if top in sys.stdlib_module_names:
            return STDLIB
        return THIRD_PARTY

    def sort_key(self, module: str, is_from: bool, name: str = "") -> tuple:
        """The order inside a section: plain imports first unless the project mixes
        them (``force-sort-within-sections``), then by module name, case-insensitively,
        then by the first name imported (:meth:`name_key`)."""
        kind = 0 if self.force_sort_within_sections else int(is_from)
        return (kind, module.lower(), module, self.name_key(name))

    @staticmethod
    def name_key(name: str) -> tuple:
        """isort's and ruff's ``order-by-type``: CONSTANTS, then Classes, then names."""
        kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
        return (kind, name.lower(), name)
