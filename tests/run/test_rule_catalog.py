"""The stored rule table (run/rule_catalog.py) says what the rule classes say, is
remade when kmigrate's code changes, is a miss when it is not this machine's, and lets
a warm re-scan run without importing a rule module."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.rules.registry import all_rules, select_rules, unknown_codes
from kmigrate.run import rule_catalog
from kmigrate.run.rule_catalog import CATALOG_FOLDER, RuleFacts, rule_facts
from kmigrate.store import cache as cache_module


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.delenv(cache_module.ENV_DIR, raising=False)
    root = tmp_path / "project"
    root.mkdir()
    (root / "layers.py").write_text("import tensorflow as tf\nY = tf.reduce_mean(1)\n")
    return root


def _tables(root: Path) -> list[Path]:
    return sorted((root / cache_module.CACHE_DIR_NAME / CATALOG_FOLDER).glob("rules.*"))


def test_the_stored_table_says_what_the_classes_say(project, monkeypatch) -> None:
    expected = tuple(
        RuleFacts(r.id, r.name, r.severity, getattr(r, "effort_minutes", None)) for r in all_rules()
    )
    assert rule_facts(None) == expected
    assert rule_facts(project) == expected  # made from the classes, and stored
    (table,) = _tables(project)

    def no_classes():
        raise AssertionError("the rule classes were read")

    monkeypatch.setattr(rule_catalog, "_from_classes", no_classes)
    assert rule_facts(project) == expected  # read back from the store
    for codes in (["KM2"], ["KM201", "km5"], [expected[0].name], ["KM9"], []):
        for ignore in ([], ["KM20"], ["KM2", expected[-1].name]):
            chosen = [r.id for r in select_rules(codes or None, ignore or None, expected)]
            assert chosen == [r.id for r in select_rules(codes or None, ignore or None)]
    assert unknown_codes(["KM2", "KM777", "nope"], expected) == ["KM777", "nope"]
    assert unknown_codes(["KM2", "KM777", "nope"]) == ["KM777", "nope"]
    assert table.is_file()


def test_a_new_build_of_kmigrate_makes_a_new_table(project, monkeypatch) -> None:
    rule_facts(project)
    (old,) = _tables(project)
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "an edited rule")
    calls = []
    real = rule_catalog._from_classes
    monkeypatch.setattr(rule_catalog, "_from_classes", lambda: calls.append(1) or real())
    assert rule_facts(project) == real()
    assert calls == [1]
    (new,) = _tables(project)  # the other build's table is dropped
    assert new != old


def test_a_table_this_machine_did_not_sign_is_a_miss(project, monkeypatch, tmp_path) -> None:
    rule_facts(project)
    (table,) = _tables(project)
    forged = [["KM201", "x", "error", 1]]
    body = json.dumps(forged).encode()
    table.write_bytes(cache_module._MAGIC + b"0" * 64 + b"\n" + body)  # a wrong MAC
    assert rule_facts(project) == rule_facts(None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "another-user"))
    assert rule_facts(project) == rule_facts(None)  # signed with another secret


def test_a_damaged_table_is_a_miss(project) -> None:
    rule_facts(project)
    (table,) = _tables(project)
    store = cache_module.side_store(project, CATALOG_FOLDER)
    name = table.name.partition(".")[2]
    for value in ([["KM201", "x", "fatal", None]], [["KM201", 3, "error", None]], {}, [[1]]):
        assert store.store_value("rules", name, value)
        assert rule_facts(project) == rule_facts(None)


_PROBE = textwrap.dedent(
    """
    import json, sys
    from kmigrate.cli.main import main
    try:
        main(sys.argv[1:], standalone_mode=False)
    except SystemExit:
        pass
    print(json.dumps(sorted(sys.modules)))
    """
)

# What a warm run (every result and the rule table from the cache) must not import: the
# rules and the ops catalog they parse, the analysis, LibCST, the ML frameworks, and what
# only some runs use (rich: a progress bar; difflib: `apply --diff`; tomllib: a
# pyproject.toml, which this project lacks; the facts guess and notebooks: files to analyse).
_WARM_RUN_NEVER = (
    "kmigrate.rules.km1_imports",
    "kmigrate.rules.km2_ops",
    "kmigrate.rules.km3_random",
    "kmigrate.rules.km4_saving",
    "kmigrate.rules.km5_keras2",
    "kmigrate.rules.km6_backend",
    "kmigrate.rules.km9_internal",
    "kmigrate.rules.ops_catalog",
    "kmigrate.rules.base",
    "kmigrate.engine.analyze",
    "kmigrate.engine.contexts",
    "kmigrate.engine.module_info",
    "kmigrate.engine.rule_api",
    "kmigrate.engine.sites",
    "kmigrate.engine.suppress",
    "kmigrate.engine.tree_index",
    "kmigrate.project.facts_guess",
    "kmigrate.engine.notebook",
    "libcst",
    "tensorflow",
    "keras",
    "tf_keras",
    "jax",
    "torch",
    "rich",
    "difflib",
    "tomllib",
)


def _among(module: str, names: tuple[str, ...]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)


@pytest.mark.parametrize(
    "command",
    [["scan", ".", "--format", "json", "--output", "r.json"], ["check", "layers.py"]],
    ids=["scan", "check"],
)
def test_a_warm_run_imports_no_rule_and_no_analysis(project, command) -> None:
    """Every result comes from the cache and the rule table too: no rule module (nor the
    ops catalog they parse) and none of the analysis is imported; a cold run imports
    them. Long options only: click's parser imports difflib to suggest a long option
    whenever it meets a short one (``-q``), which is not kmigrate's doing."""

    def imported() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, *command, "--quiet"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        return json.loads(done.stdout.splitlines()[-1])

    cold = imported()
    assert {"kmigrate.rules.ops_catalog", "kmigrate.engine.analyze"} <= set(cold)
    warm = imported()
    assert "kmigrate.store.cache" in warm  # the probe ran the command
    assert [m for m in warm if _among(m, _WARM_RUN_NEVER)] == []
