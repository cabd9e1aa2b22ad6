"""KM208 replaces a module-level chain of imports chosen by ``K.backend()`` with its
'tensorflow' branch; the ``K.backend()`` calls in its tests go with the chain, so scan
reports no manual KM202 for them (it said a person had work there that apply does)."""

from __future__ import annotations

import textwrap

from kmigrate.api import apply_to_text
from kmigrate.run.runner import scan_text

CHAIN = textwrap.dedent(
    """
    from keras import backend as K

    if K.backend() == 'theano':
        from .theano_backend import *
    elif K.backend() == 'tensorflow':
        from .tensorflow_backend import *
    elif K.backend() == 'cntk':
        from .cntk_backend import *
    """
)


def test_the_backend_calls_of_a_replaced_chain_have_no_finding_of_their_own() -> None:
    assert "K.backend" not in apply_to_text(CHAIN)
    findings = scan_text(CHAIN)
    assert [f.symbol for f in findings if f.symbol == "K.backend"] == []
    (chain,) = [f for f in findings if f.rule == "KM208"]
    assert chain.fix is not None


def test_a_chain_that_stays_keeps_its_backend_findings() -> None:
    # a branch holding more than imports: KM208 leaves the chain, KM202 says why at each test
    stays = CHAIN + "    SESSION = None\n"
    assert "K.backend" in apply_to_text(stays)
    findings = [f for f in scan_text(stays) if f.symbol == "K.backend"]
    assert len(findings) == 3 and all(f.rule == "KM202" and f.fix is None for f in findings)
