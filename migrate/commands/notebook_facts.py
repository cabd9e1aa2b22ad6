"""What the project says about a notebook.

A notebook's layers derive from the project's base layers and call its helpers like
any module does (``from mypkg.layers import BaseLayer`` in a cell). Its code cells,
joined as the analysis joins them, are read as one more module of the project: its
names are resolved through the project's modules, and its functions are model code
when its own layers reach them. Nothing can import a notebook, so it changes nothing
the project's modules are told (their facts are those of the project without it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from kmigrate.engine.project_index import (
    ModuleFacts,
    ModuleRecord,
    ProjectFacts,
    ProjectIndex,
    build_entry,
)


def notebook_entry(path: Path) -> dict | None:
    """The index entry of the notebook's code cells; None when it is not a readable
    Python notebook (its analysis says why)."""
    from kmigrate.commands.notebook import NotebookError, load_notebook
    from kmigrate.engine.sources import SourceError, decode_source, parse_or_none, read_bytes
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    try:
        notebook = load_notebook(decode_source(read_bytes(str(path))).text)
    except (SourceError, NotebookError):
        return None
    tree = parse_or_none(notebook.module_text) if notebook is not None else None
    if tree is None:
        return None
    try:
        return build_entry(tree, CONTEXT_SPEC)
    except RecursionError:
        return None


def notebook_facts(
    record: ModuleRecord,
    records: Sequence[ModuleRecord],
    project: ProjectFacts,
    may_patch: Callable[[ModuleRecord], bool],
) -> ModuleFacts:
    """The facts of the notebook ``record`` (no module names: nothing imports it) in the
    project of ``records``, whose facts are ``project``. ``may_patch``: whether a record
    can replace TF/Keras functions (so that only those entries are read)."""
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    ordered = sorted([*records, record], key=lambda r: r.key)
    patching = [r for r in ordered if r is record or may_patch(r)]
    index = ProjectIndex(ordered, CONTEXT_SPEC, patching)
    own = (record.shown or record.key, record.entry["paths"])
    files = _WithOne(project.files, record.key, own)
    return ProjectFacts({record.key: index.local(record)}, files, index.patched_symbols())[
        record.key
    ]


def notebook_record(path: Path, root: Path, package: str) -> ModuleRecord | None:
    """The notebook as a record of the project rooted at ``root``: no module names."""
    from kmigrate.commands.project_scan import record_layout

    entry = notebook_entry(path)
    if entry is None:
        return None
    return ModuleRecord(entry=entry, **{**record_layout(path, root, package), "names": ()})


class _WithOne(Mapping):
    """``base`` and one more item."""

    def __init__(self, base: Mapping, key: str, value: object) -> None:
        self.base = base
        self.key = key
        self.value = value

    def __getitem__(self, key: str):
        return self.value if key == self.key else self.base[key]

    def __iter__(self) -> Iterator[str]:
        yield from self.base
        if self.key not in self.base:
            yield self.key

    def __len__(self) -> int:
        return len(self.base) + (self.key not in self.base)
