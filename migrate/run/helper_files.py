"""The helper modules an ``apply`` run writes beside the files it rewrote.

A rewrite that calls a helper (``EnsureHelper``: a Keras 2 function with no single
Keras 3 equivalent) needs the helper module of its folder to define it. The files of
one folder are rewritten in different workers, so the module is composed here, once
per folder, after every file: a change like any file's (``FixResult``), written,
diffed and counted with them. A new module has ``old_text == ""`` and no file yet.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from pathlib import Path

from kmigrate.engine.helper_module import compose_helper_module
from kmigrate.engine.model import EnsureHelper
from kmigrate.engine.run_data import FixResult, Job
from kmigrate.engine.sources import SourceError, read_source


def helper_module_changes(files: Sequence[FixResult], jobs: Sequence[Job]) -> list[FixResult]:
    """One change per helper module the rewrites of ``files`` need and that lacks a
    helper (created, or extended); a rewrite whose helper module cannot be read or
    parsed is withdrawn (its ``new_text`` dropped, ``error`` saying why)."""
    locations = {job.display: Path(job.path) for job in jobs}
    wanted: dict[tuple[str, str], list[EnsureHelper]] = {}
    users: dict[tuple[str, str], list[FixResult]] = {}
    places: dict[tuple[str, str], Path] = {}
    for report in files:
        for helper in report.helpers:
            display = posixpath.join(posixpath.dirname(report.path), f"{helper.module}.py")
            location = locations.get(report.path, Path(report.path)).parent
            key = (display, helper.module)
            places[key] = location / f"{helper.module}.py"
            wanted.setdefault(key, []).append(helper)
            if report not in users.setdefault(key, []):
                users[key].append(report)
    changes = []
    for key, helpers in sorted(wanted.items()):
        display, path = key[0], places[key]
        try:
            existing = read_source(path).text if path.exists() else None
            new_text = compose_helper_module(existing, helpers)
        except (OSError, SourceError, SyntaxError, UnicodeError) as error:
            for report in users[key]:
                report.new_text, report.fixed = None, 0
                report.error = (
                    f"its rewrite calls helpers of {display}, which cannot be extended "
                    f"({type(error).__name__}: {error}); the file is left untouched"
                )
            continue
        if new_text != (existing or ""):
            change = FixResult(display, new_text=new_text, old_text=existing or "")
            change.location = str(path)
            changes.append(change)
    return changes
