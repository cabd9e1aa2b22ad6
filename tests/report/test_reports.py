"""The portability report in every format, fed by findings made directly (no scanning),
plus end-to-end runs of `kmigrate scan` on the samples for stability."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from contract import FINDING_FIELDS

from kmigrate.engine.model import Context, EditPlan, Finding, Severity, Span
from kmigrate.engine.names import import_bindings
from kmigrate.engine.run_data import BackendPin, FileReport, RunResult
from kmigrate.project.backend_pins import find_backend_pins
from kmigrate.report import FORMATS, build, render
from kmigrate.report.backend_status import BackendStatus
from kmigrate.report.footprint import count_text, count_tf_statements
from kmigrate.report.github import escape_data, escape_property
from kmigrate.report.sarif import MAX_DESCRIPTION, clip
from kmigrate.report.summary import format_minutes, score
from kmigrate.rules.effort import FRAMEWORK_MODULES, minutes_for

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "report"
JSON_SCHEMA = ROOT / "migrate" / "report" / "schema.json"
SARIF_SCHEMA = FIXTURES / "sarif-2.1.0-subset.schema.json"
EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def make(
    path: str,
    line: int,
    rule: str = "KM102",
    *,
    fixable: bool = False,
    severity: Severity = Severity.WARNING,
    context: Context = Context.MODEL,
    message: str = "use keras.ops",
    symbol: str = "tf.reduce_mean",
    column: int = 4,
    end_column: int = 20,
) -> Finding:
    finding = Finding(
        rule=rule,
        severity=severity,
        message=message,
        path=path,
        span=Span(line, column, line, end_column),
        context=context,
        symbol=symbol,
        fix=EditPlan(edits=()) if fixable else None,
    )
    finding.fingerprint = hashlib.sha1(f"{path}{line}{rule}{message}".encode()).hexdigest()[:16]
    return finding


def file_report(
    path: str, findings: list[Finding], statements: int | None = 10, **kw
) -> FileReport:
    report = FileReport(path=path, findings=findings, uses_tensorflow=True, **kw)
    if statements is not None:
        report.tf_statements = statements  # what the engine attaches (or the report computes)
    return report


@pytest.fixture
def result() -> RunResult:
    """Two folders, every severity and context, one unparsed file, one clean file, and
    a finding whose message and symbol carry markup."""
    files = [
        file_report(
            "pkg/layers.py",
            [
                make("pkg/layers.py", 3, "KM102", fixable=True),
                make("pkg/layers.py", 5, "KM104"),
                make("pkg/layers.py", 5, "KM301", severity=Severity.ERROR),
                make("pkg/layers.py", 7, "KM601", severity=Severity.INFO, context=Context.OTHER),
            ],
        ),
        file_report(
            "pkg/train.py",
            [
                make(
                    "pkg/train.py",
                    12,
                    "KM601",
                    context=Context.TRAINING_LOOP,
                    message=f"loop {EVIL} | pipe",
                    symbol="<method>.save",
                ),
            ],
            statements=4,
        ),
        file_report("pkg/clean.py", [], statements=6),
        FileReport(path="README_helpers.py"),  # no TF at all
        file_report(
            "legacy/old.py",
            [make("legacy/old.py", 1, "KM901", severity=Severity.ERROR, context=Context.OTHER)],
            statements=None,
            parsed=False,
        ),
    ]
    return RunResult(files=files, rule_ids=("KM102", "KM104", "KM301", "KM601", "KM901"))


def _json(result: RunResult, **options) -> dict:
    return json.loads(render(result, "json", **options))


# -- the numbers -----------------------------------------------------------------


def test_score_definition() -> None:
    assert score(0, 0) == 100.0
    assert score(0, 10) == 100.0
    assert score(2, 10) == 80.0
    assert score(3, 2) == 0.0  # more blocked lines than statements: clamp, never negative
    assert score(1, None) is None


def test_summary_numbers(result: RunResult) -> None:
    data = _json(result)
    summary = data["summary"]
    assert summary["files_scanned"] == 5
    assert summary["files_with_tensorflow"] == 4
    assert summary["files_portable"] == 2  # clean.py and the TF-free file
    assert summary["files_unparsed"] == 1
    assert summary["findings"] == 6
    assert summary["fixable"] == 1
    assert summary["manual"] == 4  # KM104, KM301, KM601 (warning), KM901; the info note is not
    assert summary["notes"] == 1
    assert summary["by_context"] == {"model": 3, "other": 2, "training-loop": 1}
    assert summary["by_folder"] == {"legacy": 1, "pkg": 5}
    files = {f["path"]: f for f in data["files"]}
    layers = files["pkg/layers.py"]
    # lines 3 and 5 block now (line 7 is info); only line 5 after apply: 10 statements
    assert (layers["score_now"], layers["score"]) == (80.0, 90.0)
    assert files["pkg/clean.py"]["score"] == 100.0
    assert files["legacy/old.py"]["score"] is None
    folder = {f["folder"]: f for f in summary["folders"]}["pkg"]
    assert folder["tf_statements"] == 20
    assert folder["score"] == 90.0  # lines 5 (layers) and 12 (train) of 20
    expected = (  # the info note (KM601 outside model code) costs no one's time
        minutes_for("KM104", "model") + minutes_for("KM301", "model", severity="error")
    )
    assert layers["effort_minutes"] == round(expected)
    assert summary["top_files"][0] == "pkg/train.py"  # a training loop costs the most


def test_effort_table_is_data() -> None:
    assert minutes_for("KM601", "training-loop") > minutes_for("KM601", "model")
    assert minutes_for("KM299", "model") == minutes_for("KM201", "model")  # family default

    class Custom:
        effort_minutes = 7

    assert minutes_for("KM201", "model", Custom) == 7
    assert format_minutes(0) == "0 min" and format_minutes(90) == "1.5 h"
    assert "days" in format_minutes(60 * 40)


def test_footprint_counts_framework_statements() -> None:
    code = (
        "import os\n"
        "import tensorflow as tf\n"
        "from tensorflow.keras import layers\n"
        "x = 1\n"
        "class L(layers.Layer):\n"
        "    def call(self, x):\n"
        "        y = tf.reduce_mean(x)\n"
        "        return os.path.join('a', 'b')\n"
        "try:\n"
        "    pass\n"
        "except tf.errors.OpError:\n"
        "    pass\n"
    )
    # the two imports, the class statement (its base), the reduce_mean line, the try
    assert count_text(code) == 5
    assert count_text("import numpy as np\nnp.mean(1)\n") == 0
    assert count_text("def broken(:\n") is None
    notebook = json.dumps(
        {"cells": [{"cell_type": "code", "source": ["%matplotlib inline\n", "import keras\n"]}]}
    )
    assert count_text(notebook, "demo.ipynb") == 1


def _footprint_by_definition(tree: ast.Module) -> int:
    """The footprint as docs/report.md defines it, spelled the slow, obvious way:
    the oracle for the one-pass counter the report uses."""
    names: set[str] = set()
    imports: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for local, qualified in import_bindings(node):
                if qualified.split(".", 1)[0] in FRAMEWORK_MODULES:
                    names.add(local)
                    imports.add(id(node))
    if not names:
        return 0
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        if id(node) in imports:
            count += 1
            continue
        own = []
        for name, value in ast.iter_fields(node):
            if name == "handlers":
                own += [h.type for h in value if h.type is not None]
            elif name not in ("body", "orelse", "finalbody", "cases"):
                own += value if isinstance(value, list) else [value]
        parts = [p for p in own if isinstance(p, ast.AST)]
        if any(isinstance(n, ast.Name) and n.id in names for p in parts for n in ast.walk(p)):
            count += 1
    return count


def test_footprint_matches_its_definition_on_real_code() -> None:
    root = Path(__file__).resolve().parents[2]
    files = sorted([*root.glob("samples/**/*.py"), *root.glob("migrate/**/*.py")])
    keras_spec = importlib.util.find_spec("keras")  # located, not imported
    if keras_spec is not None and keras_spec.submodule_search_locations:
        keras_root = Path(list(keras_spec.submodule_search_locations)[0])
        files += sorted(keras_root.glob("src/layers/**/*.py"))[:150]
    checked = 0
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert count_tf_statements(tree) == _footprint_by_definition(tree), path
        checked += _footprint_by_definition(tree) > 0
    assert checked > 50  # the comparison saw plenty of framework statements


BLOCKS = """\
import tensorflow as tf
from tensorflow import keras as K

