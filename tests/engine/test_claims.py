"""Fallback rules are shown only what no other rule claims, as each rule declares it.

KM205 (a TensorFlow call in model code no rule knows) and KM108 (a Keras 2 backend
function outside model code) report what the other rules leave; the engine computes the
claims once (``engine/claims.py``) from what each rule declares (``Rule.claims``).
"""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.api import scan_text
from kmigrate.engine import Context, Fallback
from kmigrate.engine.analyze import analyze_module_text
from kmigrate.engine.rule_walk import RuleSet
from kmigrate.rules.base import Claim, Report, Rule
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.registry import all_rules, rule_by_id


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_every_claim_is_within_what_the_rule_asks_to_see(rule: type[Rule]) -> None:
    """A rule claims only calls it is shown (as calls, or their callees as references),
    in contexts it reports in; a fallback claims nothing."""
    claims = rule.claims()
    if rule.fallback is not None:
        assert claims == ()
        return
    shown = (*rule.call_prefixes, *rule.reference_prefixes)
    for claim in claims:
        for symbol in claim.symbols:
            assert symbol in rule.call_symbols or symbol.startswith(shown), (rule.id, symbol)
        for prefix in claim.prefixes:
            assert prefix.startswith(shown), (rule.id, prefix)
        if rule.contexts is not None:
            assert claim.contexts is not None and claim.contexts <= rule.contexts, rule.id


def test_by_default_a_rule_claims_the_calls_it_asks_to_see_in_its_contexts() -> None:
    km203 = rule_by_id("KM203")
    assert km203.claims() == (Claim(km203.call_symbols, (), km203.contexts),)
    assert rule_by_id("KM901").claims() == ()  # asks to see no call


DATA_AND_LOOP = """
    import tensorflow as tf
    from tensorflow.keras import backend as K


    def to_float(image, label):
        return K.cast(image, "float32"), label


    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).map(to_float)


    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = K.cast(model(x) - y, "float32")
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """


class CastInDataCode(Rule):
    """A test-only rule that reports ``K.cast`` in tf.data code only."""

    id = "KM998"
    name = "test-cast-in-data-code"
    contexts = frozenset({Context.DATA})
    call_symbols = frozenset({"K.cast"})

    def check_call(self, site):
        yield Report(site, "a test rule's finding")


def _findings(code: str, rules: list[type[Rule]], claimants: list[type[Rule]]):
    ruleset = RuleSet(rules, claimants=claimants)
    text = textwrap.dedent(code).lstrip("\n")
    found = analyze_module_text("m.py", text, ruleset, CONTEXT_SPEC).findings
    return sorted((f.rule, f.span.line, f.context.value) for f in found)


def test_a_new_rule_that_claims_a_call_takes_it_from_the_fallback_in_its_context() -> None:
    """KM108 leaves the data map's ``K.cast`` to a rule that claims it there, and keeps
    the training loop's, which that rule does not claim (``Fallback.IN_CONTEXT``)."""
    km108 = rule_by_id("KM108")
    assert km108.fallback is Fallback.IN_CONTEXT
    before = _findings(DATA_AND_LOOP, [km108], list(all_rules()))
    assert before == [("KM108", 6, "data"), ("KM108", 14, "training-loop")]
    rules = [km108, CastInDataCode]
    after = _findings(DATA_AND_LOOP, rules, [*all_rules(), CastInDataCode])
    assert after == [("KM108", 14, "training-loop"), ("KM998", 6, "data")]


def test_a_claim_in_any_context_takes_the_call_from_an_any_context_fallback() -> None:
    """KM205 leaves a call some rule claims anywhere (here only in data code)."""
    code = """
        import tensorflow as tf
        from tensorflow import keras


        class Glimpse(keras.layers.Layer):
            def call(self, x, offsets):
                return tf.image.extract_glimpse(x, (8, 8), offsets)
        """

    class GlimpseInData(CastInDataCode):
        call_symbols = frozenset({"tf.image.extract_glimpse"})

    km205 = rule_by_id("KM205")
    assert _findings(code, [km205], list(all_rules())) == [("KM205", 7, "model")]
    assert _findings(code, [km205], [*all_rules(), GlimpseInData]) == []


def test_a_selection_does_not_change_what_a_fallback_reports() -> None:
    """Claims come from every registered rule: KM304 claims ``tf.random.normal`` in model
    code, so KM205 alone stays silent on it as in a full run."""
    code = textwrap.dedent(
        """
        import tensorflow as tf
        from tensorflow import keras


        class Noise(keras.layers.Layer):
            def call(self, x):
                return x + tf.random.normal(tf.shape(x))
        """
    )
    assert [f for f in scan_text(code, select=["KM205"]) if f["rule"] == "KM205"] == []
