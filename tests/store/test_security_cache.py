"""A scanned repository cannot run code or change findings through the result cache.

The repository controls ``.kmigrate_cache/`` (it can commit one) and every key is
computable, so these tests plant entries exactly where a scan looks, with the real key
computation, and show that a scan neither runs them nor uses what they claim.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kmigrate.engine.model import Context, Severity
from kmigrate.project.config import load_config
from kmigrate.run.report_codec import load_report, store_encoded
from kmigrate.run.runner import plan_jobs, run_jobs, select_ids
from kmigrate.store import cache as cache_module
from kmigrate.store.cache import (
    RESULTS,
    InvalidEntryError,
    ResultCache,
    content_key,
    secret_path,
)

LAYER = """\
import tensorflow as tf


class Scale(tf.keras.layers.Layer):
    def call(self, x):
        return tf.reduce_mean(x, axis=1, keep_dims=True) * tf.nn.gelu(x)
"""

TRAIN = """\
import tensorflow as tf
from tensorflow.keras import backend as K

model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
model.compile(optimizer=tf.keras.optimizers.Adam(lr=0.1), loss="mse")
value = K.get_value(model.optimizer.lr)
tf.random.set_seed(1)
"""


class _RunsCommand:
    """What an attacker pickles: unpickling it runs a shell command."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


@pytest.fixture
def machine(tmp_path, monkeypatch) -> Path:
    """This test's user cache folder (where the secret lives), outside the tree."""
    home = tmp_path / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv(cache_module.ENV_DIR, raising=False)
    return home


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'victim'\n")
    (root / "pkg/layers.py").write_text(LAYER)
    (root / "pkg/train.py").write_text(TRAIN)
    (root / "pkg/plain.py").write_text("import tensorflow as tf\nX = 1\n")
    return root


def _open(project: Path) -> tuple[ResultCache, list, tuple[str, ...]]:
    """The cache and jobs a scan of ``project`` uses: the real key computation."""
    config = load_config(project)
    ids = select_ids([], [])
    return ResultCache.open(config.root, ids, config.cache_key()), plan_jobs([project], config), ids


def _entry_paths(project: Path) -> dict[str, Path]:
    """Display path -> the file where a scan looks for that file's result."""
    store, jobs, _ = _open(project)
    return {
        job.display: store.folder / f"{RESULTS}.{store.entry_key(job, Path(job.path).read_bytes())}"
        for job in jobs
    }


def _paths_a_scan_reads(project: Path, attacker_home: Path) -> dict[str, Path]:
    """What an attacker does to learn the entry paths: scan the same tree on their own
    machine (their own secret), list the result entries it wrote, and ship them. The
    keys depend on the file bytes, the rules, the config and the project index's facts,
    never on the machine, so they are the paths the victim's scan reads."""
    env = dict(os.environ, XDG_CACHE_HOME=str(attacker_home))
    env.pop(cache_module.ENV_DIR, None)
    _scan_cli(project, env)
    store, _, _ = _open(project)
    written = {p.name: p for p in store.folder.glob(f"{RESULTS}.*")}
    shutil.rmtree(store.folder.parent)
    return written


def _scan(project: Path, cache: bool = True) -> list:
    store, jobs, ids = _open(project)
    result = run_jobs(jobs, ids, 1, cache=store if cache else None)
    return [(r.path, [f.to_json() for f in r.findings]) for r in result.files]


def _scan_cli(project: Path, env: dict, *options: str) -> dict:
    out = project.parent / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "kmigrate", "scan", ".", "-f", "json", "-q", "-o", str(out)]
        + list(options),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    return {"findings": report["findings"], "files": report["files"]}


def _pickle_payload(marker: Path) -> bytes:
    command = f"echo ran > {marker}"
    return pickle.dumps(_RunsCommand(command), protocol=pickle.HIGHEST_PROTOCOL)


