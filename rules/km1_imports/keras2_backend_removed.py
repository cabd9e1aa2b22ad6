"""KM108: a Keras 2 backend function outside model code that Keras 3 no longer has."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from kmigrate.engine import CallSite, Context, ReferenceSite, Severity
from kmigrate.rules.base import Clean, Flagged, Report, Rule
from kmigrate.rules.common.catalog.binding import ManualPortError
from kmigrate.rules.common.catalog.builders import plan_call
from kmigrate.rules.common.catalog.catalog_rule import CATALOG_SYMBOLS, plan_for
from kmigrate.rules.common.catalog.plan import Rewrite, plain_names
from kmigrate.rules.common.keras2_backend import removed_backend_function
from kmigrate.rules.km1_imports.keras2_backend_tf import ENTRIES, tf_forms
from kmigrate.rules.ops_catalog import lookup

_OUTSIDE_MODEL = frozenset({Context.DATA, Context.TRAINING_LOOP, Context.OTHER})


class Keras2BackendRemoved(Rule):
    id = "KM108"
    name = "keras2-backend-removed"
    summary = (
        "A Keras 2 backend function (`K.cast`, `K.sum`...) outside model code: Keras 3's "
        "`keras.backend` no longer has it."
    )
    rationale = (
        "Outside model code kmigrate leaves TensorFlow calls alone, since TensorFlow "
        "still runs them after the migration. A Keras 2 backend function is not one: "
        "Keras 3's `keras.backend` keeps only configuration functions (`floatx`, "
        "`epsilon`, `image_data_format`...), so `K.cast(x, 'float32')` in a `tf.data` "
        "map or an evaluation script raises AttributeError as soon as `keras` (or "
        "`tf.keras` on TensorFlow 2.16+) is Keras 3, whatever the backend. Counting "
        "such a line as portable would promise code that does not run."
    )
    fix_safety = (
        "A call is rewritten to the TensorFlow code the Keras 2 backend function ran "
        "(read from tf_keras's backend; `import tensorflow as tf` is added or reused), "
        "since code outside models stays on TensorFlow: "
        + ", ".join(f"`{e.symbol}`" for e in ENTRIES if e.automatic)
        + ". Each is checked against tf_keras on the same inputs (`K.sqrt` clips "
        "negatives to 0, `K.argmax` and `K.expand_dims` default to the last axis, "
        "`K.constant` to `keras.config.floatx()`). Reported only, with the reason: "
        + ", ".join(f"`{e.symbol}`" for e in ENTRIES if not e.automatic)
        + " (they check dtypes, branch on values or create Variables), any other "
        "function, a call with `*args`/`**kwargs`, a function used without a call, and "
        "a call of a function the module replaces itself (`K.update = new_update` in a "
        "method; patches in other modules are followed at module level only). "
        "In `other` code (a library's loss nothing in the project compiles) the "
        "rewritten `tf.*` call gets KM201's note: if it runs in a model on JAX or "
        "PyTorch, it needs its `keras.ops` form instead. "
        "Not reported through `tf_keras` or `tensorflow.python.keras`, which keep Keras "
        "2's backend while installed."
    )
    severity = Severity.WARNING
    contexts = _OUTSIDE_MODEL
    call_prefixes = ("K.",)
    reference_prefixes = ("K.",)
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
            """,
            """
            import tensorflow as tf


            def box_scale(boxes, shape):
                shape = tf.cast(shape, tf.float32)
                return boxes * tf.reduce_min(shape)
            """,
        ),
        Flagged(  # KM102 then imports `K` from `keras`: Keras 3 has the rest
            """
            from tensorflow.keras import backend as K


            def normalize(image, label):
                image = K.cast(image, K.floatx())
                return image / (K.max(image, axis=-1) + K.epsilon()), K.argmax(label)
            """,
            """
            from tensorflow.keras import backend as K
            import tensorflow as tf


            def normalize(image, label):
                image = tf.cast(image, K.floatx())
                return image / (tf.reduce_max(image, axis=-1) + K.epsilon()), tf.argmax(label, -1)
            """,
        ),
        Flagged(  # K.mean casts booleans first: which `x` is cannot be seen
            """
            from keras import backend as K


            def accuracy(hits):
                return K.mean(hits)
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
        yield from self._report(site, entry.target if entry is not None else None)

    def _report(
        self,
        site: CallSite | ReferenceSite,
        form: str | None,
        tf_form: Rewrite | ManualPortError | None = None,
    ) -> Iterable[Report]:
        """The finding, with ``form`` (the Keras 3 form for model code) when known, and
        the call's TensorFlow rewrite (or why there is none) from the fix table."""
        if site.context not in _OUTSIDE_MODEL:
            return  # model code: KM201/KM202/KM205 report it, with the fix where exact
        name = removed_backend_function(site)
        if name is None or _owned_elsewhere(site.symbol, site.context):
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
        through_tf = (site.module.resolver.resolve(node) or "").startswith("tensorflow.")
        when = "`tf.keras` is Keras 3 (TensorFlow 2.16+)" if through_tf else "Keras 3 is installed"
        gone = (
            f"`{written}` is Keras 2's backend: Keras 3's `keras.backend` has no "
            f"`{name}`, so this line fails once {when}, even outside model code"
        )
        if isinstance(tf_form, Rewrite):
            tf_name = plain_names(tf_form.target).replace("tensorflow.", "tf.")
            text = f"{gone}; code outside models stays on TensorFlow: `{tf_name}`"
            yield Report(site, text, fix=tf_form.plan)
            return
        elsewhere = f"; in code that runs with the model, `{form}`" if form else ""
        if isinstance(tf_form, ManualPortError):
            yield Report(
                site,
                f"{gone}. Not rewritten: {tf_form.reason}; {tf_form.suggestion}{elsewhere}",
            )
            return
        yield Report(
            site,
            f"{gone}. Where the code stays on TensorFlow (a tf.data pipeline), call the "
            f"TensorFlow function it wrapped{elsewhere}",
        )


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


def _owned_elsewhere(symbol: str, context: Context) -> bool:
    """Whether another rule reports this symbol in this context (KM5xx's session and
    variable functions, KM3xx's random draws): its finding says more."""
    symbols, prefixes = _claims()[context]
    return symbol in symbols or symbol.startswith(prefixes)


@functools.cache
def _claims() -> dict[Context, tuple[frozenset[str], tuple[str, ...]]]:
    """Per context, the call symbols and prefixes the other rules ask for (the ops
    catalog rules excepted: outside model code they leave these names to this rule)."""
    from kmigrate.rules.registry import all_rules

    claims: dict[Context, tuple[frozenset[str], tuple[str, ...]]] = {}
    for context in _OUTSIDE_MODEL:
        symbols: set[str] = set()
        prefixes: list[str] = []
        for rule in all_rules():
            if rule.id in ("KM108", "KM201", "KM202", "KM205"):
                continue
            if rule.contexts is not None and context not in rule.contexts:
                continue
            symbols.update(rule.call_symbols)
            prefixes.extend(p for p in rule.call_prefixes if p not in ("tf.", "K."))
        claims[context] = (frozenset(symbols), tuple(prefixes))
    return claims
