"""The proof of the ops catalog: every automatic rewrite computes TensorFlow's numbers on
the tensorflow, jax and torch backends.

One rewrite of all cases (the real engine, ``apply_to_text(select=["KM2"])``), then one
subprocess per backend running every case (see ``harness.py``); each case x backend is
reported as its own test. The count check (every automatic catalog entry has a case)
is a fast test in ``tests/test_ops_catalog.py``.
"""

from __future__ import annotations

import pytest

from differential.cases import CASES
from differential.harness import BACKENDS, case_module, case_sources, compare, run_backends

pytestmark = pytest.mark.backends


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from kmigrate.apply import apply_to_text

    original = case_module(CASES)
    rewritten = apply_to_text(original, select=["KM2"])
    outcomes = run_backends(CASES, rewritten, tmp_path_factory.mktemp("differential"))
    return outcomes, case_sources(rewritten, len(CASES))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "index", range(len(CASES)), ids=[f"{i}-{c.expr[:40]}" for i, c in enumerate(CASES)]
)
def test_rewrite_matches_tensorflow(results, index: int, backend: str) -> None:
    outcomes, sources = results
    case = CASES[index]
    reference = outcomes["reference"]
    assert index not in reference.errors, (
        f"the TensorFlow reference failed: {reference.errors[index]}\n  {case.expr}"
    )
    got = outcomes[backend]
    where = f"\n  TF:    {case.expr}\n  Keras: {sources[index]}"
    assert index not in got.errors, f"{backend}: {got.errors[index]}{where}"
    difference = compare(case, reference.leaves[index], got.leaves[index])
    assert not difference, f"{backend}: {difference}{where}"