def test_a_planted_pickle_entry_is_never_unpickled(project, machine, tmp_path) -> None:
    """The issue's attack, end to end: the repository ships ``.kmigrate_cache`` entries
    (old magic + a pickle whose ``__reduce__`` calls ``os.system``) at the exact paths
    a scan reads, for every file; then the user scans, twice."""
    marker = tmp_path / "pwned"
    env = dict(os.environ, XDG_CACHE_HOME=str(machine))
    env.pop(cache_module.ENV_DIR, None)
    expected = _scan_cli(project, env, "--no-cache")
    assert len(expected["findings"]) >= 6
    payload = _pickle_payload(marker)
    planted = _paths_a_scan_reads(project, tmp_path / "attacker-machine")
    assert len(planted) >= 2
    # every magic the cache ever had, and none
    for prefix in (b"KMC2\n", b"KMC1\n", b"", cache_module._MAGIC):
        for path in planted.values():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(prefix + payload)
        assert _scan_cli(project, env) == expected  # a miss, never unpickled
        assert not marker.exists()
        # the scan looked exactly there: it replaced each planted entry with its own
        for path in planted.values():
            assert path.read_bytes().startswith(cache_module._MAGIC)
            assert payload not in path.read_bytes()
    # after a real scan filled the cache: overwrite its entries the same way
    assert _scan_cli(project, env) == expected
    for path in planted.values():
        if path.is_file():  # the pre-filter skips files without TF markers
            path.write_bytes(b"KMC2\n" + payload)
    assert _scan_cli(project, env) == expected
    assert not marker.exists()


def test_the_attack_ran_against_the_pickle_cache(project, machine, tmp_path) -> None:
    """The payload above is live: ``pickle.loads`` of it does run the command (so the
    previous test would have caught the old cache)."""
    marker = tmp_path / "proof"
    pickle.loads(_pickle_payload(marker))
    assert marker.read_text().strip() == "ran"


def _forge(path: Path, body: bytes, secret: bytes) -> None:
    """An entry in the current format, signed with ``secret``."""
    store = ResultCache(path.parent, secret=secret)
    path.write_bytes(cache_module._MAGIC + store._mac(path.name, body) + b"\n" + body)


def _hiding_value(display: str) -> dict:
    """A well-formed result (as ``encode_report`` makes it) that claims the file has
    no findings."""
    return {
        "path": display,
        "strings": [],
        "findings": [],
        "uses_tensorflow": False,
        "parsed": True,
        "unused_suppressions": [],
        "tf_statements": 0,
        "tf_leftovers": [],
        "mentions_backend": False,
    }


def _hiding(display: str) -> bytes:
    """That result as an entry's body (``report_codec.store_encoded``'s layout)."""
    head = {**_hiding_value(display), "findings": 0}
    del head["strings"]
    return json.dumps(head).encode() + b"\n[[],[]]"


def test_a_hiding_entry_signed_with_the_real_secret_would_be_used(project, machine) -> None:
    """The forged entries of the tests around are well-formed: only their MAC makes
    them misses (signed with the real secret, one hides the file's findings)."""
    store, _, _ = _open(project)
    store.prepare()
    path = _entry_paths(project)["pkg/layers.py"]
    _forge(path, _hiding("pkg/layers.py"), store.secret)
    assert load_report(store, path.name.split(".", 1)[1]).findings == []
    assert dict(_scan(project))["pkg/layers.py"] == []


def test_entries_signed_without_this_machines_secret_are_misses(project, machine) -> None:
    """A repository can write a well-formed entry that hides every finding, but not
    sign it with the secret in the user's cache folder: it is not used."""
    expected = _scan(project, cache=False)
    for display, path in _entry_paths(project).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        _forge(path, _hiding(display), secret=b"\0" * 32)  # a guessed secret
    assert _scan(project) == expected
    assert secret_path().is_file() and machine in secret_path().parents
    mode = stat.S_IMODE(secret_path().stat().st_mode)
    assert mode & 0o077 == 0, oct(mode)


def test_an_entry_moved_to_another_key_is_a_miss(project, machine) -> None:
    """A genuine entry copied over another file's entry (same machine, same run key)."""
    expected = _scan(project, cache=False)
    _scan(project)  # fills the cache
    paths = _entry_paths(project)
    genuine = paths["pkg/train.py"].read_bytes()
    paths["pkg/layers.py"].write_bytes(genuine)
    assert _scan(project) == expected


