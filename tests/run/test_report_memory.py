"""What a cold scan holds in its parent: kept reports' findings stay packed, and large
store entries are written in pieces (issue 34, peak memory at 10k files). Each path
must give what the plain one gives: the same findings, the same entry bytes."""

from __future__ import annotations

import pickle
from pathlib import Path

from kmigrate.engine.model import Context, Finding, Severity, Span
from kmigrate.engine.run_data import FileReport
from kmigrate.run import report_codec
from kmigrate.store.cache import ResultCache


def _findings(path: str, fixable: bool = False) -> list[Finding]:
    return [
        Finding(
            "KM201",
            Severity.WARNING,
            f"`tf.reduce_mean` {n}",
            path,
            Span(n + 1, 4, n + 1, 20),
            Context.MODEL,
            "tf.reduce_mean",
            report_codec.FIX_NOT_KEPT if fixable else None,
            f"fp{n}",
        )
        for n in range(3)
    ]


def _from_worker(path: str = "pkg/a.py") -> FileReport:
    """A report as a worker hands it over: digested, findings pickled apart."""
    report = FileReport(path, _findings(path), uses_tensorflow=True)
    report_codec.digest_findings(report)
    return pickle.loads(pickle.dumps(report))


def test_a_packed_report_is_stored_without_decoding_its_findings(tmp_path: Path) -> None:
    report = _from_worker()
    assert "findings" not in vars(report)  # packed
    encoded = report_codec.encode_report(report)
    report_codec.trim_for_reports(report)
    assert "findings" not in vars(report)  # still packed: looked at, not kept decoded
    plain = FileReport("pkg/a.py", _findings("pkg/a.py"), uses_tensorflow=True)
    report_codec.digest_findings(plain)
    assert encoded == report_codec.encode_report(plain)
    store = ResultCache(tmp_path / "cache", secret=b"k" * 32)
    store.prepare()
    report_codec.store_report(store, "a" * 32, report)
    assert "findings" not in vars(report)
    assert report_codec.load_report(store, "a" * 32).findings == plain.findings


def test_decoded_findings_are_packed_again_with_a_fitting_digest() -> None:
    """A kept report whose messages the project's notes changed is decoded for that:
    packed again, it gives the same findings, counts and JSON text, and holds no
    decoded list."""
    report = _from_worker()
    changed = report.findings  # decoded, as replace_project_notes decodes them
    changed[0].message += " (a note)"
    report.digest = None
    report_codec.pack_findings(report)
    assert "findings" not in vars(report)
    assert report.digest is not None and report.digest.fits(report)
    expected = FileReport("pkg/a.py", [*_findings("pkg/a.py")], uses_tensorflow=True)
    expected.findings[0].message += " (a note)"
    report_codec.digest_findings(expected)
    assert report.digest.text == expected.digest.text
    assert report.digest.counts == expected.digest.counts
    assert report.findings == expected.findings  # decoded again: the same findings


def test_packing_leaves_reports_without_decoded_findings_alone() -> None:
    packed = _from_worker()
    stored = packed.findings_or_stored()
    report_codec.pack_findings(packed)
    assert packed.findings_or_stored() is stored  # not decoded and packed again
    empty = FileReport("pkg/b.py")
    report_codec.pack_findings(empty)
    assert vars(empty)["findings"] == [] and empty.digest is None


def test_an_entry_written_in_pieces_is_the_entry_of_their_join(tmp_path: Path) -> None:
    store = ResultCache(tmp_path / "cache", secret=b"k" * 32)
    store.prepare()
    pieces = [b'{"a":1}', b"\n", b"line one", b"\n", b"line two"]
    assert store.store_bytes("resolved", "a" * 16, pieces)
    assert store.store_bytes("resolved", "b" * 16, b"".join(pieces))
    first = (store.folder / ("resolved." + "a" * 16)).read_bytes()
    second = (store.folder / ("resolved." + "b" * 16)).read_bytes()
    assert store.load_body("resolved", "a" * 16) == b"".join(pieces)
    # the same bytes but for the MAC, which covers the name: moved, it fails
    assert first.split(b"\n", 1)[1] == second.split(b"\n", 1)[1]
    (store.folder / ("resolved." + "b" * 16)).write_bytes(first)
    assert store.load_body("resolved", "b" * 16) is None
    assert not [p for p in store.folder.iterdir() if p.name.startswith(".tmp-")]


def test_a_value_with_text_is_stored_as_before(tmp_path: Path) -> None:
    store = ResultCache(tmp_path / "cache", secret=b"k" * 32)
    store.prepare()
    assert store.store_value("results", "c" * 16, {"x": ["é", 2]}, "the text")
    assert store.load_body("results", "c" * 16) == '{"x":["é",2]}\nthe text'.encode()


def test_an_entry_too_large_in_pieces_is_not_written(tmp_path: Path, monkeypatch) -> None:
    from kmigrate.store import cache as cache_module

    monkeypatch.setattr(cache_module, "MAX_ENTRY_BYTES", 200)
    store = ResultCache(tmp_path / "cache", secret=b"k" * 32)
    store.prepare()
    assert not store.store_bytes("resolved", "d" * 16, [b"x" * 100, b"y" * 100])
    assert not list(store.folder.glob("resolved.*"))
