"""Standalone Keras 2 originals import Keras 2.x module paths that tf_keras keeps under
other names (`keras.engine`, `keras.utils.generic_utils`): the Keras 2 reference serves
them from where tf_keras has them (parity/keras2_paths.py), says clearly which ones it
has nothing for, and parity then compares such an original with its conversion."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.parity.runner import ParityOptions, run_parity
from tests.backend_run import run_on_backend

pytestmark = pytest.mark.backends

FIXTURES = Path(__file__).parents[1] / "fixtures" / "parity" / "keras2_paths"
BACKENDS = ["tensorflow", "jax", "torch"]


def test_every_keras2_path_imports_with_the_names_legacy_code_uses(tmp_path):
    code = textwrap.dedent(
        """
        import importlib, json
        from kmigrate.parity import keras2_alias
        from kmigrate.parity.keras2_paths import MOVED_MODULES, REMOVED_MODULES
        assert keras2_alias.install()
        import tf_keras
        lacking = {}
        for path, entry in MOVED_MODULES.items():
            module = importlib.import_module(path)
            names = [name for name in entry.uses if not hasattr(module, name)]
            if names:
                lacking[path] = names
        removed = {}
        for path in REMOVED_MODULES:
            try:
                importlib.import_module(path)
                removed[path] = "imported"
            except keras2_alias.Keras2ModuleNotFoundError as error:
                removed[path] = str(error)
        from keras.engine import Layer
        from keras.engine.base_layer import Layer as BaseLayer
        from keras.layers.normalization.layer_normalization import LayerNormalization
        from keras.utils.generic_utils import get_custom_objects
        from tf_keras.src.saving.object_registration import get_custom_objects as registry
        try:
            import keras.engine.nowhere
            unknown = "imported"
        except ImportError as error:
            unknown = str(error)
        print("REPORT" + json.dumps({
            "lacking": lacking,
            "removed": removed,
            "unknown": unknown,
            "same": Layer is BaseLayer is tf_keras.layers.Layer
            and LayerNormalization is tf_keras.layers.LayerNormalization
            and get_custom_objects is registry,
            "public": importlib.import_module("keras.layers") is tf_keras.layers,
        }))
        """
    )
    found = run_on_backend([sys.executable, "-c", code], "tensorflow", tmp_path, legacy_keras=True)
    assert found["lacking"] == {}
    for path, message in found["removed"].items():
        assert message.startswith(f"{path} is a Keras 2.x module that tf_keras does not provide")
    assert "No module named 'keras.engine.nowhere'" in found["unknown"]
    assert found["same"] and found["public"]


def _parity(converted: Path, original: Path, **options):
    return run_parity(
        f"{converted}:build_model",
        reference=f"{original}:build_model",
        options=ParityOptions(backends=BACKENDS, **options),
    )


def test_the_keras2_original_runs_and_its_conversion_passes(tmp_path):
    report = _parity(FIXTURES / "converted" / "models.py", FIXTURES / "original" / "models.py")
    assert report.passed, json.dumps(report.to_dict(), indent=1)[:3000]
    assert report.reference.keras.endswith("(tf_keras)")
    assert [r.backend for r in report.runs] == BACKENDS


def test_a_wrong_conversion_of_it_fails(tmp_path):
    wrong = tmp_path / "models.py"
    text = (FIXTURES / "converted" / "models.py").read_text()
    wrong.write_text(text.replace("ops.std(", "ops.var("))
    assert wrong.read_text() != text
    report = _parity(wrong, FIXTURES / "original" / "models.py")
    assert report.reference.status == "reference"
    assert not report.passed
    assert {r.status for r in report.runs} == {"fail"}


def test_a_keras2_module_tf_keras_lacks_is_named_without_a_traceback(tmp_path):
    original = tmp_path / "original" / "models.py"
    original.parent.mkdir()
    source = (FIXTURES / "original" / "models.py").read_text()
    original.write_text("from keras.legacy import interfaces\n" + source)
    report = _parity(FIXTURES / "converted" / "models.py", original, reference_keras="2")
    assert not report.passed
    error = report.reference.error
    assert error is not None and error.type == "Keras2ModuleNotFoundError"
    assert error.traceback == ""
    assert error.message.startswith("keras.legacy is a Keras 2.x module that tf_keras")
    assert f"imported at {original}:1: from keras.legacy import interfaces" in error.message
    assert "--reference-keras 3" in (report.reference.hint or "")
    assert {r.status for r in report.runs} == {"skipped"}
