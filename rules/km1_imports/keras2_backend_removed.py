"""KM108: a Keras 2 backend function outside model code that Keras 3 no longer has."""
# Model code is KM201/KM202/KM205's: this rule covers every other context.

from __future__ import annotations

import ast
from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, EnsureHelper, ReferenceSite, Severity
from kmigrate.rules.base import Clean, Fallback, Flagged, Report, Rule
from kmigrate.rules.common.catalog.binding import ManualPortError
from kmigrate.rules.common.catalog.builders import plan_call
from kmigrate.rules.common.catalog.catalog_rule import CATALOG_SYMBOLS, plan_for
from kmigrate.rules.common.catalog.plan import Rewrite, plain_names
from kmigrate.rules.common.keras2_backend import removed_backend_function
from kmigrate.rules.common.keras_api import tf_keras3_backend
from kmigrate.rules.km1_imports.keras2_backend_tf import ENTRIES, tf_forms
from kmigrate.rules.ops_catalog import lookup

_OUTSIDE_MODEL = frozenset(set(Context) - {Context.MODEL})
# Where TensorFlow stays: a tf.data map (keras.ops fails there on JAX and PyTorch), and
# code of a module without Keras. Elsewhere (a training loop, serving, distribution) the
# backend call is Keras code and becomes its keras.ops form.
_STAYS_ON_TF = frozenset({Context.DATA, Context.OTHER})