@tf.function
def f(x, y=tf.constant(1)):
    with tf.name_scope("a"), open("p") as handle:
        a = 1; b = tf.ones(2)
        for i in range(3):
            pass
        else:
            c = [tf.zeros(j) for j in range(i)]
    while tf.reduce_any(x):
        x = lambda z: K.backend.mean(z)
    try:
        pass
    except (tf.errors.OpError, ValueError) as error:
        raise
    except* KeyError:
        pass
    finally:
        d = f"{tf.__version__}"
    match x:
        case tf.Tensor() if tf.rank(x):
            e = 1
        case [1, *rest] if rest:
            g = tf.rank(rest)
        case _:
            pass
    return x

class L(K.layers.Layer, metaclass=type(tf.Module)):
    async def call(self, inputs):
        async with tf.device("cpu"):
            return [await tf.sleep(x) async for x in inputs]
"""


def test_footprint_matches_its_definition_on_every_kind_of_block() -> None:
    """Headers and bodies of every compound statement, decorators, handlers, ``case``
    patterns and guards (which are no statement's), several statements on a line."""
    tree = ast.parse(BLOCKS.replace("except* KeyError", "except KeyError"))
    assert count_tf_statements(tree) == _footprint_by_definition(tree) == 14
    star = ast.parse(BLOCKS.replace("    except (tf.errors", "    except* (tf.errors"))
    assert count_tf_statements(star) == _footprint_by_definition(star) == 14


def test_footprint_read_from_disk_when_engine_does_not_say(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import tensorflow as tf\nx = tf.ones(3)\ny = 2\n")
    report = FileReport(path="m.py", uses_tensorflow=True, findings=[make("m.py", 2)])
    data = build(RunResult([report]), root=tmp_path)
    assert data.files[0].tf_statements == 2
    assert data.files[0].score == 50.0
    assert build(RunResult([report])).files[0].score is None  # no root, no footprint


# -- JSON ------------------------------------------------------------------------


def test_json_validates_against_its_schema(result: RunResult) -> None:
    schema = json.loads(JSON_SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    data = _json(result, backend_pins=[BackendPin("ci.yml", 3, "KERAS_BACKEND", "jax", "ci")])
    jsonschema.Draft202012Validator(schema).validate(data)
    assert list(data) == ["version", "summary", "files", "findings"]
    first = data["findings"][0]
    assert tuple(first)[: len(FINDING_FIELDS)] == FINDING_FIELDS
    assert data["summary"]["backend"]["pinned"] is True
    assert _json(result)["summary"]["backend"] == {"checked": False}


def test_json_schema_rejects_a_broken_report(result: RunResult) -> None:
    validator = jsonschema.Draft202012Validator(json.loads(JSON_SCHEMA.read_text()))
    data = _json(result)
    data["findings"][0]["severity"] = "fatal"
    data["findings"][1]["path"] = "/abs/path.py"
    del data["summary"]["portability"]
    assert len(list(validator.iter_errors(data))) == 3


def test_findings_without_fingerprint_get_a_stable_one(result: RunResult) -> None:
    result.files[-1].findings[0].fingerprint = ""  # as the runner makes KM901 for a bad file
    first = _json(result)["findings"]
    assert all(len(f["fingerprint"]) == 16 for f in first)
    assert first == _json(result)["findings"]


# -- SARIF -----------------------------------------------------------------------


def _sarif(result: RunResult) -> dict:
    return json.loads(render(result, "sarif"))


def test_sarif_validates_against_the_2_1_0_structure(result: RunResult) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    log = _sarif(result)
    jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")


def test_sarif_as_github_code_scanning_wants_it(result: RunResult) -> None:
    run = _sarif(result)["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "kmigrate" and driver["version"] and driver["informationUri"]
    rules = driver["rules"]
    assert [r["id"] for r in rules] == sorted(r["id"] for r in rules)
    for rule in rules:
        assert len(rule["shortDescription"]["text"]) <= MAX_DESCRIPTION
        assert len(rule["fullDescription"]["text"]) <= MAX_DESCRIPTION
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["helpUri"].startswith("https://")
        assert rule["defaultConfiguration"]["level"] in ("note", "warning", "error")
    assert len(run["results"]) == 6
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        location = res["locations"][0]["physicalLocation"]
        uri = location["artifactLocation"]["uri"]
        assert not uri.startswith("/") and "://" not in uri
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        region = location["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert region["startColumn"] == 5  # 0-based column 4 -> 1-based 5
        assert res["partialFingerprints"]["kmigrate/v1"]
    levels = {r["ruleId"]: r["level"] for r in run["results"] if r["ruleId"] in ("KM301", "KM901")}
    assert levels == {"KM301": "error", "KM901": "error"}
    assert "note" in {r["level"] for r in run["results"]}  # info -> note


def test_sarif_descriptions_are_clipped() -> None:
    clipped = clip("word " * 1000)
    assert len(clipped) <= MAX_DESCRIPTION and clipped.endswith("\u2026")
    assert clip("short") == "short"


def test_sarif_uri_is_percent_encoded() -> None:
    odd = RunResult([file_report("my dir/a#b.py", [make("my dir/a#b.py", 1)])])
    uri = _sarif(odd)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert uri["artifactLocation"]["uri"] == "my%20dir/a%23b.py"


# -- GitHub, GitLab ----------------------------------------------------------------


def test_github_annotations_escape_as_the_runner_requires() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    finding = make("dir,x/a:b.py", 3, "KM104", message="100% broken\nsecond line: a,b")
    text = render(RunResult([file_report("dir,x/a:b.py", [finding])]), "github")
    first = text.splitlines()[0]
    assert first.startswith("::warning file=dir%2Cx/a%3Ab.py,line=3,col=5,endLine=3,endColumn=21,")
    assert "title=KM104 legacy-keras-pinned::" in first
    message = first.split("::", 2)[2]
    assert message.startswith("100%25 broken second line: a,b")  # one line; , and : kept
    assert text.splitlines()[-1].startswith("::notice title=kmigrate::TF/Keras statements")


def test_gitlab_code_quality(result: RunResult) -> None:
    issues = json.loads(render(result, "gitlab"))
    assert len(issues) == 6
    assert len({i["fingerprint"] for i in issues}) == 6
    for issue in issues:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["lines"]["begin"] >= 1
        assert not issue["location"]["path"].startswith("/")
    severities = {i["check_name"]: i["severity"] for i in issues}
    assert severities["KM901"] == "critical" and severities["KM301"] == "major"


# -- Markdown ----------------------------------------------------------------------


def test_markdown_for_a_pull_request(result: RunResult) -> None:
    text = render(result, "markdown")
    assert text.startswith("## kmigrate")
    assert "| Rule | Findings | Fixable | Manual | Effort |" in text
    assert "### Portability by folder" in text and "### Start with these files" in text
    assert text.count("<details>") == text.count("</details>") == 3  # one per file left
    assert "- [ ] `pkg/layers.py:5:5` **KM104** (model)" in text
    assert "(note, " not in text and "Notes (1, nothing to do" in text  # summarised, not listed
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "\\| pipe" in text


def test_markdown_checklist_is_capped(result: RunResult) -> None:
    text = render(result, "markdown", max_items=2)
    assert "- [ ]" in text and text.count("- [ ]") == 2
    assert "more (see the full report)" in text


def test_markdown_fits_a_pull_request_comment_with_manual_work_first() -> None:
    """GitHub refuses a comment over 65,536 characters: on a repository with thousands of
    findings the checklist stops in time, lists manual findings only, notes summarised."""
    files = []
    for n in range(400):
        findings = [
            make(f"pkg/module_{n}.py", line, "KM201", severity=Severity.INFO, message="n" * 150)
            for line in range(1, 6)
        ]
        findings.append(make(f"pkg/module_{n}.py", 9, "KM601", message="m" * 150))
        files.append(file_report(f"pkg/module_{n}.py", findings))
    text = render(RunResult(files), "markdown", max_items=10_000)
    assert len(text) <= 65_536
    assert text.count("- [ ]") > 100 and "**KM201**" not in text
    assert "Notes (2000, nothing to do" in text
    assert "more (see the full report)" in text


# -- HTML --------------------------------------------------------------------------

_VOID = {"meta", "br", "img", "link", "input", "hr", "rect", "col"}


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.extend(attrs)
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.extend(attrs)

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _html(result: RunResult, root: Path | None = None) -> tuple[str, _Collector]:
    page = render(result, "html", root=root)
    parser = _Collector()
    parser.feed(page)
    parser.close()
    return page, parser


def test_html_is_one_self_contained_escaped_file(result: RunResult, tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    lines = [f"x{i} = 1" for i in range(1, 20)]
    lines[11] = f"tf.print('{EVIL}')  # line 12"
    (tmp_path / "pkg" / "train.py").write_text("\n".join(lines) + "\n")
    page, parsed = _html(result, tmp_path)
    assert parsed.errors == [] and parsed.stack == []
    assert parsed.tags.count("script") == 1 and "img" not in parsed.tags  # the report's own
    assert not [name for name, _ in parsed.attributes if name.startswith("on")]
    assert not [
        v
        for n, v in parsed.attributes
        if n in ("src", "href") and v and "//" in v and not v.startswith("https://github.com/")
    ]  # only rule-doc links, no resources
    text = "".join(parsed.text)
    assert f"loop {EVIL} | pipe" in text  # the message, shown as text
    assert f"tf.print('{EVIL}')" in text  # the source line, shown as text
    assert "<method>.save" in text  # the symbol too
    assert EVIL not in page and "&lt;script&gt;" in page
    assert "Content-Security-Policy" in page and "<style>" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_html_chart_is_well_formed_svg(result: RunResult) -> None:
    page, _ = _html(result)
    svg = page[page.index("<svg") : page.index("</svg>") + len("</svg>")]
    tree = ET.fromstring(svg)
    bars = [r for r in tree.iter("{http://www.w3.org/2000/svg}rect") if r.get("height") == "16"]
    assert len(bars) == 3  # one folder with TF code scored (pkg): track, after, now
    widths = sorted(float(b.get("width")) for b in bars)
    # 20 statements in pkg: 3 lines blocked now (85%), 2 after apply (90%), the track
    assert widths == [pytest.approx(480 * 0.85), pytest.approx(480 * 0.9), 480]


# -- table -------------------------------------------------------------------------


def test_table_fits_80_columns(result: RunResult) -> None:
    long_path = "very/deeply/nested/package/with/a/long/module_name_for_testing_widths.py"
    long = make(long_path, 123456, "KM301", message="x" * 200 + " " + "word " * 40)
    result.files.append(file_report(long_path, [long]))
    text = render(result, "table", width=80, backend_pins=[])
    too_wide = [line for line in text.splitlines() if len(line) > 80]
    assert too_wide == []
    for header in ("Findings by rule", "Portability by folder", "Top ", "kmigrate portability"):
        assert header in text
    assert "not pinned: set KERAS_BACKEND explicitly" in text
    assert "\x1b[" not in text  # no colour codes unless asked


def test_table_with_no_findings() -> None:
    text = render(RunResult([file_report("a.py", [])]), "table", width=80)
    assert "No findings" in text and "100%" in text


def test_every_format_renders_an_empty_run() -> None:
    for fmt in FORMATS:
        assert render(RunResult([]), fmt)


def test_statistics_lines(result: RunResult) -> None:
    from kmigrate.report.statistics import render_statistics

    lines = render_statistics(build(result)).splitlines()
    assert lines[0].split()[:2] == ["2", "KM601"]
    assert any("KM102  [*] tf-keras-import" in line for line in lines)
    data = json.loads(render_statistics(build(result), "json"))
    assert data[0] == {
        "code": "KM601",
        "name": "gradient-tape-loop",
        "count": 2,
        "fixable": 0,
        "manual": 1,
    }


# -- backend pins ------------------------------------------------------------------


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_backend_pins_found_in_ci_docker_env_code_and_notebooks(tmp_path: Path) -> None:
    _write(tmp_path, ".github/workflows/ci.yml", "env:\n  KERAS_BACKEND: ${{ matrix.backend }}\n")
    _write(tmp_path, "Dockerfile", "FROM python\nENV KERAS_BACKEND jax\n# KERAS_BACKEND=torch\n")
    _write(tmp_path, "tox.ini", "[testenv]\nsetenv =\n    KERAS_BACKEND = torch\n")
    _write(tmp_path, "Makefile", "test:\n\tKERAS_BACKEND?=jax\n\techo $$KERAS_BACKEND\n")
    _write(tmp_path, ".env", "TF_USE_LEGACY_KERAS=1\n")
    _write(tmp_path, "conf/keras.json", '{\n  "floatx": "float32",\n  "backend": "jax"\n}\n')
    _write(
        tmp_path,
        "src/app.py",
        "import os\nos.environ['KERAS_BACKEND'] = 'jax'\n"
        "os.environ.setdefault('KERAS_BACKEND', 'torch')\n"
        "b = os.environ.get('KERAS_BACKEND', 'tensorflow')\n"
        "if os.environ['KERAS_BACKEND'] == 'jax':\n    pass\n",
    )
    notebook = {"cells": [{"cell_type": "code", "source": ["%env KERAS_BACKEND=jax\n"]}]}
    _write(tmp_path, "nb/demo.ipynb", json.dumps(notebook))
    pins = find_backend_pins([tmp_path], tmp_path, ["src/app.py", "nb/demo.ipynb"])
    found = {(p.path, p.line, p.variable, p.value, p.kind) for p in pins}
    assert found == {
        (".github/workflows/ci.yml", 2, "KERAS_BACKEND", "${{ matrix.backend }}", "ci"),
        ("Dockerfile", 2, "KERAS_BACKEND", "jax", "docker"),
        ("tox.ini", 3, "KERAS_BACKEND", "torch", "ci"),
        ("Makefile", 2, "KERAS_BACKEND", "jax", "ci"),
        (".env", 1, "TF_USE_LEGACY_KERAS", "1", "env-file"),
        ("conf/keras.json", 3, "keras.json", "jax", "keras-config"),
        ("src/app.py", 2, "KERAS_BACKEND", "jax", "code"),
        ("src/app.py", 3, "KERAS_BACKEND", "torch", "code"),
        ("nb/demo.ipynb", 1, "KERAS_BACKEND", "jax", "notebook"),
    }
    status = BackendStatus(tuple(pins))
    assert status.pinned and status.legacy_keras
    advice = " ".join(status.advice())
    assert "TF_USE_LEGACY_KERAS" in advice and "before the first `import keras`" in advice


def test_no_backend_pin_gives_the_advice(tmp_path: Path) -> None:
    _write(tmp_path, "a.py", "import keras\n")
    _write(tmp_path, "README.md", "Run with KERAS_BACKEND=jax\n")  # docs are not config
    status = BackendStatus(tuple(find_backend_pins([tmp_path], tmp_path, ["a.py"])))
    assert not status.pinned
    assert "Set KERAS_BACKEND explicitly" in status.advice()[0]
    assert status.headline == "not pinned: set KERAS_BACKEND explicitly"


# -- end to end: `kmigrate scan` ------------------------------------------------------


@pytest.fixture(scope="module")
def sample_tree(tmp_path_factory) -> Path:
    """A copy of samples/ (so the scan sees a fixed tree) with its own pyproject root."""
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(ROOT / "samples", root / "samples")
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return root


def _scan(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kmigrate", "scan", "samples", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_scan_output_is_byte_identical_and_valid(sample_tree: Path, fmt: str) -> None:
    one = _scan(sample_tree, "-f", fmt, "-o", f"one.{fmt}", "-j", "1")
    two = _scan(sample_tree, "-f", fmt, "-o", f"two.{fmt}", "-j", "4", "-q")
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    first = (sample_tree / f"one.{fmt}").read_bytes()
    assert first == (sample_tree / f"two.{fmt}").read_bytes()
    assert str(sample_tree).encode() not in first  # no absolute path
    assert b'"custom_layers/models.py"' in first  # relative to the samples' own project
    assert "report written to one." in one.stderr and two.stderr == ""
    data = json.loads(first)
    if fmt == "json":
        schema = json.loads(JSON_SCHEMA.read_text())
        jsonschema.Draft202012Validator(schema).validate(data)
        assert data["summary"]["portability"]["tf_statements"] > 0
    else:
        jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text())).validate(data)


def test_scan_samples_prints_the_table(sample_tree: Path) -> None:
    run = _scan(sample_tree)
    assert run.returncode == 0, run.stderr
    assert "kmigrate portability report" in run.stdout
    assert "Findings by rule" in run.stdout and "custom_layers/models.py" in run.stdout


def test_scan_statistics(sample_tree: Path) -> None:
    run = _scan(sample_tree, "--statistics")
    lines = run.stdout.splitlines()
    assert lines and all(line.split()[1].startswith("KM") for line in lines)
    counts = [int(line.split()[0]) for line in lines]
    assert counts == sorted(counts, reverse=True)


def test_every_format_labels_a_note_as_the_counts_do(result: RunResult) -> None:
    """An INFO finding that is not fixed (an import kept until its uses are rewritten,
    TensorFlow outside model code) asks nothing of a person: the counts leave it out of
    "manual", and every format labels it "note", not "manual"."""
    data = _json(result)
    line_7 = [f for f in data["findings"] if f["path"] == "pkg/layers.py" and f["line"] == 7]
    assert line_7 and line_7[0]["severity"] == "info" and not line_7[0]["fixable"]
    table = render(result, "table", width=120, backend_pins=[])
    row = next(line for line in table.splitlines() if "7:5" in line and "KM601" in line)
    assert " note " in row and "manual" not in row
    assert "KM301 manual" in " ".join(table.split())
    github = render(result, "github")
    (annotation,) = [a for a in github.splitlines() if "line=7," in a and "layers.py" in a]
    assert "(other code, note)" in annotation
    gitlab = json.loads(render(result, "gitlab"))
    assert any(i["description"].endswith("(note)") for i in gitlab)
    page = render(result, "html")
    assert '<span class="note">note</span>' in page and '<span class="manual">manual</span>' in page


def test_every_effort_is_a_multiple_of_a_quarter_minute() -> None:
    """The report counts findings by kind and multiplies a kind's effort by its count
    (report/summary.py); that gives the float that adding it once per finding gives only
    while efforts are exact in binary, as quarter minutes are."""
    from kmigrate.rules.effort import CONTEXT_FACTOR, SEVERITY_FACTOR, minutes_for
    from kmigrate.rules.registry import all_rules

    for rule in all_rules():
        for context in CONTEXT_FACTOR:
            for severity in SEVERITY_FACTOR:
                value = minutes_for(rule.id, context, rule, severity)
                assert (value * 4).is_integer() and 0 <= value < 2**20, (rule.id, value)
