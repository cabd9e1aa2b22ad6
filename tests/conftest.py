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


@pytest.fixture(scope="session", autouse=True)
def kmigrate_is_this_checkout() -> None:
    """Every test, in process or through ``python -m kmigrate`` from any folder, must
    exercise this checkout's kmigrate; a foreign install would make every green a lie."""
    from checkout import imported_files, outside_checkout

    import kmigrate
    import kmigrate.rules

    here = [Path(kmigrate.__file__).resolve(), Path(kmigrate.rules.__file__).resolve()]
    assert outside_checkout(here) == [], f"tests import kmigrate from {here}, not {ROOT}"
    there = imported_files()
    assert len(there) == 2 and outside_checkout(there) == [], (
        f"`python -m kmigrate` from another folder imports {there}, not {ROOT}"
    )
