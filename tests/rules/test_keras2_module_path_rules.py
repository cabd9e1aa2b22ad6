"""KM103 at ``from keras.utils import np_utils`` (a module Keras 3 does not have): where
every use is a name KM103 moves itself (``np_utils.to_categorical`` ->
``keras.utils.to_categorical``), apply rewrites the uses and drops the unused import, so
scan reports no manual finding at the import; any other use keeps it."""

from __future__ import annotations

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text

HEADER = "import keras\nfrom keras.utils import np_utils\n\n"


def _import_findings(source: str) -> list:
    return [f for f in scan_text(source) if f.rule == "KM103" and f.span.line == 2]


def test_an_import_whose_every_use_moves_has_no_finding_of_its_own() -> None:
    source = (
        HEADER + "y = np_utils.to_categorical([0, 1], 2)\nz = np_utils.to_categorical([1], 2)\n"
    )
    out = apply_to_text(source)
    assert "np_utils" not in out and out.count("keras.utils.to_categorical(") == 2, out
    assert _import_findings(source) == []
    uses = [f for f in scan_text(source) if f.symbol == "keras.utils.np_utils.to_categorical"]
    assert len(uses) == 2 and all(f.fix is not None for f in uses)


def test_an_import_used_otherwise_keeps_its_finding() -> None:
    for use in ("helpers = np_utils\n", "def f(np_utils):\n    return np_utils.to_categorical\n"):
        source = HEADER + "y = np_utils.to_categorical([0, 1], 2)\n" + use
        assert "np_utils" in apply_to_text(source)
        (finding,) = _import_findings(source)
        assert finding.fix is None and "is not in Keras 3" in finding.message
