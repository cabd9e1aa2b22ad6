"""Whether a helper's name is taken in a module (rules/common/compat_helpers.py): the
names are read once per module from its tree index, not by a walk of the whole tree
at every call site that would call a helper (a tenth of a scan's rule time on real
Keras 2 code, issue 34)."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from kmigrate.engine.analyze import analyze_module_text
from kmigrate.engine.rule_walk import RuleSet
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.registry import all_rules

_CALLS = """
from keras import backend as K

def f(x, y, z):
    a = K.batch_dot(x, y)
    b = K.batch_dot(y, z)
    return K.batch_dot(a, b)
"""


def _batch_dots(text: str):
    analysis = analyze_module_text(
        "m.py", textwrap.dedent(text), RuleSet(all_rules()), CONTEXT_SPEC
    )
    return [f for f in analysis.findings if "K.batch_dot" in f.message]


@pytest.mark.parametrize(
    "taken",
    [
        "def g(batch_dot):\n    return batch_dot",  # a parameter
        "batch_dot = None",  # a variable
        "def batch_dot():\n    pass",  # a function
        "class batch_dot:\n    pass",  # a class
        "from elsewhere import batch_dot",  # an import from elsewhere
        "import batch_dot",
    ],
)
def test_a_name_the_module_uses_refuses_the_helper_at_every_site(taken: str) -> None:
    found = _batch_dots(_CALLS + "\n" + taken + "\n")
    assert len(found) == 3
    assert all(not f.fixable and "uses the name `batch_dot` itself" in f.message for f in found)


def test_the_helpers_own_import_does_not_take_its_name() -> None:
    found = _batch_dots("from ._keras2_compat import batch_dot\n" + _CALLS)
    assert len(found) == 3 and all(f.fixable for f in found)


def test_the_module_is_not_walked_once_per_call_site(monkeypatch) -> None:
    walked = []
    walk = ast.walk

    def counted(node):
        if sys._getframe(1).f_globals.get("__name__", "").endswith("compat_helpers"):
            walked.append(node)
        return walk(node)

    monkeypatch.setattr(ast, "walk", counted)
    found = _batch_dots(_CALLS)
    assert len(found) == 3 and all(f.fixable for f in found)
    assert not [node for node in walked if isinstance(node, ast.Module)]


def test_the_helper_file_itself_has_no_finding() -> None:
    """apply writes these helpers into the project; the next scan reads them as model
    code (a `keras.backend.backend()` there was reported as `K.backend`)."""
    from kmigrate.api import scan_text
    from kmigrate.rules.common.compat_helpers import HELPER_FILE

    assert scan_text(HELPER_FILE.read_text(encoding="utf-8"), path="_keras2_compat.py") == []
