"""A cold scan's pending project holds no file's bytes between the phases: it reads
them again, and takes them only as they were planned."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from kmigrate.project.pending_project import PendingProject
from kmigrate.project.project_files import content_digest, index_key


def test_pending_project_reads_bytes_again_only_as_planned(tmp_path: Path) -> None:
    """The bytes are not held from planning to the second phase; read again, they
    count only if they are the ones planned (a file edited meanwhile is analysed again,
    and nothing worked out from its old bytes is stored under its new ones)."""
    module = tmp_path / "m.py"
    module.write_bytes(b"import tensorflow as tf\n")
    key = index_key(module)
    project = SimpleNamespace(root=tmp_path, digests={key: content_digest(module.read_bytes())})
    pending = PendingProject(project, [], {key: module}, {key}, [], None)  # type: ignore[arg-type]
    assert pending.bytes_of(module) == b"import tensorflow as tf\n"
    assert pending.bytes_of(tmp_path / "other.py") is None  # not in the project
    module.write_bytes(b"import tensorflow as tf  # edited\n")
    assert pending.bytes_of(module) is None
    module.unlink()
    assert pending.bytes_of(module) is None


def test_a_released_pending_project_holds_no_index_entry(tmp_path: Path) -> None:
    """Once every job has its facts, the run's entries (saved by ``finish``) are let go
    of with the records: a 10k-file scan held them through the second phase."""
    from kmigrate.project.index_entries import IndexEntries

    entries = IndexEntries(None)
    entries.add("d" * 32, {"paths": []})
    project = SimpleNamespace(root=tmp_path, digests={})
    pending = PendingProject(project, [], {}, set(), [], entries)  # type: ignore[arg-type]
    facts = {"k": object()}
    pending.release(facts)  # type: ignore[arg-type]
    assert pending.entries is not entries and not pending.entries.used
    assert pending.entries.store is None and pending.records == [] and pending.facts == facts