def test_truncated_entries_are_misses(project, machine) -> None:
    expected = _scan(project, cache=False)
    _scan(project)
    store, _, _ = _open(project)
    for path in _entry_paths(project).values():
        if not path.exists():
            continue
        blob = path.read_bytes()
        for cut in (0, 3, len(cache_module._MAGIC) + 10, len(blob) // 2, len(blob) - 1):
            path.write_bytes(blob[:cut])
            assert _scan(project) == expected
        # a truncated body that carries a valid MAC (signed with the real secret)
        body = blob[cache_module._HEADER_BYTES :]
        _forge(path, body[: len(body) // 2], store.secret)
        assert _scan(project) == expected


def _well_formed(display: str) -> dict:
    """One finding, in the stored shape: texts are indexes into ``strings``."""
    value = _hiding_value(display)
    value["strings"] = ["KM201", "use keras.ops.mean", display, "tf.reduce_mean", "Scale.call"]
    value["findings"] = [[0, 1, 1, 2, 5, 15, 5, 30, 0, 3, True, "9f2c1a", 4, {}]]
    return value


def _wrong_types(display: str) -> list:
    good = _well_formed(display)
    row = good["findings"][0]
    bad = []
    for field, value in (
        ("findings", {"0": row}),
        ("findings", "[]"),
        ("path", 7),
        ("mentions_backend", "yes"),
        ("uses_tensorflow", "yes"),
        ("parsed", 1),
        ("tf_statements", 1.5),
        ("tf_leftovers", "tf.cond"),
        ("tf_leftovers", [3]),
        ("unused_suppressions", [[1]]),
        ("unused_suppressions", [["1", "KM201"]]),
    ):
        bad.append({**good, field: value})
    missing = dict(good)
    del missing["tf_statements"]
    older = dict(good)
    del older["tf_leftovers"]  # written before the leftovers were stored
    unmarked = dict(good)
    del unmarked["mentions_backend"]  # written before format 6
    return [*bad, missing, older, unmarked]


def _wrong_rows(display: str) -> list:
    """Findings of the wrong shape: checked when the findings are first read."""
    good = _well_formed(display)
    row = good["findings"][0]
    bad = []
    for field, value in (
        ("strings", "KM201"),
        ("strings", ["KM201", 7, display, "tf.x", "f"]),
        ("strings", ["KM201"]),  # the row's indexes point past the table
    ):
        bad.append({**good, field: value})
    for index, value in (
        (0, None),
        (0, "KM201"),  # a text, not an index
        (0, 99),
        (0, 1.0),
        (1, "warning"),
        (1, 7),  # not a severity
        (1, -1),
        (4, "12"),
        (4, True),
        (5, -3),
        (8, "model"),
        (8, 9),  # not a context
        (10, "true"),
        (11, 5),
        (13, {"cell": [1, 2]}),
        (13, {"cell": {"__class__": "os.system"}}),
        (13, []),
    ):
        broken = list(row)
        broken[index] = value
        bad.append({**good, "findings": [broken]})
    bad.append({**good, "findings": [row[:-1]]})
    bad.append({**good, "findings": [row + ["extra"]]})
    return bad


def test_wrong_typed_entries_are_misses(project, machine) -> None:
    """Entries signed with the real secret (as a kmigrate bug or an older format could
    write them) whose values have the wrong shape: each is a miss, never an error."""
    expected = _scan(project, cache=False)
    store, _, _ = _open(project)
    store.prepare()
    paths = _entry_paths(project)
    key = paths["pkg/layers.py"].name.split(".", 1)[1]
    cases = _wrong_types("pkg/layers.py")
    assert len(cases) >= 14
    assert store_encoded(store, key, _well_formed("pkg/layers.py"))
    (finding,) = load_report(store, key).findings  # the well-formed one loads
    assert (finding.rule, finding.message, finding.symbol) == (
        "KM201",
        "use keras.ops.mean",
        "tf.reduce_mean",
    )
    for value in cases:
        assert store_encoded(store, key, value)
        assert load_report(store, key) is None, value
        assert _scan(project) == expected
    for value in ([_well_formed("pkg/layers.py")], "report", None, 3):
        assert store.store_value(RESULTS, key, value)
        assert load_report(store, key) is None, value


def test_wrong_typed_findings_fail_when_read(project, machine) -> None:
    """A result's findings are decoded when first read, so findings of the wrong shape
    (in an entry its MAC says this build wrote: a kmigrate bug) are found then, and
    reading them raises ``InvalidEntryError`` rather than building findings from them."""
    store, _, _ = _open(project)
    store.prepare()
    key = _entry_paths(project)["pkg/layers.py"].name.split(".", 1)[1]
    cases = _wrong_rows("pkg/layers.py")
    assert len(cases) >= 22
    for value in cases:
        assert store_encoded(store, key, value)
        report = load_report(store, key)
        with pytest.raises(InvalidEntryError):
            _ = report.findings
    # a row fewer than the result counts
    name = f"{RESULTS}.{key}"
    head = {**_hiding_value("pkg/layers.py"), "findings": 2}
    del head["strings"]
    body = json.dumps(head).encode() + b"\n" + json.dumps([[], []]).encode()
    _forge(store.folder / name, body, store.secret)
    with pytest.raises(InvalidEntryError):
        _ = load_report(store, key).findings


def test_a_result_keeps_its_written_findings_after_its_json(project, machine) -> None:
    """A result is stored as its JSON (with its findings' counts), a newline, then its
    findings as the JSON report writes them: read back as its ``digest`` when the MAC
    holds, a miss when that text is not UTF-8 or the counts do not add up; an entry
    without them loads without them."""
    store, _, _ = _open(project)
    store.prepare()
    key = _entry_paths(project)["pkg/layers.py"].name.split(".", 1)[1]
    written = '{\n      "rule": "KM201"\n    }'
    counted = {**_well_formed("pkg/layers.py"), "counts": [1, 0, [["KM201", 0, 1, True, 1]]]}
    assert store_encoded(store, key, counted, written)
    report = load_report(store, key)
    assert report.digest.text == written and report.digest.fits(report)
    assert report.digest.counts.kinds == (("KM201", Context.MODEL, Severity.WARNING, True, 1),)
    assert (report.digest.counts.blocked_now, report.digest.counts.blocked_after_apply) == (1, 0)
    (finding,) = report.findings  # decoded when read: the digest still stands for them
    assert finding.rule == "KM201" and report.digest.fits(report)
    assert store_encoded(store, key, _well_formed("pkg/layers.py"))
    assert load_report(store, key).digest is None
    for wrong in (
        [1, 0, [["KM201", 0, 1, True, 2]]],
        [1, 0, [["KM201", 9, 1, True, 1]]],
        [1, 0, [["KM201", 0, 1, True, 1], ["KM202", 0, 1, True, 0]]],  # a kind none has
        [1, 0, [["KM201", 0, 1, 1, 1]]],
        [1, 0, [[201, 0, 1, True, 1]]],
        [1, 0, [["KM201", True, 1, True, 1]]],
        [1, 0, [["KM201", 0, 1, True, 1, 0]]],
        [1],
    ):
        assert store_encoded(store, key, {**counted, "counts": wrong}, written)
        assert load_report(store, key) is None, wrong
    name = f"{RESULTS}.{key}"
    body = store.folder.joinpath(name).read_bytes()[cache_module._HEADER_BYTES :]
    body = body.rpartition(b"\n")[0] + b"\n\xff{"
    (store.folder / name).write_bytes(cache_module._MAGIC + store._mac(name, body) + b"\n" + body)
    assert load_report(store, key) is None


def test_entries_of_the_previous_format_are_misses(project, machine, monkeypatch) -> None:
    """Format 3 also stored ``apply``'s ``fixed`` and ``error``: its entries, genuine
    and signed with this machine's secret, are misses now (never an error)."""
    expected = _scan(project, cache=False)
    store, _, _ = _open(project)
    store.prepare()
    key = _entry_paths(project)["pkg/layers.py"].name.split(".", 1)[1]
    old = {**_well_formed("pkg/layers.py"), "fixed": 0, "error": None}
    with monkeypatch.context() as patch:
        patch.setattr(cache_module, "FORMAT", 3)
        patch.setattr(cache_module, "_MAGIC", b"KMC3 ")
        assert store_encoded(store, key, old)
        assert load_report(store, key) is not None  # a sound entry, but for its format
    assert load_report(store, key) is None
    assert _scan(project) == expected


def test_entries_of_format_5_are_misses(project, machine, monkeypatch) -> None:
    """Format 5 kept a result's findings inside its JSON, followed by their text, and
    no ``mentions_backend``: such an entry, genuine and signed with this machine's
    secret, is never read as format 6 (its magic and MAC name the format), and would
    not fit it either."""
    expected = _scan(project, cache=False)
    store, _, _ = _open(project)
    store.prepare()
    key = _entry_paths(project)["pkg/layers.py"].name.split(".", 1)[1]
    old = _well_formed("pkg/layers.py")
    del old["mentions_backend"]
    old["counts"] = [1, 0, [["KM201", 0, 1, True, 1]]]
    with monkeypatch.context() as patch:
        patch.setattr(cache_module, "FORMAT", 5)
        patch.setattr(cache_module, "_MAGIC", b"KMC5 ")
        assert store.store_value(RESULTS, key, old, '{\n  "rule": "KM201"\n}')
    assert load_report(store, key) is None
    name = f"{RESULTS}.{key}"
    body = store.folder.joinpath(name).read_bytes()[len(b"KMC5 ") + 65 :]
    _forge(store.folder / name, body, store.secret)  # even signed as format 6
    assert load_report(store, key) is None
    assert _scan(project) == expected


def test_a_planted_fifo_or_symlink_entry_is_a_miss_without_blocking(project, machine) -> None:
    expected = _scan(project, cache=False)
    paths = _entry_paths(project)
    paths["pkg/layers.py"].parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(paths["pkg/layers.py"])
    secret_copy = paths["pkg/train.py"]
    secret_copy.symlink_to(secret_path())
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(_scan(project)), daemon=True)
    worker.start()
    worker.join(120)
    assert outcome == [expected]
    # the store replaced the links it found rather than writing through them
    assert secret_copy.is_file() and not secret_copy.is_symlink()
    assert len(secret_path().read_text().strip()) == 64


def test_a_symlinked_cache_folder_is_not_used(project, machine, tmp_path) -> None:
    """``.kmigrate_cache`` planted as a link elsewhere: nothing is read or written there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / cache_module.CACHE_DIR_NAME).symlink_to(elsewhere, target_is_directory=True)
    expected = _scan(project, cache=False)
    assert _scan(project) == expected
    assert list(elsewhere.iterdir()) == []


def test_no_secret_means_no_cache(project, tmp_path, monkeypatch) -> None:
    """Without a user cache folder to keep the secret in, the cache is off (not unsigned)."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    store, _, _ = _open(project)
    assert store.secret is None and not store.prepare()
    assert not store.store_value("index", "abc", {"x": 1})
    assert _scan(project) == _scan(project, cache=False)


def test_plain_values_per_namespace_and_key(project, machine) -> None:
    """The API other caches use: a validated plain-data value per (namespace, key)."""
    store, _, _ = _open(project)
    assert store.prepare()
    key = content_key(b"import tensorflow as tf\n", "pkg.mod")
    value = {"classes": [["Scale", ["tf.keras.layers.Layer"]]], "aliases": {"K": "k"}}

    def decode(data):
        if type(data) is not dict or set(data) != {"classes", "aliases"}:
            raise cache_module.InvalidEntryError("not an index entry")
        return data

    assert store.store_value("index", key, value)
    assert store.load_value("index", key, decode) == value
    assert store.load_value("other", key, decode) is None  # namespaces are separate
    assert store.load_value("index", key, lambda data: data["missing"]) is None  # miss
    for name, bad_key in (("../x", key), ("index", "../../etc"), ("Index", key), ("index", "")):
        assert not store.store_value(name, bad_key, value)
        assert store.load_value(name, bad_key, decode) is None
    assert not store.store_value("index", key, {"not json": object()})
    assert not store.store_value("index", key, float("nan"))
    assert content_key(b"a", "b") != content_key(b"ab") != content_key(b"a", "", "b")