class Keras2BackendRemoved(Rule):
    id = "KM108"
    name = "keras2-backend-removed"
    summary = (
        "A Keras 2 backend function (`K.cast`, `K.sum`...) outside model code: Keras 3's "
        "`keras.backend` no longer has it."
    )
    rationale = (
        "A Keras 2 backend function is Keras code, wherever it is: Keras 3's "
        "`keras.backend` keeps only configuration functions (`floatx`, `epsilon`, "
        "`image_data_format`...), so `K.cast(x, 'float32')` in a `tf.data` map, a "
        "training loop or an evaluation script raises AttributeError as soon as `keras` "
        "(or `tf.keras` on TensorFlow 2.16+) is Keras 3, whatever the backend. Counting "
        "such a line as portable would promise code that does not run. Code proven to "
        "run in a `tf.data` pipeline stays on TensorFlow (keras.ops there fails on JAX "
        "and PyTorch); everywhere else the call becomes `keras.ops`."
    )
    fix_safety = (
        "In a training loop, serving or distribution code the call becomes its "
        "`keras.ops` form when the ops catalog has an exact one (as in model code). "
        "In proven data code (and in a module without Keras) it is rewritten to the "
        "TensorFlow code the Keras 2 backend function ran (read from tf_keras's "
        "backend), only where the module imports TensorFlow already (`import "
        "tensorflow` is never added to a module that did not import it; the finding "
        "says so instead): "
        + ", ".join(f"`{e.symbol}`" for e in ENTRIES if e.automatic)
        + ". Each is checked against tf_keras on the same inputs (`K.sqrt` clips "
        "negatives to 0, `K.argmax` and `K.expand_dims` default to the last axis, "
        "`K.constant` to `keras.config.floatx()`). Reported only, with the reason: "
        + ", ".join(f"`{e.symbol}`" for e in ENTRIES if not e.automatic)
        + " (they check dtypes, branch on values or create Variables), any other "
        "function, a call with `*args`/`**kwargs`, a function used without a call, and "
        "a call of a function the module replaces itself (`K.update = new_update` in a "
        "method; patches in other modules are followed at module level only). "
        "In `undecided` code (called from model code and from a data pipeline) nothing "
        "is rewritten: the finding gives both forms. "
        "Not reported through `tf_keras` or `tensorflow.python.keras`, which keep Keras "
        "2's backend while installed."
    )
    severity = Severity.WARNING
    contexts = _OUTSIDE_MODEL
    call_prefixes = ("K.",)
    reference_prefixes = ("K.",)
    # A backend function another rule reports where the call is (KM5xx's session and
    # variable functions, KM3xx's random draws) is left to it: its finding says more.
    fallback = Fallback.IN_CONTEXT
    examples = [
        Flagged(
            """
            import tensorflow as tf
            from keras import backend as K


            def to_float(image, label):
                return K.cast(image, "float32") / 255.0, label


            dataset = tf.data.Dataset.from_tensor_slices((images, labels)).map(to_float)
            """,
            """
            import tensorflow as tf


            def to_float(image, label):
                return tf.cast(image, "float32") / 255.0, label


            dataset = tf.data.Dataset.from_tensor_slices((images, labels)).map(to_float)
            """,
        ),
        Flagged(
            """
            import tensorflow as tf


            def box_scale(boxes, shape):
                shape = tf.keras.backend.cast(shape, tf.float32)
                return boxes * tf.keras.backend.min(shape)


            dataset = tf.data.Dataset.from_tensor_slices((boxes, shapes)).map(box_scale)
            """,
            """
            import tensorflow as tf


            def box_scale(boxes, shape):
                shape = tf.cast(shape, tf.float32)
                return boxes * tf.reduce_min(shape)


            dataset = tf.data.Dataset.from_tensor_slices((boxes, shapes)).map(box_scale)
            """,
        ),
        Flagged(  # KM102 then imports `K` from `keras`: Keras 3 has the rest
            """
            import tensorflow as tf
            from tensorflow.keras import backend as K


            def normalize(image, label):
                image = K.cast(image, K.floatx())
                return image / (K.max(image, axis=-1) + K.epsilon()), K.argmax(label)


            dataset = tf.data.Dataset.from_tensor_slices((images, labels)).map(normalize)
            """,
            """
            import tensorflow as tf
            from tensorflow.keras import backend as K


            def normalize(image, label):
                image = tf.cast(image, K.floatx())
                return image / (tf.reduce_max(image, axis=-1) + K.epsilon()), tf.argmax(label, -1)


            dataset = tf.data.Dataset.from_tensor_slices((images, labels)).map(normalize)
            """,
        ),
        Flagged(  # a data map in a module that does not import TensorFlow: not added
            """
            from tensorflow.keras import backend as K


            def to_float(image, label):
                return K.cast(image, "float32"), label


            def pipeline(dataset):
                return dataset.map(to_float)
            """
        ),
        Flagged(  # a GradientTape loop: Keras code, keras.ops
            """
            import tensorflow as tf
            from tensorflow.keras import backend as K


            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = K.sum(K.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            """
            import tensorflow as tf
            from keras import ops


            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = ops.sum(ops.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
        ),
        Flagged(  # K.mean casts booleans first: which `x` is cannot be seen
            """
            import tensorflow as tf
            from keras import backend as K


            def accuracy(hits):
                return K.mean(hits)


            dataset = tf.data.Dataset.range(8).map(accuracy)
            """
        ),
        Clean(
            """
            import tensorflow as tf
            from keras import backend as K


            def to_float(image, label):
                return tf.cast(image, K.floatx()) / 255.0, label
            """
        ),
        Clean(
            """
            from tf_keras import backend as K


            def to_float(image):
                return K.cast(image, "float32")
            """
        ),
    ]

    def check_call(self, site: CallSite) -> Iterable[Report]:
        if site.context not in _OUTSIDE_MODEL or removed_backend_function(site) is None:
            return  # model code is KM201/KM202/KM205's; a name Keras 3 has is no finding
        found = plan_for(site) if site.symbol in CATALOG_SYMBOLS else None
        rewrite = found[1] if found is not None else None
        form = rewrite.target if isinstance(rewrite, Rewrite) else None
        if site.context not in _STAYS_ON_TF:  # Keras code: its keras.ops form
            yield from self._report(site, form, rewrite, keras_form=True)
            return
        entry = tf_forms().get(site.symbol)
        tf_form = plan_call(entry, site) if entry is not None else None
        if isinstance(tf_form, Rewrite) and site.symbol in _assigned_in_module(site):
            tf_form = ManualPortError(
                f"this module assigns a function of its own to `{site.symbol}`, so the "
                "call may run that one",
                f"where it runs Keras 2's, {entry.suggestion}" if entry else "",
            )
        if (
            isinstance(tf_form, ManualPortError)
            and entry
            and entry.suggestion not in tf_form.suggestion
        ):
            tf_form.suggestion = f"{tf_form.suggestion}, then {entry.suggestion}"
        yield from self._report(site, form, tf_form)

    def check_reference(self, site: ReferenceSite) -> Iterable[Report]:
        parent = site.module.parent_of(site.node)
        if isinstance(parent, ast.Call) and parent.func is site.node:
            return  # the callee of a call: check_call reports the call
        entry = lookup(site.symbol)
        keras_form = site.context not in _STAYS_ON_TF
        yield from self._report(
            site, entry.target if entry is not None else None, keras_form=keras_form
        )

    def _report(
        self,
        site: CallSite | ReferenceSite,
        form: str | None,
        tf_form: Rewrite | ManualPortError | None = None,
        keras_form: bool = False,
    ) -> Iterable[Report]:
        """The finding, with ``form`` (the Keras 3 form for model code) when known, and
        the call's rewrite (or why there is none): its TensorFlow form from the fix
        table in data code, its keras.ops form (``keras_form``) elsewhere."""
        if site.context not in _OUTSIDE_MODEL:
            return  # model code: KM201/KM202/KM205 report it, with the fix where exact
        name = removed_backend_function(site)
        if name is None:
            return
        node = site.node.func if isinstance(site, CallSite) else site.node
        written = site.module.node_text(node)
        facts = site.module.project_facts
        replaced_by = dict(facts.patched).get(site.symbol) if facts is not None else None
        if replaced_by is not None:  # `K.where = where`: the project's own function
            yield Report(
                site,
                f"`{written}` is not in Keras 3's `keras.backend`, but {replaced_by} assigns "
                "its own function to that name: this works once that module has run",
                severity=Severity.INFO,
            )
            return
        gone, severity = _what_fails(site, node, written, name)
        if keras_form:
            yield from _keras_report(site, gone, form, tf_form, severity)
            return
        if isinstance(tf_form, Rewrite):
            text = f"{gone}; {_fixed_by(tf_form, site.context)}"
            yield Report(site, text, fix=tf_form.plan, severity=severity)
            return
        elsewhere = f"; in code that runs with the model, `{form}`" if form else ""
        if isinstance(tf_form, ManualPortError):
            yield Report(
                site,
                f"{gone}. Not rewritten: {tf_form.reason}; {tf_form.suggestion}{elsewhere}",
                severity=severity,
            )
            return
        yield Report(
            site,
            f"{gone}. Where the code stays on TensorFlow (a tf.data pipeline), call the "
            f"TensorFlow function it wrapped{elsewhere}",
            severity=severity,
        )


# Why a data call keeps TensorFlow, said in its finding.
_WHY_TF = {
    Context.DATA: (
        "this code runs in a tf.data pipeline, where keras.ops fails on JAX and PyTorch, "
        "so it stays on TensorFlow"
    ),
    Context.OTHER: "this module uses no Keras, so it stays on TensorFlow",
}


def _keras_report(
    site: CallSite | ReferenceSite,
    gone: str,
    form: str | None,
    rewrite: Rewrite | ManualPortError | None,
    severity: Severity,
) -> Iterable[Report]:
    """A backend call in code not proven to be data code: Keras code, whose Keras 3 form
    is keras.ops; rewritten where exact, except in undecided code (the analysis says
    why: it is called from model code and from a data pipeline)."""
    where = f"{site.context.value} code"
    if site.context is Context.UNDECIDED:
        both = f"`{form}` where it runs in a model, its TensorFlow form in a tf.data map"
        yield Report(site, f"{gone}; not rewritten: {both}" if form else gone, severity=severity)
    elif isinstance(rewrite, Rewrite):
        yield Report(
            site, f"{gone}; in {where}, Keras code: `{form}`", fix=rewrite.plan, severity=severity
        )
    elif isinstance(rewrite, ManualPortError):
        why = f"{rewrite.reason.rstrip('.')}; {rewrite.suggestion}".rstrip("; ")
        yield Report(site, f"{gone}. Not rewritten: {why}", severity=severity)
    else:
        yield Report(
            site,
            f"{gone}, and kmigrate knows no Keras 3 form for it: port it by hand",
            severity=severity,
        )


def _what_fails(
    site: CallSite | ReferenceSite, node: ast.AST, written: str, name: str
) -> tuple[str, Severity]:
    """What stops working, and how bad that is. Through ``tf.keras`` on TensorFlow 2.16+,
    Keras 3 keeps most Keras 2 backend functions (``tf.keras.backend.int_shape`` runs,
    as TensorFlow code): only moving the import to ``keras``, as a migration does,
    loses them; that is a note, not a line that fails (the installed namespace decides:
    ``rules/data/tf_keras3_backend.txt``)."""
    through_tf = (site.module.resolver.resolve(node) or "").startswith("tensorflow.")  # type: ignore[arg-type]
    if through_tf and name in tf_keras3_backend():
        return (
            f"`{written}` is Keras 2's backend: `tf.keras.backend` still has `{name}` under "
            "Keras 3 (TensorFlow 2.16+), as TensorFlow code, but Keras 3's own "
            "`keras.backend` has not, so this line stops working once the module imports "
            "`keras` instead of `tf.keras`",
            Severity.INFO,
        )
    when = "`tf.keras` is Keras 3 (TensorFlow 2.16+)" if through_tf else "Keras 3 is installed"
    return (
        f"`{written}` is Keras 2's backend: Keras 3's `keras.backend` has no "
        f"`{name}`, so this line fails once {when}, even outside model code",
        Severity.WARNING,
    )


def _fixed_by(rewrite: Rewrite, context: Context) -> str:
    """What the fix writes: the project's helper with Keras 2's meaning, or the
    TensorFlow call the function made (in proven data code, or a module with no Keras)."""
    helpers = [e for e in rewrite.plan.edits if isinstance(e, EnsureHelper)]
    if helpers:
        return (
            f"its Keras 2 meaning, in plain Python: `{helpers[0].name}` from "
            f"`{helpers[0].module}.py`, which apply writes beside the file"
        )
    tf_name = plain_names(rewrite.target).replace("tensorflow.", "tf.")
    return f"{_WHY_TF[context]}: `{tf_name}`"


def _assigned_in_module(site: CallSite) -> frozenset[str]:
    """The backend functions the module replaces anywhere, in a function body too
    (bert4keras's optimizers set `K.update = new_update` around a parent's `get_updates`,
    whose `K.update` calls then run it): the project's patches are module-level only."""

    def assigned() -> frozenset[str]:
        found = set()
        for node in ast.walk(site.module.tree):
            targets = node.targets if isinstance(node, ast.Assign) else ()
            for target in targets:
                written = (
                    site.module.resolver.resolve(target)
                    if isinstance(target, ast.Attribute)
                    else None
                )
                if written:
                    found.add(site.module.canonical(written))
        return frozenset(found)

    return site.module.memo(("KM108-assigned",), assigned)
