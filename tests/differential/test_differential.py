"""The proof of the ops catalog: every automatic rewrite computes TensorFlow's numbers on
the tensorflow, jax and torch backends.

One rewrite of the selected cases (the real engine, ``apply_to_text(select=["KM2"])``),
then one subprocess per backend running them (see ``harness.py``); each case x backend is
reported as its own test, and ``-k`` narrows what runs (``-k gelu``: the gelu cases only).
The count check (every automatic catalog entry has a case) is a fast test in
``tests/rules/test_ops_catalog.py``.
"""

from __future__ import annotations

import pytest

from differential.cases import CASES
from differential.harness import BACKENDS, case_module, case_sources, compare, run_backends

pytestmark = pytest.mark.backends


@pytest.fixture(scope="module")
def results(request, tmp_path_factory):
    """Runs the cases of the selected tests only (``-k gelu`` runs the gelu cases), keyed by
    their index in CASES; one rewrite of them all, one subprocess per backend."""
    from kmigrate.api import apply_to_text

    wanted = sorted(
        {
            item.callspec.params["index"]
            for item in request.session.items
            if getattr(item, "module", None) is request.module and hasattr(item, "callspec")
        }
    )
    cases = [CASES[i] for i in wanted]
    rewritten = apply_to_text(case_module(cases), select=["KM2"])
    outcomes = run_backends(cases, rewritten, tmp_path_factory.mktemp("differential"))
    sources = case_sources(rewritten, len(cases))
    return {
        index: (
            {
                name: (outcome.errors.get(position, ""), outcome.leaves.get(position, []))
                for name, outcome in outcomes.items()
            },
            sources[position],
        )
        for position, index in enumerate(wanted)
    }


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "index", range(len(CASES)), ids=[f"{i}-{c.expr[:40]}" for i, c in enumerate(CASES)]
)
def test_rewrite_matches_tensorflow(results, index: int, backend: str) -> None:
    outcomes, source = results[index]
    case = CASES[index]
    reference_error, reference = outcomes["reference"]
    assert not reference_error, f"the TensorFlow reference failed: {reference_error}\n  {case.expr}"
    error, got = outcomes[backend]
    where = f"\n  TF:    {case.expr}\n  Keras: {source}"
    assert not error, f"{backend}: {error}{where}"
    difference = compare(case, reference, got)
    assert not difference, f"{backend}: {difference}{where}"
