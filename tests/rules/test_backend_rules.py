"""KM6xx: backend-specific structure is reported with a severity that fits its context."""

from __future__ import annotations

import textwrap

import pytest

from kmigrate.run.runner import scan_text


def found(text: str, rule: str):
    code = textwrap.dedent(text).lstrip("\n")
    return [f for f in scan_text(code, select=[rule]) if f.rule.startswith(rule)]


def severities(text: str, rule: str) -> list[tuple[int, str, str]]:
    return [(f.span.line, f.severity.value, f.context.value) for f in found(text, rule)]


def test_km6_fixes_only_the_tf_function_decorator() -> None:
    from kmigrate.rules.registry import all_rules

    assert [r.id for r in all_rules() if r.id.startswith("KM6") and r.fixable()] == ["KM602"]


def test_gradient_tape_severity_by_context() -> None:
    code = """
        import tensorflow as tf

        class Custom(tf.keras.Model):
            def train_step(self, data):
                with tf.GradientTape() as tape:
                    loss = self.compiled_loss(data[1], self(data[0]))
                return {"loss": loss}

        def loop(model, data):
            for x, y in data:
                with tf.GradientTape() as tape:
                    loss = model(x)
        """
    assert severities(code, "KM601") == [
        (5, "warning", "model"),
        (11, "info", "training-loop"),
    ]


def test_py_function_severity_by_context() -> None:
    code = """
        import tensorflow as tf

        def decode(path):
            return tf.py_function(read, [path], tf.float32)

        dataset = tf.data.Dataset.list_files("*.jpg").map(decode)

        class Layer(tf.keras.layers.Layer):
            def call(self, x):
                return tf.py_function(f, [x], tf.float32)

        value = tf.numpy_function(g, [1.0], tf.float32)
        """
    # a Keras module's script code is model code unless proven otherwise
    assert severities(code, "KM604") == [(10, "error", "model"), (12, "error", "model")]


def test_tf_data_is_fine_in_pipelines_and_an_error_in_call() -> None:
    code = """
        import tensorflow as tf

        def make(images):
            return tf.data.Dataset.from_tensor_slices(images).batch(8)

        class Bad(tf.keras.layers.Layer):
            def call(self, x):
                return tf.data.Dataset.range(3)
        """
    assert severities(code, "KM605") == [(8, "error", "model")]


def test_numpy_in_loss_function_is_model_code() -> None:
    code = """
        import tensorflow as tf

        def my_loss(y_true, y_pred):
            return float(y_pred.numpy().mean())

        model = tf.keras.Sequential()
        model.compile(loss=my_loss)
        """
    assert severities(code, "KM605") == [(4, "error", "model")]


def test_tf_summary_severity_by_context() -> None:
    code = """
        import tensorflow as tf

        class Probe(tf.keras.layers.Layer):
            def call(self, x):
                tf.summary.scalar("mean", tf.reduce_mean(x))
                return x

        def log(step, value):
            tf.summary.scalar("loss", value, step=step)
        """
    # logging outside a layer proves training-loop code
    assert severities(code, "KM606") == [(5, "error", "model"), (9, "info", "training-loop")]


def test_distribute_messages() -> None:
    code = """
        import tensorflow as tf

        strategy = tf.distribute.TPUStrategy(resolver)

        class Norm(tf.keras.layers.Layer):
            def call(self, x):
                ctx = tf.distribute.get_replica_context()
                return x

        n = tf.distribute.get_strategy().num_replicas_in_sync
        """
    findings = found(code, "KM603")
    assert [(f.span.line, f.severity.value) for f in findings] == [
        (3, "warning"),
        (7, "error"),
        (10, "info"),
    ]
    assert "keras.distribution" in findings[0].message


@pytest.mark.parametrize(
    ("body", "advice"),
    [
        ("return x * 2", "no tensor-dependent control flow"),
        ("if tf.reduce_sum(x) > 0:\n            x = -x\n        return x", "line 6"),
        ("if mask is not None:\n            x = x * mask\n        return x", "exact"),
    ],
)
def test_tf_function_on_call_advice(body: str, advice: str) -> None:
    code = f"""
import tensorflow as tf

class Gate(tf.keras.layers.Layer):
    @tf.function
    def call(self, x, mask=None):
        {body}
"""
    (finding,) = found(code, "KM602")
    assert finding.severity.value == "error" and advice in finding.message
    assert finding.span.line == 4  # the decorator


def test_tf_function_with_arguments_on_call() -> None:
    code = """
        import tensorflow as tf

        class Gate(tf.keras.layers.Layer):
            @tf.function(jit_compile=True)
            def call(self, x):
                return x
        """
    (finding,) = found(code, "KM602")
    assert "jit_compile" in finding.message


def test_tf_function_on_plain_helpers_is_not_reported() -> None:
    code = """
        import tensorflow as tf

        @tf.function
        def normalize(x):
            return x / 255.0
        """
    assert found(code, "KM602") == []


@pytest.mark.parametrize(
    ("body", "fixed"),
    [
        ("return x * 2", True),
        ("if mask is not None:\n            x = x * mask\n        return x", True),
        ("if tf.reduce_sum(x) > 0:\n            x = -x\n        return x", False),
        ("self.calls = 1\n        return x", False),  # ran once when traced
        ("self.seen[0] = x\n        return x", False),
        ("print(x)\n        return x", False),
    ],
)
def test_tf_function_is_dropped_only_where_exact(body: str, fixed: bool) -> None:
    from kmigrate.api import apply_to_text

    code = f"""import tensorflow as tf

class Gate(tf.keras.layers.Layer):
    @tf.function
    def call(self, x, mask=None):
        {body}
"""
    (finding,) = found(code, "KM602")
    assert (finding.fix is not None) is fixed, finding.message
    after = apply_to_text(code, select=["KM602"])
    assert ("@tf.function" not in after) is fixed
    if fixed:
        assert after == code.replace("    @tf.function\n", "")
    elif "self." in body or "print" in body:
        assert "side effect once" in finding.message


def test_tf_function_with_empty_parentheses_is_dropped() -> None:
    from kmigrate.api import apply_to_text

    code = (
        "import tensorflow as tf\n\n"
        "class Gate(tf.keras.layers.Layer):\n"
        "    @staticmethod\n"
        "    @tf.function()  # compiled\n"
        "    def scale(x):\n"
        "        return x * 2\n"
    )
    after = apply_to_text(code, select=["KM602"])
    assert after == code.replace("    @tf.function()  # compiled\n", "")
