"""benchmarks/real_parity.py reads parity's verdicts: a FAIL whose original never ran is
not a conversion failure, and a run without a verdict is not a PASS."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("real_parity", ROOT / "benchmarks/real_parity.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_verdicts_are_told_apart() -> None:
    classify = _script().classify
    table = "│ jax │ 3.15.1 │ 0 │ PASS │\n"
    passed = table + "PASS: the outputs agree with the reference on tensorflow, jax, torch\n"
    failed = table + "FAIL: 2 of 3 checks failed: jax, torch\n"
    no_reference = "FAIL: the reference did not run, so nothing was compared\n"
    assert classify(passed)[0] == "PASS"
    assert classify(failed) == ("FAIL", "FAIL: 2 of 3 checks failed: jax, torch")
    assert classify(no_reference)[0] == "NO-REFERENCE"
    skipped = "NOT COMPARED: no check failed, but checks were skipped on jax (see above)\n"
    assert classify(skipped)[0] == "NOT-COMPARED"
    assert classify("Traceback ...\nImportError: no module\n") == (
        "ERROR",
        "ImportError: no module",
    )
    assert classify("")[0] == "ERROR"


def test_factories_are_the_build_functions_without_parameters(tmp_path: Path) -> None:
    module = tmp_path / "rp_models.py"
    module.write_text(
        "def build_a():\n    pass\n\ndef helper():\n    pass\n\n"
        "def build_b( ):\n    pass\n\ndef build_c(size):\n    pass\n"
    )
    assert _script().factories(module) == ["build_a", "build_b"]
