"""Shared fixtures. Fast tests never import TensorFlow, Keras, JAX or PyTorch."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


@pytest.fixture
def kmigrate_cmd() -> list[str]:
    """The console entry point, run with this interpreter."""
    return [sys.executable, "-m", "kmigrate"]


@pytest.fixture
def clean_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("KERAS_BACKEND", None)
    env.pop("TF_USE_LEGACY_KERAS", None)
    return env
