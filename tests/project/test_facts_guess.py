"""The guess of a file's project facts before the project is resolved: which imports
may matter, and which modules are worth indexing first (project/facts_guess.py).
That the guess never changes a finding is tested on whole runs in test_project_index.py."""

from __future__ import annotations

from kmigrate.engine.module_record import ModuleRecord
from kmigrate.project.facts_guess import FactsGuess, choose_providers, useful_imports

MODULES = {"pkg", "pkg.backend", "pkg.layers", "pkg.utils"}


def _useful(text: str, package: str = "pkg") -> set[str]:
    return useful_imports(text.encode(), package, {"pkg"}, MODULES.__contains__)


def test_imports_that_may_change_a_files_facts() -> None:
    text = """\
from pkg.backend import K, keras as ks
from pkg.layers import (
    Base,
    gelu,
)
from pkg import utils
from .utils import *
import tensorflow as tf
from numpy import linalg

class Block(Base):
    def call(self, x):
        return K.mean(gelu(x)) + utils.norm(x) + linalg.norm(x)
"""
    assert _useful(text) == {
        "pkg.backend.K",  # used as a namespace: maybe a re-exported backend
        "pkg.layers.Base",  # a class base
        "pkg.utils",  # a star import (relative, made absolute)
    }  # not: `keras as ks` (unused), `gelu` (only called), `utils` (a project module)


def test_a_base_reached_through_a_project_module_counts() -> None:
    text = "from pkg import utils\n\nclass Head(utils.Base):\n    pass\n"
    assert _useful(text) == {"pkg.utils"}


def test_files_importing_nothing_of_the_project_need_nothing() -> None:
    text = "from tensorflow.keras import backend as K\n\nK.mean(1)\n"
    assert _useful(text) == set()


def test_providers_are_the_most_needed_that_pay_and_fit() -> None:
    needs = {
        "a.py": {"backend.py"},
        "b.py": {"backend.py", "big.py"},
        "backend.py": {"init.py"},  # needs a module indexed already (no size)
        "init.py": {"base.py"},  # ... which needs one more to analyse
    }
    sizes = {"a.py": 100, "b.py": 100, "backend.py": 50, "big.py": 500, "base.py": 30}
    # backend.py (needed by 200 bytes) pays, with base.py it reaches; big.py does not
    assert choose_providers(needs, sizes, budget=1000) == ["backend.py", "base.py"]
    assert choose_providers(needs, sizes, budget=60) == []  # 80 bytes do not fit


def _records(sources: dict[str, str]) -> dict[str, ModuleRecord]:
    from kmigrate.project.index_entries import entry_for_bytes

    return {
        name: ModuleRecord(
            key=f"{name}.py",
            entry=entry_for_bytes(text.encode()),
            package="",
            folder="",
            names=(name,),
        )
        for name, text in sources.items()
    }


def test_the_modules_a_file_reaches_are_the_whole_closure_of_its_imports() -> None:
    """Closures are memoized and reused (a module reached whose closure is known brings
    it whole): in every order of asking, cycles included, they are the plain closure."""
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    known = _records(
        {
            "a": "from b import x\n",
            "b": "from c import y\nfrom a import z\n",  # a cycle a -> b -> a
            "c": "import d\n",
            "d": "",
            "e": "from d import w\n",
        }
    )
    imports = {"a": ["b"], "b": ["c", "a"], "c": ["d"], "d": [], "e": ["d"]}

    def plain(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(imports[name])
        return seen

    for order in (["a", "b", "c", "e"], ["e", "c", "b", "a"], ["b", "a", "e", "c"]):
        guess = FactsGuess(known.values(), lambda path, package: {}, {}, CONTEXT_SPEC)
        for first in order:
            importer = _records({"f": f"from {first} import q\n"})["f"]
            reached = {record.names[0] for record in guess.reached(importer)}
            assert reached == plain(first), (order, first)
