"""A cold scan's reports wait on disk between its phases (``run.spill``; issue 34, peak
memory at 10k files): what is read back must be what was spilled, byte for byte, and
the spill must leave nothing behind, whether the run ends well or not."""

from __future__ import annotations

import gc
import json
import os
import pickle
import shutil
import tempfile
from pathlib import Path

import pytest

from kmigrate.engine.model import Context, Finding, Severity, Span
from kmigrate.engine.run_data import FileReport, PackedFindings, RunResult
from kmigrate.project.config import load_config
from kmigrate.report import render
from kmigrate.run import report_codec, runner, spill
from kmigrate.run.runner import plan_jobs, run_jobs, select_ids
from kmigrate.store.cache import RESULTS, ResultCache

ROOT = Path(__file__).resolve().parents[2]
# a message with text that is not ASCII, and a lone surrogate (a file name's)
ODD = "`tf.reduce_mean` é \u2192 \udcff"


def _findings(path: str, message: str = ODD) -> list[Finding]:
    return [
        Finding(
            "KM201",
            Severity.WARNING,
            f"{message} {n}",
            path,
            Span(n + 1, 4, n + 1, 20),
            Context.MODEL,
            "tf.reduce_mean",
            report_codec.FIX_NOT_KEPT if n % 2 else None,
            f"fp{n}",
        )
        for n in range(3)
    ]


def _from_worker(path: str = "pkg/a.py", message: str = ODD) -> FileReport:
    """A report as a worker hands it over: digested, findings pickled apart."""
    report = FileReport(path, _findings(path, message), uses_tensorflow=True)
    report_codec.digest_findings(report)
    return pickle.loads(pickle.dumps(report))


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch) -> Path:
    """The temporary folder spills are made in, for this test alone."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _open_spills(folder: Path) -> list[str]:
    """Files in ``folder`` this process holds open (a spill is unnamed: Linux makes it
    with O_TMPFILE, '<folder>/#<inode> (deleted)')."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(f"{folder}/"):
            found.append(target)
    return found


def test_a_spilled_report_reads_back_as_it_was(private_tmp: Path) -> None:
    report, plain = _from_worker(), _from_worker()
    held = spill.Spill()
    spill.spill_report(report, held)
    stored = report.findings_or_stored()
    assert isinstance(stored, spill.SpilledFindings) and stored.data == b""
    assert isinstance(report.digest.text, spill.SpilledText)
    assert report.digest.fits(report)  # it still stands for the (spilled) findings
    assert held.size > len(plain.digest.text)
    assert spill.written_text(report.digest.text) == plain.digest.text
    assert report.digest.counts == plain.digest.counts
    # the store gets the same entry; the findings decode to the same
    assert report_codec.encode_report(report) == report_codec.encode_report(plain)
    assert report.findings == plain.findings == _findings("pkg/a.py")
    assert report.digest.fits(report)  # decoded: the digest follows them
    assert not os.listdir(private_tmp)  # never a named file


def test_a_spilled_report_pickles_as_the_unspilled_one(private_tmp: Path) -> None:
    report, plain = _from_worker(), _from_worker()
    spill.spill_report(report, spill.Spill())
    crossed = pickle.loads(pickle.dumps(report))
    assert isinstance(crossed.findings_or_stored(), PackedFindings)
    assert crossed.digest.fits(crossed) and crossed.digest.text == plain.digest.text
    assert crossed.findings == plain.findings


def test_a_cached_report_spills_and_is_stored_again_the_same(tmp_path: Path) -> None:
    store = ResultCache(tmp_path / "cache", secret=b"k" * 32)
    store.prepare()
    storable = "`tf.reduce_mean` é \u2192"  # a lone surrogate cannot be stored
    report_codec.store_report(store, "a" * 32, _from_worker(message=storable))
    entry = store.load_body(RESULTS, "a" * 32)
    cached = report_codec.load_report(store, "a" * 32)
    spill.spill_report(cached, spill.Spill(str(tmp_path)))
    assert isinstance(cached.findings_or_stored(), spill.SpilledFindings)
    report_codec.store_report(store, "b" * 32, cached)  # the kept report, stored
    assert entry is not None and store.load_body(RESULTS, "b" * 32) == entry
    assert cached.findings == _findings("pkg/a.py", storable)


