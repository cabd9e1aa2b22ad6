"""The data function an undecided finding names ("`f` calls `g`, data code") is the
first in the module's walk order, whatever the nodes' ids (memory addresses, which
change from run to run: the same scan named different functions)."""

from __future__ import annotations

from kmigrate.engine.analyze import analyze_module_text
from kmigrate.engine.module_facts import ModuleFacts
from kmigrate.engine.rule_walk import RuleSet
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.registry import all_rules

_COUNT = 24
_READERS = "".join(
    f"def read{n}(path):\n    return tf.io.read_file(path)\n\n\n" for n in range(_COUNT)
)
_FEEDER = "def feed(path):\n    x = tf.reduce_sum(1.0)\n" + "".join(
    f"    read{n}(path)\n" for n in reversed(range(_COUNT))
)
_TEXT = "import tensorflow as tf\n\n\n" + _READERS + _FEEDER


def test_the_data_function_named_is_the_first_in_walk_order() -> None:
    facts = ModuleFacts(keras_project=True)  # a module without Keras in a Keras project
    named = set()
    for _ in range(4):  # other objects between the runs: other ids
        analysis = analyze_module_text(
            "m.py", _TEXT, RuleSet(all_rules()), CONTEXT_SPEC, facts=facts
        )
        whys = [f.message for f in analysis.findings if "`feed` calls" in f.message]
        assert whys
        named.update(why.split("`feed` calls `")[1].split("`")[0] for why in whys)
    assert named == {"read0"}
