"""An import swap (KM102, KM104) rebinds its name in every module that imports the name
from the swapping module: ``pkg/backend.py`` binds ``K`` and ``keras`` for the package
(bert4keras's shape), and ``K.mean`` in ``pkg/model.py`` would break once ``K`` is Keras
3's backend. The swap only checks the uses in its own module, so it is refused, with
the importing modules named (``ModuleFacts.imported_by``): in scan, apply and the
pre-commit hook's check after the importing module is edited."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kmigrate.cli.main import main
from tests.repo_fixtures import apply_repo, run_repo

BACKEND = "from tensorflow.keras import backend as K\n"
FIXED = "import Keras 3 directly: `from keras import backend as K`"
USES = "\n\ndef f(x):\n    return {}.mean(x)\n"

# (what the importing module's import is, how it reads `K`): one shape each
SHAPES = {
    "from-import": ("from pkg.backend import K", "K"),
    "relative": ("from .backend import K", "K"),
    "module-attribute": ("from pkg import backend", "backend.K"),
    "module-alias": ("import pkg.backend as b", "b.K"),
    "star-import": ("from pkg.backend import *", "K"),
}


def _project(root: Path, importer: str, use: str, init: str = "") -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text(init)
    (root / "pkg" / "backend.py").write_text(BACKEND)
    (root / "pkg" / "model.py").write_text(importer + "\n" + USES.format(use))
    return root


def _backend_import(root: Path, fix: bool = False) -> list[tuple[str, bool]]:
    result = run_repo(root, fix=fix)
    return [(f.message, f.fixable) for f in result.findings if f.path == "pkg/backend.py"]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_name_imported_from_the_module_keeps_its_import(shape: str, tmp_path: Path) -> None:
    importer, use = SHAPES[shape]
    root = _project(tmp_path, importer, use)
    message = (
        "`K` is imported from here by pkg/model.py; its uses there are not checked "
        "against Keras 3: change the imports together by hand"
    )
    assert _backend_import(root) == [(message, False)]
    # pkg/model.py's `K.mean` is model code (a plain function of a Keras module): it
    # becomes `ops.mean` where the re-exported `K` is resolved; backend.py is kept
    assert apply_repo(root) == {"from-import": 1, "relative": 1}.get(shape, 0)
    assert (root / "pkg" / "backend.py").read_text() == BACKEND


def test_a_chain_of_re_exports_stops_at_the_first_one(tmp_path: Path) -> None:
    """`pkg/__init__.py` re-exports `K`; the module using it imports it from `pkg`."""
    root = _project(tmp_path, "from pkg import K", "K", init="from pkg.backend import K\n")
    ((message, fixable),) = _backend_import(root)
    assert message.startswith("`K` is imported from here by pkg/__init__.py;") and not fixable


def test_other_names_imported_from_the_module_do_not_keep_it(tmp_path: Path) -> None:
    root = _project(tmp_path, "from pkg.backend import np", "np")
    (root / "pkg" / "backend.py").write_text(BACKEND + "import numpy as np\n")
    assert _backend_import(root) == [(FIXED, True)]
    assert apply_repo(root) == 1


def _check(path: str) -> list[str]:
    result = CliRunner().invoke(main, ["check", path, "-j", "1"], catch_exceptions=False)
    return [line for line in result.stdout.splitlines() if line.strip()]


def test_check_from_the_stored_resolution_after_the_importer_is_edited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, "from pkg.backend import K", "K")
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    monkeypatch.chdir(root)
    kept = "pkg/backend.py:1:1: KM102 `K` is imported from here by pkg/model.py;"
    assert _check("pkg/backend.py")[0].startswith(kept)
    assert list(root.glob(".kmigrate_cache/**/resolved.*"))  # answered from it next
    model = root / "pkg" / "model.py"
    model.write_text("def f(x):\n    return x\n")
    assert _check("pkg/backend.py") == [f"pkg/backend.py:1:1: KM102 {FIXED}"]
    model.write_text("from pkg import backend\n" + USES.format("backend.K"))
    assert _check("pkg/backend.py")[0].startswith(kept)


def test_a_star_import_takes_only_what_the_module_exports(tmp_path: Path) -> None:
    """keras-bert's `__init__.py` star-imports modules whose `__all__` leaves `K` out."""
    root = _project(tmp_path, "from pkg.backend import *", "K")
    backend = root / "pkg" / "backend.py"
    backend.write_text(BACKEND + '\n__all__ = ["mean"]\n\n\ndef mean(x):\n    return x\n')
    (root / "pkg" / "model.py").write_text("from pkg.backend import *\n")
    assert _backend_import(root) == [(FIXED, True)]


@pytest.mark.parametrize(
    ("use", "kept"),
    [
        ("backend.mean(x)", False),  # the module object read for another name
        ("backend.K.mean(x)", True),
        ("keep(backend)", True),  # passed on: anything may be read from it
        ("backend.K", True),
    ],
)
def test_a_module_object_reaches_the_names_read_from_it(
    use: str, kept: bool, tmp_path: Path
) -> None:
    """keras-transformer's tests import `gelu` and tf-keras's import model modules, and
    read other names from them."""
    root = _project(tmp_path, "from pkg import backend", "backend.K")
    (root / "pkg" / "model.py").write_text(
        "from pkg import backend\n\n\ndef keep(m):\n    return m\n"
        + USES.replace("{}.mean(x)", use)
    )
    ((message, fixable),) = _backend_import(root)
    assert (message != FIXED, fixable) == (kept, not kept)


def test_a_module_imported_below_its_package_is_followed(tmp_path: Path) -> None:
    root = _project(tmp_path, "import pkg.backend", "pkg.backend.K")
    ((message, fixable),) = _backend_import(root)
    assert message.startswith("`K` is imported from here by pkg/model.py;") and not fixable


def test_apply_keeps_an_import_other_modules_take_from_here(tmp_path: Path) -> None:
    """The module's own uses of `K` are all rewritten (KM201: `K.tanh` -> `ops.tanh`), so
    its import looks unused; but `__all__` lists it (the fixture `reexported_keras` shows
    the same for a module another one imports `K` from): the import stays, or the
    importers would fail."""
    from kmigrate.api import apply_to_text

    code = (
        "from tensorflow.keras import backend as K\n\n__all__ = ['K', 'gelu']\n\n\n"
        "def gelu(x):\n    return K.tanh(x)\n"
    )
    fixed = apply_to_text(code)  # (no importer in this one-file project: K may swap)
    assert "ops.tanh(x)" in fixed and "import backend as K\n" in fixed
    assert "tensorflow" not in fixed.replace("from tensorflow.keras", "")
    alone = code.replace("__all__ = ['K', 'gelu']\n\n\n", "")
    assert "backend as K" not in apply_to_text(alone)  # nothing exports it: it goes
