"""Property test over file names (issue 32): random bytes, control characters, line
breaks, backslashes, terminal escapes, bidirectional overrides and bytes that are not
UTF-8, through every report format and through ``apply --diff | git apply``.

Each example is a committed git tree of one to three such files holding the same legacy
code. Every format must render (exit 0, no traceback) without a raw control character,
the JSON formats must parse and name every file, SARIF's URIs must decode to the
reported paths, GitHub's workflow commands must stay one per line, and the patch must
apply with ``git apply`` and give what ``apply`` itself writes.

Bounded and deterministic: a few derandomised examples (the same every run), a few
seconds; ``KMIGRATE_FUZZ_EXAMPLES=200`` explores more, with new examples.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kmigrate.cli.main import main
from kmigrate.project.discover import printable_name
from kmigrate.report import FORMATS

CODE = (
    "import tensorflow as tf\n\n"
    "x = tf.keras.layers.Dense(3)\n"  # fixable: apply rewrites it
    "y = tf.py_function(abs, [x], tf.float32)\n"  # manual: listed by every format
)

# pieces a hostile or messy name is made of, besides random bytes
PIECES = [
    b"\n",
    b"\r",
    b"\t",
    b"\x1b[2J",  # clear the screen
    b"\x1b]52;c;aGk=\x07",  # OSC 52: write the clipboard
    b"\\",
    b'"',
    b"'",
    b" ",
    b"%",
    b"&",
    b"#",
    b"*",
    b"[",
    b"<img src=x onerror=alert(1)>",
    b"\x7f",
    b"\xff",
    b"\xc3",  # a lone UTF-8 lead byte
    b"\xc2\x85",  # NEL, a C1 control in UTF-8
    b"\xe2\x80\xae",  # RIGHT-TO-LEFT OVERRIDE
    b"\xe2\x80\xa8",  # LINE SEPARATOR
    b"\xc3\xa9",  # an ordinary non-ASCII letter
]

EXAMPLES = int(os.environ.get("KMIGRATE_FUZZ_EXAMPLES", "6"))
NAMES = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="KMIGRATE_FUZZ_EXAMPLES" not in os.environ,
    database=None,  # nothing written into the work tree
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _name(parts: list[bytes]) -> bytes:
    middle = b"".join(parts).replace(b"/", b"_").replace(b"\0", b"_")
    return (b"m" + middle)[:200] + b".py"  # "m": never hidden, never ".git"


hostile_name = st.lists(
    st.one_of(st.sampled_from(PIECES), st.binary(min_size=1, max_size=3)),
    min_size=1,
    max_size=6,
).map(_name)

# C0 controls but line feed, DEL, C1 controls, line/paragraph separators, direction overrides
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# JSON formats are data: a string keeps DEL, C1 and the like (valid JSON, the name's own
# characters); only what JSON itself must escape may not appear raw
RAW_IN_JSON = re.compile("[\x00-\x09\x0b-\x1f]")
JSON_FORMATS = ("json", "sarif", "gitlab")


def git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "core.autocrlf=false", *args],
        cwd=root,
        input=data,
        check=True,
        capture_output=True,
    ).stdout


def run(root: Path, *args: str):
    """The command line in this process (fast enough for many examples), in ``root``."""
    before = os.getcwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(main, [*args, "-j", "1"], catch_exceptions=False)
    finally:
        os.chdir(before)


@pytest.fixture(autouse=True)
def user_folders(tmp_path_factory, monkeypatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.delenv("KMIGRATE_CACHE_DIR", raising=False)


@pytest.fixture(scope="module")
def rewritten() -> bytes:
    """What ``apply`` writes for CODE under an ordinary name."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "plain.py").write_text(CODE)
        assert run(root, "apply", "--no-cache", ".").exit_code == 0
        return (root / "plain.py").read_bytes()


def _tree(folder: str, names: list[bytes]) -> Path:
    root = Path(folder) / "tree"
    root.mkdir()
    for name in names:
        (root / os.fsdecode(name)).write_text(CODE)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    return root


def _check_format(fmt: str, output: bytes, shown: set[str]) -> None:
    text = output.decode("utf-8")  # every format is UTF-8, whatever the names' bytes
    raw = (RAW_IN_JSON if fmt in JSON_FORMATS else RAW_CONTROL).search(text)
    assert raw is None, (fmt, raw)
    if fmt == "html":
        assert "<img" not in text
    if fmt == "json":
        data = json.loads(text)
        assert {f["path"] for f in data["files"]} == shown
        assert {f["path"] for f in data["findings"]} == shown
    elif fmt == "sarif":
        results = json.loads(text)["runs"][0]["results"]
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
        assert all(re.fullmatch(r"[A-Za-z0-9._~%/!$&'()*+,;=:@-]+", uri) for uri in uris), uris
        assert {unquote(uri) for uri in uris} == shown
    elif fmt == "gitlab":
        assert {issue["location"]["path"] for issue in json.loads(text)} == shown
    elif fmt == "github":
        assert all(line.startswith("::") for line in text.splitlines() if line), text


@NAMES
@given(names=st.lists(hostile_name, min_size=1, max_size=3, unique=True))
def test_any_file_name_survives_every_format_and_the_patch(names, rewritten) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = _tree(folder, names)
        shown = {printable_name(os.fsdecode(name)) for name in names}
        for fmt in FORMATS:
            result = run(root, "scan", ".", "--no-cache", "-q", "-f", fmt)
            assert result.exit_code == 0, (fmt, result.output)
            _check_format(fmt, result.stdout_bytes, shown)
        patch = run(root, "apply", "--no-cache", "--diff", ".")
        assert patch.exit_code == 0, patch.output
        git(root, "apply", "--check", "-", data=patch.stdout_bytes)
        git(root, "apply", "-", data=patch.stdout_bytes)
        for name in names:
            assert (root / os.fsdecode(name)).read_bytes() == rewritten, name
        shutil.rmtree(root / ".git")
