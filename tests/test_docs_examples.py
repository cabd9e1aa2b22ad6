"""The worked examples of docs/architecture.md stay true: each is run as written."""

from __future__ import annotations

import csv
import importlib.util
import io
import re
import sys
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _python_block_after(heading: str) -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_report_format_example_is_one_module_plus_its_registration(
    tmp_path: Path, monkeypatch
) -> None:
    from kmigrate import report
    from kmigrate.cli.main import main

    module_file = tmp_path / "kmigrate_doc_csv.py"
    module_file.write_text(_python_block_after("## Adding a report format"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("kmigrate_doc_csv", module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "kmigrate_doc_csv", module)
    monkeypatch.setitem(report.FORMATS, "csv", "kmigrate_doc_csv:render")

    result = CliRunner().invoke(
        main, ["scan", str(ROOT / "samples"), "-q", "--no-cache", "--format", "csv"]
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.output)))
    assert rows[0] == ["path", "line", "column", "rule", "severity", "fixable", "message"]
    assert len(rows) > 10 and {row[3][:2] for row in rows[1:]} == {"KM"}


def test_the_claims_example_takes_its_call_from_the_fallback(tmp_path: Path) -> None:
    from kmigrate.engine.analyze import analyze_module_text
    from kmigrate.engine.rule_walk import RuleSet
    from kmigrate.rules.context_spec import CONTEXT_SPEC
    from kmigrate.rules.registry import all_rules, rule_by_id
    from tests.engine.test_claims import test_every_claim_is_within_what_the_rule_asks_to_see

    module_file = tmp_path / "kmigrate_doc_glimpse.py"
    module_file.write_text(_python_block_after("### Claims and fallbacks"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("kmigrate_doc_glimpse", module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rule = module.ExtractGlimpse
    test_every_claim_is_within_what_the_rule_asks_to_see(rule)
    code = (
        "import tensorflow as tf\nimport keras\n\n\nclass G(keras.layers.Layer):\n"
        "    def call(self, x, at):\n"
        "        y = tf.image.extract_glimpse(x, (8, 8), at)\n"
        "        return tf.compat.v1.image.extract_glimpse(y, (4, 4), at)\n"
    )

    def findings(claimants):
        ruleset = RuleSet([rule_by_id("KM205"), rule], claimants=claimants)
        found = analyze_module_text("m.py", code, ruleset, CONTEXT_SPEC).findings
        return sorted((f.rule, f.span.line) for f in found)

    assert findings(all_rules()) == [("KM205", 7), ("KM205", 8), ("KM299", 7)]
    assert findings([*all_rules(), rule]) == [("KM205", 8), ("KM299", 7)]


def test_the_fact_provider_example_is_kept_through_the_store(tmp_path: Path, monkeypatch) -> None:
    from kmigrate.engine import providers_of
    from kmigrate.engine.analyze import analyze_module_text
    from kmigrate.engine.rule_walk import RuleSet
    from kmigrate.rules import registry
    from kmigrate.rules.context_spec import CONTEXT_SPEC
    from tests.project.test_resolution_cache import _counted_local, _reference, _resolve, _write

    module_file = tmp_path / "kmigrate_doc_seed.py"
    module_file.write_text(_python_block_after("### Where a new cross-file fact goes"))
    spec = importlib.util.spec_from_file_location("kmigrate_doc_seed", module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    provider, rule = module.SeededElsewhere, module.SeedSetTwice
    providers = providers_of([*registry.all_rules(), rule])  # the rule registered
    monkeypatch.setattr(registry, "fact_providers", lambda: providers)
    root = tmp_path / "repo"
    seed = "import tensorflow as tf\n\ntf.random.set_seed(1)\n"
    _write(root, {"a.py": seed, "b.py": "from tensorflow import random\n\nrandom.set_seed(2)\n"})
    _write(root, {"c.py": "import tensorflow as tf\n\nX = tf.ones(1)\n"})

    def told(facts: dict) -> dict[str, tuple]:
        return {Path(k).name: dict(f.provided)[provider.name] for k, f in facts.items()}

    made = _counted_local(monkeypatch)
    cold = _resolve(root, use_store=True)
    assert told(cold) == {"a.py": ("b.py",), "b.py": ("a.py",), "c.py": ()}
    made.clear()
    assert _resolve(root, use_store=True) == cold and made == []  # from the store
    (root / "c.py").write_text(seed)
    partial = _resolve(root, use_store=True)
    assert made == [str(root / "c.py")]
    assert partial == _reference(root)
    assert told(partial) == {
        "a.py": ("b.py", "c.py"),
        "b.py": ("a.py", "c.py"),
        "c.py": ("a.py", "b.py"),
    }
    a = str(root / "a.py")
    found = analyze_module_text(a, seed, RuleSet([rule]), CONTEXT_SPEC, facts=partial[a])
    assert [(f.rule, f.message) for f in found.findings] == [("KM398", "also seeded in b.py, c.py")]