def test_reports_spill_only_what_is_undecoded() -> None:
    decoded = FileReport("pkg/a.py", _findings("pkg/a.py"))
    report_codec.digest_findings(decoded)
    empty = FileReport("pkg/b.py")
    held = spill.Spill()
    for report in (decoded, empty):
        before = dict(vars(report))
        spill.spill_report(report, held)
        assert vars(report) == before
    assert held.size == 0


def test_a_spill_that_cannot_be_written_leaves_the_reports_in_memory(monkeypatch) -> None:
    def no_room(*_):
        raise OSError(28, "No space left on device")

    held = spill.Spill()
    monkeypatch.setattr(spill.os, "pwrite", no_room)
    report = _from_worker()
    stored, digest = report.findings_or_stored(), report.digest
    spill.spill_report(report, held)
    assert held.broken
    assert report.findings_or_stored() is stored and report.digest is digest
    monkeypatch.undo()
    later = _from_worker()
    spill.spill_report(later, held)  # nothing more is put in a broken spill
    assert isinstance(later.findings_or_stored(), PackedFindings)


def test_the_spill_is_closed_when_its_readers_go(private_tmp: Path) -> None:
    report = _from_worker()
    spill.spill_report(report, spill.Spill())
    assert len(_open_spills(private_tmp)) == 1
    del report
    gc.collect()
    assert _open_spills(private_tmp) == []


# -- a two-phase scan -----------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A small generated legacy project: enough new files for a two-phase cold scan."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_corpus", ROOT / "benchmarks/make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    root = tmp_path_factory.mktemp("corpus") / "project"
    module.generate(root, files=24, seed=5)
    return root


def _cold_scan(corpus: Path, tmp_path: Path, workers: int = 2) -> tuple[RunResult, Path]:
    project = tmp_path / "project"
    shutil.copytree(corpus, project)
    config = load_config(project)
    ids = select_ids([], [])
    jobs = plan_jobs([project], config)
    assert getattr(jobs, "pending", None) is not None  # a two-phase scan
    store = ResultCache.open(config.root, ids, config.cache_key())
    return run_jobs(jobs, ids, workers, cache=store), project


def _rendered(result: RunResult, project: Path) -> dict[str, str]:
    return {f: render(result, f, root=project) for f in ("json", "sarif", "table")}


def test_a_cold_scan_reports_the_same_with_its_reports_spilled(
    corpus, tmp_path, private_tmp, monkeypatch
) -> None:
    spilled, project = _cold_scan(corpus, tmp_path / "a")
    held = [r for r in spilled.files if isinstance(r.findings_or_stored(), spill.SpilledFindings)]
    assert len(held) > 10
    with_spill = _rendered(spilled, project)
    assert json.loads(with_spill["json"])["summary"]["findings"] > 100
    monkeypatch.setattr(runner, "open_spill", lambda: None)
    plain, other = _cold_scan(corpus, tmp_path / "b")
    assert not any(isinstance(r.findings_or_stored(), spill.SpilledFindings) for r in plain.files)
    without = _rendered(plain, other)
    assert with_spill == without
    assert not os.listdir(private_tmp)
    del spilled, held
    gc.collect()
    assert _open_spills(private_tmp) == []


def test_a_cold_scan_that_fails_closes_its_spill(
    corpus, tmp_path, private_tmp, monkeypatch
) -> None:
    """An error (or an interrupt) after the first phase: no report will be read, the
    spill is closed at once, whoever still holds the reports."""
    from kmigrate.project.pending_project import PendingProject

    kept = []

    def broken(self, first, notebooks=None):
        kept.extend(report for _, report in first)  # held, as a traceback may hold them
        raise KeyboardInterrupt

    monkeypatch.setattr(PendingProject, "finish", broken)
    with pytest.raises(KeyboardInterrupt):
        _cold_scan(corpus, tmp_path)
    assert any(isinstance(r.findings_or_stored(), spill.SpilledFindings) for r in kept)
    assert _open_spills(private_tmp) == []
    assert not os.listdir(private_tmp)
