"""The code shapes of issue 30 that the project index recognises as model code:
registries and helper objects, custom-object registrations and loss objects, mixins,
internal Keras 2 bases, bases from installed third-party packages, patched backends.
(The fixture repositories under tests/fixtures/repos show each end to end.)"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest

from kmigrate.engine.module_record import ModuleRecord
from kmigrate.engine.outside_index import OutsideIndex
from kmigrate.engine.project_entry import build_entry, entry_shape
from kmigrate.engine.project_index import ProjectIndex
from kmigrate.project.site_modules import SiteModules
from kmigrate.rules.context_spec import CONTEXT_SPEC


def _project(modules: dict[str, str], outside=None) -> tuple[ProjectIndex, dict[str, ModuleRecord]]:
    records = {
        name: ModuleRecord(
            name,
            build_entry(ast.parse(textwrap.dedent(source)), CONTEXT_SPEC),
            name.rpartition(".")[0],
            "",
            (name,),
            name,
        )
        for name, source in modules.items()
    }
    return ProjectIndex(records.values(), CONTEXT_SPEC, outside=outside), records


def _facts(modules: dict[str, str], name: str, site: SiteModules | None = None):
    outside = OutsideIndex(CONTEXT_SPEC, site) if site is not None else None
    index, records = _project(modules, outside)
    return index.facts(records[name])


_ACTIVATIONS = """
    from tensorflow.keras import backend as K

    def relu6(x):
        return K.minimum(K.maximum(x, 0.0), 6.0)

    def soft_sign(x):
        return x / (1.0 + K.abs(x))

    def unused(x):
        return K.exp(x)

    ACTIVATIONS = {"relu6": relu6, "soft_sign": soft_sign}

    def get(name):
        return ACTIVATIONS[name]
