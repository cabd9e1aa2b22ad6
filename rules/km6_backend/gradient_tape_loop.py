"""KM601: hand-written `tf.GradientTape` training steps."""

from __future__ import annotations

from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.training_loop import TRAINING_LOOP_ALTERNATIVE


class GradientTapeLoop(Rule):
    id = "KM601"
    name = "gradient-tape-loop"
    summary = "`tf.GradientTape`: a hand-written training step that only runs on TensorFlow."
    rationale = (
        "Gradients are backend-specific: JAX differentiates pure functions "
        "(`jax.value_and_grad` over `model.stateless_call`), PyTorch uses `loss.backward()`. "
        "`model.fit` does the right thing on every backend; custom logic goes in a "
        "`train_step` override (one per backend, see the keras.io guides 'Customizing "
        "what happens in fit()')."
    )
    fix_safety = "Never rewritten: a training loop has no mechanical translation."
    severity = Severity.INFO
    call_symbols = frozenset({"tf.GradientTape", "tf.autodiff.GradientTape"})
    examples = [
        Flagged(
            """
            import tensorflow as tf

            def train_step(model, optimizer, loss_fn, x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
            """
        ),
        Flagged(
            """
            import tensorflow as tf

            class Custom(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(y=y, y_pred=self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_weights)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
                    return {"loss": loss}
            """
        ),
        Clean(
            """
            import keras

            def train(model, dataset):
                model.compile(optimizer="adam", loss="mse")
                model.fit(dataset, epochs=3)
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.context == Context.MODEL:
            yield Report(
                site,
                "a `train_step` built on `tf.GradientTape` runs only on the TensorFlow "
                "backend: write one per backend (JAX: `stateless_call` + "
                "`jax.value_and_grad`; PyTorch: `loss.backward()`) or keep the model TF-only",
                severity=Severity.WARNING,
            )
            return
        yield Report(
            site,
            f"custom training loop on `tf.GradientTape` is TensorFlow-only: "
            f"{TRAINING_LOOP_ALTERNATIVE}",
        )
