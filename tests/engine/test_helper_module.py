"""The helper module ``apply`` writes beside rewritten files (``EnsureHelper`` edits):
created with only the helpers its folder calls, extended without touching what it
holds, one per folder, imported relatively inside a package, and idempotent."""

from __future__ import annotations

import ast
from pathlib import Path

from kmigrate import api
from kmigrate.engine.helper_module import compose_helper_module
from kmigrate.engine.model import EnsureHelper

ONE = EnsureHelper(
    "_compat",
    "one",
    "._compat",
    "def one():\n    return np.ones(1)\n",
    ("import numpy as np",),
    "Helpers.",
)
TWO = EnsureHelper(
    "_compat",
    "two",
    "._compat",
    "def two(x):\n    return ops.add(x, 2)\n",
    ("from keras import ops", "import numpy as np"),
    "Helpers.",
)


def test_a_new_module_has_the_header_the_imports_and_only_the_helpers_asked_for() -> None:
    text = compose_helper_module(None, [TWO])
    assert text.startswith('"""Helpers.\n"""\n')
    assert "import numpy as np\nfrom keras import ops\n" in text
    assert "def two(x):" in text and "def one" not in text
    ast.parse(text)


def test_an_existing_module_gains_what_it_lacks_and_keeps_the_rest() -> None:
    existing = '"""Mine."""\n\nimport numpy as np\n\n\ndef one():\n    return 41  # edited\n'
    text = compose_helper_module(existing, [ONE, TWO])
    assert text.startswith(existing.split("\n\n\n")[0])
    assert "return 41  # edited" in text  # a helper that exists is never changed
    assert text.count("def one") == 1 and "def two(x):" in text
    assert text.count("import numpy as np") == 1 and "from keras import ops\n" in text
    assert compose_helper_module(text, [ONE, TWO]) == text  # nothing left to add


LAYER = """from tensorflow.keras import backend as K
from tensorflow import keras


class Dot(keras.layers.Layer):
    def call(self, inputs):
        return K.batch_dot(inputs[0], inputs[1], axes={axes}) * {scale}
"""


def _project(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "a.py").write_text(LAYER.format(axes="[2, 2]", scale="2"))
    (root / "pkg" / "b.py").write_text(LAYER.format(axes="1", scale="K.cast_to_floatx(2)"))
    (root / "script.py").write_text(LAYER.format(axes="2", scale="2"))


def test_apply_writes_one_helper_module_per_folder_and_is_idempotent(tmp_path: Path) -> None:
    _project(tmp_path)
    changes = {c.path: c for c in api.apply([tmp_path], write=True)}
    assert {"pkg/_keras2_compat.py", "_keras2_compat.py"} <= set(changes)
    package_helpers = (tmp_path / "pkg" / "_keras2_compat.py").read_text()
    script_helpers = (tmp_path / "_keras2_compat.py").read_text()
    assert "def batch_dot(" in package_helpers and "def cast_to_floatx(" in package_helpers
    assert "def batch_dot(" in script_helpers and "cast_to_floatx" not in script_helpers
    assert "from ._keras2_compat import batch_dot\n" in (tmp_path / "pkg" / "a.py").read_text()
    assert "from _keras2_compat import batch_dot\n" in (tmp_path / "script.py").read_text()
    assert api.apply([tmp_path], write=True) == []  # the second run changes nothing


def test_a_helper_module_that_does_not_parse_withdraws_the_rewrites_that_need_it(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    (tmp_path / "_keras2_compat.py").write_text("def broken(:\n")
    changes = {c.path for c in api.apply([tmp_path], write=False)}
    assert "script.py" not in changes and "_keras2_compat.py" not in changes
    assert "pkg/a.py" in changes  # another folder's module is unaffected


def test_two_helpers_of_one_package_module_share_one_import_statement(tmp_path: Path) -> None:
    """Inside a package the helpers' import is relative; two helpers make one sorted
    `from ._keras2_compat import a, b`, and a helper a later run adds joins that line."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    layer = tmp_path / "pkg" / "a.py"
    layer.write_text(LAYER.format(axes="1", scale="K.cast_to_floatx(2)"))
    api.apply([tmp_path], write=True)
    text = layer.read_text()
    assert "from ._keras2_compat import batch_dot, cast_to_floatx\n" in text, text
    assert text.count("_keras2_compat import") == 1, text
    # a later edit: the file already imports one helper and now needs another
    layer.write_text(
        "from tensorflow.keras import backend as K\nimport keras\n\n"
        "from ._keras2_compat import cast_to_floatx\n\n\n"
        "class Dot(keras.layers.Layer):\n    def call(self, inputs):\n"
        "        return K.batch_dot(inputs[0], inputs[1], axes=1) * cast_to_floatx(2)\n"
    )
    api.apply([tmp_path], write=True)
    text = layer.read_text()
    assert "from ._keras2_compat import batch_dot, cast_to_floatx\n" in text, text
    assert text.count("_keras2_compat import") == 1, text