"""


def test_a_registry_read_by_model_code_makes_its_values_model_code() -> None:
    layer = """
        from tensorflow import keras
        from pkg import acts

        class Gate(keras.layers.Layer):
            def __init__(self, name="relu6"):
                super().__init__()
                self.activation = acts.get(name)
    """
    facts = _facts({"pkg.acts": _ACTIVATIONS, "pkg.layer": layer}, "pkg.acts")
    assert facts.model_functions == ("get", "relu6", "soft_sign")
    # the same registry read directly, through an import of it
    direct = layer.replace("acts.get(name)", "ACTIVATIONS[name]").replace(
        "from pkg import acts", "from pkg.acts import ACTIVATIONS"
    )
    facts = _facts({"pkg.acts": _ACTIVATIONS, "pkg.layer": direct}, "pkg.acts")
    assert facts.model_functions == ("relu6", "soft_sign")


def test_deserialize_by_globals_reaches_the_module_functions() -> None:
    acts = _ACTIVATIONS + "\n    def deserialize(name):\n        return globals()[name]\n"
    build = """
        from tensorflow import keras
        from pkg.acts import deserialize

        def build():
            inputs = keras.Input((4,))
            return deserialize("soft_sign")(inputs)
    """
    facts = _facts({"pkg.acts": acts, "pkg.build": build}, "pkg.acts")
    assert set(facts.model_functions) >= {"deserialize", "relu6", "soft_sign", "unused"}


def test_a_helper_object_a_layer_holds_has_model_methods() -> None:
    helper = """
        from tensorflow.keras import backend as K

        class Decomposer:
            def bound(self, x):
                return K.clip(x, -1.0, 1.0)

            def unused(self, x):
                return x
    """
    layer = """
        from tensorflow import keras
        from pkg.helper import Decomposer

        class Gate(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.helper = Decomposer()

            def call(self, x):
                return self.helper.bound(x)
    """
    facts = _facts({"pkg.helper": helper, "pkg.layer": layer}, "pkg.helper")
    assert facts.model_methods == ("Decomposer.bound",)
    assert facts.model_classes == ()


def test_custom_object_registrations_and_loss_objects_are_model_code() -> None:
    acts = """
        from tensorflow import keras
        from tensorflow.keras import backend as K

        def gelu(x):
            return K.tanh(x)

        def swish(x):
            return x * K.sigmoid(x)

        def mish(x):
            return x

        def plain(x):
            return x

        @keras.utils.register_keras_serializable()
        def tagged(x):
            return x

        def setup():
            keras.utils.get_custom_objects()["gelu"] = gelu

        keras.utils.get_custom_objects().update({"swish": swish})
    """
    losses = """
        from tensorflow.keras import backend as K

        class ScaledError:
            def __call__(self, y_true, y_pred):
                return K.mean(K.square(y_pred - y_true))

        def hinge(y_true, y_pred):
            return K.sum(y_true)

        CUSTOM = {"hinge": hinge}
    """
    model = """
        from tensorflow import keras
        from pkg.acts import mish
        from pkg.losses import CUSTOM, ScaledError

        def compile_it(model, path):
            model.compile(loss=ScaledError())
            return keras.models.load_model(path, custom_objects={"mish": mish, **CUSTOM})
    """
    modules = {"pkg.acts": acts, "pkg.losses": losses, "pkg.model": model}
    # `mish` is handed over in `custom_objects=`; `plain` is registered nowhere
    assert _facts(modules, "pkg.acts").model_functions == ("gelu", "mish", "swish", "tagged")
    facts = _facts(modules, "pkg.losses")
    assert facts.model_methods == ("ScaledError.__call__",)
    assert facts.model_functions == ("hinge",)  # spread from the registry `CUSTOM`
    alone = model.replace('{"mish": mish, **CUSTOM}', '{"mish": mish}')
    assert _facts({**modules, "pkg.model": alone}, "pkg.losses").model_functions == ()


def test_a_mixin_of_a_layer_and_its_own_bases_are_model_code() -> None:
    mixins = """
        import tensorflow as tf

        class ScaleMixin:
            def scaled(self, x):
                return x * tf.ones_like(x)

        class ClipMixin(ScaleMixin):
            def clipped(self, x):
                return tf.clip_by_value(self.scaled(x), -2.0, 2.0)

        class Unrelated:
            def other(self, x):
                return tf.ones_like(x)
    """
    cell = """
        import tensorflow as tf
        from pkg.mixins import ClipMixin

        class Cell(tf.keras.layers.Layer, ClipMixin):
            def call(self, x):
                return self.clipped(x)
    """
    facts = _facts({"pkg.mixins": mixins, "pkg.cell": cell}, "pkg.mixins")
    assert facts.model_methods == ("ClipMixin.clipped", "ScaleMixin.scaled")


@pytest.mark.parametrize(
    "base",
    [
        "tf.keras.__internal__.layers.BaseRandomLayer",
        "tf.keras.__internal__.layers.BaseImageAugmentationLayer",
    ],
)
def test_classes_on_internal_keras_bases_are_layers(base: str) -> None:
    source = f"""
        import tensorflow as tf

        class Shift({base}):
            def call(self, x):
                return tf.square(x)
    """
    assert _facts({"pkg.aug": source}, "pkg.aug").model_classes == ("Shift",)


def test_the_internal_bases_are_reported_with_their_keras_3_replacement() -> None:
    from kmigrate.rules.common.keras_api import removal_note

    note = removal_note("__internal__.layers.BaseRandomLayer")
    assert "keras.layers.Layer" in note and "SeedGenerator" in note
    assert "keras.layers.Layer" in removal_note("__internal__.layers.BaseImageAugmentationLayer")


def test_keras_reexported_by_a_known_keras_family_package_is_keras() -> None:
    source = """
        import tensorflow as tf
        from keras_nlp.backend import keras

        class Shifted(keras.layers.Layer):
            def call(self, x):
                return tf.nn.relu(x)
    """
    assert _facts({"pkg.l": source}, "pkg.l").model_classes == ("Shifted",)


def _fake_site(root: Path) -> Path:
    site = root / "site"
    (site / "thirdnlp" / "backend").mkdir(parents=True)
    (site / "thirdnlp" / "__init__.py").write_text("")
    (site / "thirdnlp" / "backend" / "__init__.py").write_text("import keras\n")
    (site / "thirdnlp" / "layers.py").write_text(
        "from thirdnlp.backend import keras\n\n\nclass Layer(keras.layers.Layer):\n    pass\n"
    )
    (site / "thirdnlp" / "plain.py").write_text("class Helper:\n    pass\n")
    # importing it would fail: only reading it can tell
    (site / "thirdnlp" / "__init__.py").write_text("raise ImportError('never imported')\n")
    return site


_THIRD_PARTY_LAYERS = """
    import tensorflow as tf
    from thirdnlp.backend import keras
    from thirdnlp.layers import Layer
    from thirdnlp.plain import Helper

    class Shifted(keras.layers.Layer):
        def call(self, x):
            return tf.nn.relu(x)

    class Norm(Layer):
        def call(self, x):
            return tf.square(x)

    class NotALayer(Helper):
        def call(self, x):
            return x
"""


def test_bases_from_an_installed_package_are_read_not_imported(tmp_path: Path) -> None:
    site = _fake_site(tmp_path)
    facts = _facts({"pkg.l": _THIRD_PARTY_LAYERS}, "pkg.l", SiteModules(CONTEXT_SPEC, (site,)))
    assert facts.model_classes == ("Shifted", "Norm")
    assert [name for name, _ in facts.notes] == ["NotALayer"]
    assert "thirdnlp" not in sys.modules
    # without the package on the resolution path: undecided, and said so
    facts = _facts({"pkg.l": _THIRD_PARTY_LAYERS}, "pkg.l", SiteModules(CONTEXT_SPEC, (tmp_path,)))
    assert facts.model_classes == ()
    assert [name for name, _ in facts.notes] == ["Norm", "NotALayer", "Shifted"]


def test_the_resolution_path_is_sys_path_and_reading_is_bounded(
    tmp_path: Path, monkeypatch
) -> None:
    site = _fake_site(tmp_path)
    monkeypatch.syspath_prepend(str(site))
    facts = _facts({"pkg.l": _THIRD_PARTY_LAYERS}, "pkg.l", SiteModules(CONTEXT_SPEC))
    assert facts.model_classes == ("Shifted", "Norm")
    none_left = SiteModules(CONTEXT_SPEC, (site,), budget=0)
    assert _facts({"pkg.l": _THIRD_PARTY_LAYERS}, "pkg.l", none_left).model_classes == ()


@pytest.mark.parametrize(
    "backend",
    [
        """
        import os
        if os.environ.get("TF_KERAS"):
            import tensorflow.keras as keras
        else:
            import keras
        K = keras.backend
        def gelu(x):
            return x
        K.gelu = gelu
        """,
        """
        try:
            from tensorflow.keras import backend as K
        except ImportError:
            from keras import backend as K
        import tensorflow as tf
        K.logsumexp = getattr(K, "logsumexp", None) or tf.math.reduce_logsumexp
        """,
        """
        import sys
        import tensorflow as tf
        sys.modules["keras"] = tf.keras
        import keras
        import keras.backend as K
        K.flatten = tf.identity
        """,
    ],
    ids=["conditional-keras", "try-except", "sys-modules-swap"],
)
def test_a_backend_bound_by_condition_and_patched_stays_a_backend(backend: str) -> None:
    user = "from pkg.backend import K\n"
    facts = _facts({"pkg.backend": backend, "pkg.use": user}, "pkg.use")
    assert [name for name, _ in facts.bindings] == ["K"]


def test_what_other_modules_resolve_through_is_in_the_entry_shape() -> None:
    def shape(source: str) -> str:
        return entry_shape(build_entry(ast.parse(textwrap.dedent(source)), CONTEXT_SPEC))

    base = "class A:\n    def f(self):\n        self.h = H()\n"
    assert shape(base) != shape(base.replace("def f", "def g"))  # a method name
    assert shape(base) != shape(base.replace("H()", "J()"))  # a held helper
    assert shape("R = {'a': f}\n") != shape("R = {'a': g}\n")  # a registry's values
    assert shape(base) == shape(base.replace("self.h = H()", "self.h = H()\n        g()"))


_NODE_FALLBACK = """\
import keras

try:
    from keras.src.engine.node import Node
except ImportError:
    from keras.engine.node import Node
"""


def test_a_fallback_between_keras_2_internals_without_a_home_is_an_error_on_try() -> None:
    from kmigrate.api import scan_text

    found = [f for f in scan_text(_NODE_FALLBACK, select=["KM103"])]
    assert [(f["line"], f["column"], f["end_column"], f["severity"]) for f in found] == [
        (3, 1, 4, "error")
    ]
    assert "`from keras.src.engine.node import ...`" in found[0]["message"]
    assert "`from keras.engine.node import ...`" in found[0]["message"]


def test_a_fallback_between_keras_2_internals_moves_both_branches_home() -> None:
    from kmigrate.api import apply_to_text

    text = _NODE_FALLBACK.replace("node import Node", "base_layer import Layer")
    after = apply_to_text(text + "\n\nclass A(Layer):\n    pass\n", select=["KM103"])
    assert "keras.src.engine" not in after and "keras.engine" not in after


def test_a_fallback_to_tf_keras_is_no_pair_of_internals() -> None:
    from kmigrate.api import scan_text

    text = _NODE_FALLBACK.replace(
        "from keras.engine.node import Node", "from tensorflow.keras.layers import Layer as Node"
    )
    assert [f["severity"] for f in scan_text(text, select=["KM103"])] == []


def test_an_import_annotations_still_read_is_kept() -> None:
    """A registered activation becomes model code and loses its `tf.*` calls, but its
    annotations still read `tf` where the function is defined (tensorflow/addons'
    activations): the import stays."""
    from kmigrate.api import apply_to_text

    text = (
        "import tensorflow as tf\n\n\n"
        '@tf.keras.utils.register_keras_serializable(package="Addons")\n'
        "def mish(x: tf.Tensor, *, beta: tf.Tensor = None) -> tf.Tensor:\n"
        "    return x * tf.math.tanh(tf.math.softplus(x))\n"
    )
    after = apply_to_text(text)
    assert "tf.math" not in after
    assert "import tensorflow as tf\n" in after  # kept: the annotations read `tf`
    compile(after, "<after>", "exec")
