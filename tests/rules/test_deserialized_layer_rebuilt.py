"""KM535 beyond its examples: the inline copy, the copy after `apply`, and what it leaves
alone (a copy it cannot tell came from `serialize`). The backends' behaviour the message
states is measured in test_deserialized_layer_rebuilt_backends.py."""

from __future__ import annotations

import textwrap

from kmigrate.api import apply_to_text, scan_text


def _km535(text: str) -> list[dict]:
    code = textwrap.dedent(text).lstrip("\n")
    return [f for f in scan_text(code, select=["KM535"]) if f["rule"] == "KM535"]


def test_the_inline_copy_is_reported_at_its_build() -> None:
    (finding,) = _km535(
        """
        import tensorflow as tf

        class Twin(tf.keras.layers.Wrapper):
            def build(self, input_shape):
                self.layer.build(input_shape)
                tf.keras.layers.deserialize(tf.keras.layers.serialize(self.layer)).build(
                    input_shape
                )
        """
    )
    assert (finding["line"], finding["column"], finding["end_line"]) == (6, 9, 8)
    assert (finding["severity"], finding["fixable"]) == ("error", False)
    assert "`if not copy.built:`" in finding["message"]
    assert "already built" in finding["message"] and "from_config" in finding["message"]


def test_a_local_copy_is_reported_before_and_after_apply() -> None:
    legacy = textwrap.dedent(
        """
        import tensorflow as tf

        def frozen_copy(layer, shape):
            layer_config = tf.keras.layers.serialize(layer)
            layer_config["config"]["trainable"] = False
            twin = tf.keras.layers.deserialize(layer_config)
            twin.build(shape)
            return twin
        """
    ).lstrip("\n")
    before = [(f["line"], f["symbol"]) for f in _km535(legacy)]
    converted = apply_to_text(legacy)
    assert "keras.layers.deserialize(layer_config)" in converted
    after = [(f["line"], f["symbol"]) for f in _km535(converted)]
    assert before == [(7, "keras.layers.deserialize")]
    assert len(after) == 1 and "`twin.build(...)`" in _km535(converted)[0]["message"]


def test_copies_not_known_to_come_from_serialize_are_left_alone() -> None:
    assert not _km535(
        """
        import tensorflow as tf

        def rebuilt(layer, shape, config):
            a = tf.keras.layers.deserialize(config)  # a parameter: unknown origin
            a.build(shape)
            b = tf.keras.layers.deserialize(tf.keras.layers.serialize(layer))
            b = tf.keras.layers.Dense(3)  # rebound
            b.build(shape)
            c = tf.keras.layers.Dense.from_config(layer.get_config())
            c.build(shape)
        """
    )
