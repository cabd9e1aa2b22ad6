"""The report on an original that could not run as the reference: which attempt failed
and why, the legacy cause when the error shows one, and what the user can do."""

from __future__ import annotations

import importlib.util

import pytest

from kmigrate.parity.keras2_alias import Keras2ModuleNotFoundError
from kmigrate.parity.reference_help import (
    Attempt,
    attempt_notes,
    legacy_cause,
    reference_hint,
)
from kmigrate.parity.report import ErrorInfo
from kmigrate.parity.worker import _error_info


def _error(type_: str, message: str, stage: str = "build") -> ErrorInfo:
    return ErrorInfo(stage=stage, type=type_, message=message)


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (
            _error(
                "OperatorNotAllowedInGraphError",
                "Using a symbolic `tf.Tensor` as a Python `bool` is not allowed.",
            ),
            "compared tensors as objects",
        ),
        (
            _error(
                "OperatorNotAllowedInGraphError",
                "Iterating over a symbolic `tf.Tensor` is not allowed.",
            ),
            "list of inputs",
        ),
        (
            _error("AttributeError", "module 'tensorflow' has no attribute 'depth_to_space'"),
            "TensorFlow 1.x API",
        ),
        (_error("TypeError", "Got an unexpected keyword argument 'keep_dims'"), "keepdims"),
        (
            _error("AttributeError", "module 'keras.backend' has no attribute 'int_shape'"),
            "Keras 2 backend function",
        ),
        (
            _error("Keras2ModuleNotFoundError", "keras.legacy is a Keras 2.x module", "load"),
            "Keras 2.x module",
        ),
    ],
)
def test_legacy_causes_are_named(error, words):
    assert words in legacy_cause(error)


def test_an_ordinary_error_has_no_legacy_cause():
    assert legacy_cause(_error("ValueError", "shapes (3,) and (4,) are incompatible")) is None


def test_each_attempt_says_how_it_ended():
    attempts = [
        Attempt(
            3,
            "tensorflow",
            _error("AttributeError", "module 'keras.backend' has no attribute 'int_shape'"),
        ),
        Attempt(2, "tensorflow", _error("TypeError", "unexpected keyword argument 'keep_dims'")),
    ]
    assert attempt_notes(attempts) == [
        "attempt 1 of 2, Keras 3 on tensorflow: failed while building the model: "
        "AttributeError: module 'keras.backend' has no attribute 'int_shape'",
        "attempt 2 of 2, Keras 2 (tf_keras) on tensorflow: failed (below)",
    ]
    hint = reference_hint(attempts, keras_choice="auto", tf_keras=True)
    assert "Keras 3 on tensorflow: the original calls a Keras 2 backend function" in hint
    assert "Keras 2 (tf_keras) on tensorflow: the original passes a TensorFlow 1.x argument" in hint
    assert "--reference-keras" not in hint  # both were tried
    assert "give that copy as --reference" in hint


def test_the_keras_not_tried_is_offered():
    keras2 = [Attempt(2, "tensorflow", _error("ValueError", "bad shape"))]
    assert "--reference-keras 3" in reference_hint(keras2, keras_choice="auto", tf_keras=True)
    keras3 = [Attempt(3, "tensorflow", _error("ValueError", "bad shape"))]
    hint = reference_hint(keras3, keras_choice="3", tf_keras=True)
    assert "--reference-keras 2" not in hint and "--reference-backend" in hint
    hint = reference_hint(keras3, keras_choice="3", tf_keras=False)
    assert "pip install tf-keras" in hint
    assert attempt_notes(keras3) == []


def test_a_missing_keras2_module_is_one_sentence_with_the_import_site(tmp_path):
    path = tmp_path / "legacy_layers.py"
    path.write_text(
        "from kmigrate.parity.keras2_alias import Keras2ModuleNotFoundError as E\n"
        "raise E('keras.legacy is a Keras 2.x module', name='keras.legacy')\n"
    )
    spec = importlib.util.spec_from_file_location("legacy_layers", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(Keras2ModuleNotFoundError) as raised:
        spec.loader.exec_module(module)
    info = _error_info("load", raised.value)
    assert info["traceback"] == ""
    assert info["message"] == (
        f"keras.legacy is a Keras 2.x module; imported at {path}:2: "
        "raise E('keras.legacy is a Keras 2.x module', name='keras.legacy')"
    )
    assert ErrorInfo.from_dict(info).headline == info["message"]
