"""A new cross-file fact is one provider module plus the rule's declaration
(engine/fact_provider.py): a test-only provider, "the other modules that call
``tf.print``", declared by a test-only rule, is kept through the entry store, the stored
resolution and its partial re-resolution after an edit, exactly as a fresh resolution
makes it, and the rule reads it from the module's facts."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from kmigrate.engine import CallSite, EntrySource, FactProvider, Resolve, Rule, providers_of
from kmigrate.engine.analyze import analyze_module_text
from kmigrate.engine.rule_walk import RuleSet
from kmigrate.rules import registry
from kmigrate.rules.base import Report
from kmigrate.rules.context_spec import CONTEXT_SPEC
from tests.project.test_resolution_cache import _counted_local, _reference, _resolve, _write


class TfPrintUsers(FactProvider):
    """Value: (module as shown, its ``tf.print`` calls) of the other modules calling
    ``tf.print``, by path; () for a module that calls none."""

    name = "test_tf_print_users"
    default: tuple[tuple[str, int], ...] = ()

    @classmethod
    def entry(cls, source: EntrySource) -> list[list[str]]:
        """Every call (one pair per call), for resolution to say which are ``tf.print``
        (a real provider keeps only the calls that may be: see
        rules/facts/saved_model_reloads.py)."""
        return sorted([callee, path] for callee, _, path, _ in source.calls)

    @classmethod
    def valid_entry(cls, value: Any) -> bool:
        return type(value) is list and all(
            type(pair) is list and len(pair) == 2 and all(type(s) is str for s in pair)
            for pair in value
        )

    @classmethod
    def local(cls, value: list[list[str]], resolve: Resolve) -> int:
        return sum(resolve(callee, path) == "tf.print" for callee, path in value)

    @classmethod
    def decode_local(cls, value: Any) -> int:
        if type(value) is not int or value < 0:
            raise ValueError("not a count")
        return value

    @classmethod
    def project(
        cls, own: int, others: Callable[[], Sequence[tuple[str, int]]]
    ) -> tuple[tuple[str, int], ...]:
        return tuple((shown, n) for shown, n in others() if n) if own else ()

    @classmethod
    def decode(cls, value: Any) -> tuple[tuple[str, int], ...]:
        if type(value) is not list or not all(
            type(v) is list and len(v) == 2 and type(v[0]) is str and type(v[1]) is int
            for v in value
        ):
            raise ValueError("not tf.print users")
        return tuple((shown, n) for shown, n in value)


class TfPrintElsewhere(Rule):
    id = "KM297"
    name = "test-tf-print-elsewhere"
    summary = "`tf.print` here and in other modules."
    rationale = "A test of the fact providers."
    fix_safety = "Never rewritten."
    call_symbols = frozenset({"tf.print"})
    facts = (TfPrintUsers,)

    def check_call(self, site: CallSite) -> Iterable[Report]:
        users = site.module.fact(TfPrintUsers)
        if users:
            yield Report(site, "also " + ", ".join(f"{s} ({n})" for s, n in users))


FILES = {
    "pkg/__init__.py": "",
    "pkg/log.py": "import tensorflow as tf\n\ndef log(x):\n    tf.print(x)\n    tf.print(x)\n",
    "pkg/quiet.py": "from tensorflow import print as show\n\ndef shout(x):\n    show(x)\n",
    "pkg/none.py": "def print_it(x):\n    print(x)\n",
    "train.py": "import tensorflow as tf\nfrom pkg.log import log\n\nlog(tf.print(1))\n",
}


@pytest.fixture
def declared(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test rule registered beside every other: its provider is then one of the
    rules' (the spec asks the registry)."""
    providers = providers_of([*registry.all_rules(), TfPrintElsewhere])
    monkeypatch.setattr(registry, "fact_providers", lambda: providers)


def _users(facts: dict, root: Path) -> dict[str, tuple]:
    return {
        str(Path(key).relative_to(root)): dict(f.provided)[TfPrintUsers.name]
        for key, f in facts.items()
    }


def test_a_declared_fact_is_kept_through_the_store_and_a_partial_re_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, declared: None
) -> None:
    root = tmp_path / "repo"
    _write(root, FILES)
    made = _counted_local(monkeypatch)
    cold = _resolve(root, use_store=True)
    assert _users(cold, root) == {
        "pkg/__init__.py": (),
        "pkg/log.py": (("pkg/quiet.py", 1), ("train.py", 1)),
        "pkg/quiet.py": (("pkg/log.py", 2), ("train.py", 1)),  # through `print as show`
        "pkg/none.py": (),  # the builtin print is not tf.print
        "train.py": (("pkg/log.py", 2), ("pkg/quiet.py", 1)),
    }
    assert cold == _resolve(root, use_store=False) == _reference(root)
    made.clear()
    warm = _resolve(root, use_store=True)  # every value read back from the store
    assert warm == cold and made == []
    # an edit: one module resolved again, the others' values read from their headers
    (root / "pkg" / "none.py").write_text("import tensorflow as tf\n\ntf.print(0)\n")
    made.clear()
    partial = _resolve(root, use_store=True)
    assert made == [str(root / "pkg" / "none.py")]
    assert partial == _resolve(root, use_store=False) == _reference(root)
    assert _users(partial, root)["pkg/log.py"] == (
        ("pkg/none.py", 1),
        ("pkg/quiet.py", 1),
        ("train.py", 1),
    )
    # the rule reads the value from the module's facts
    log = root / "pkg" / "log.py"
    found = analyze_module_text(
        str(log),
        log.read_text(),
        RuleSet([TfPrintElsewhere]),
        CONTEXT_SPEC,
        facts=partial[str(log)],
    ).findings
    assert [(f.rule, f.span.line, f.message) for f in found] == [
        ("KM297", 4, "also pkg/none.py (1), pkg/quiet.py (1), train.py (1)"),
        ("KM297", 5, "also pkg/none.py (1), pkg/quiet.py (1), train.py (1)"),
    ]


def test_a_malformed_stored_value_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, declared: None
) -> None:
    """A file's header whose provider value does not decode makes the stored
    resolution a miss: the facts are resolved again, never read from it."""
    from kmigrate.project import stored_resolution

    root = tmp_path / "repo"
    _write(root, FILES)
    cold = _resolve(root, use_store=True)
    made = _counted_local(monkeypatch)
    assert _resolve(root, use_store=True) == cold and made == []  # read from the store
    original = stored_resolution._spec

    class Broken(TfPrintUsers):
        @classmethod
        def decode_local(cls, value: Any) -> int:
            raise ValueError("not a count")

    def with_count_as_text():  # the stored values no longer decode: a miss
        spec = original()
        providers = tuple(Broken if p is TfPrintUsers else p for p in spec.providers())
        return type(spec)(**{**spec.__dict__, "provider_source": lambda: providers})

    monkeypatch.setattr(stored_resolution, "_spec", with_count_as_text)
    assert _resolve(root, use_store=True) == cold
    assert made  # resolved again


def test_a_module_analysed_alone_gets_the_default() -> None:
    code = "import tensorflow as tf\n\ntf.print(1)\n"
    found = analyze_module_text("m.py", code, RuleSet([TfPrintElsewhere]), CONTEXT_SPEC)
    assert found.findings == []
    assert json.dumps(TfPrintUsers.default) == "[]"


def test_the_rules_providers_are_those_they_declare_each_once() -> None:
    from kmigrate.rules.facts.saved_model_reloads import SavedModelReloads

    assert registry.fact_providers() == (SavedModelReloads,)
    # found by their modules' names, without importing the rules: those they declare
    assert registry.fact_providers() == providers_of(registry.all_rules())
    assert CONTEXT_SPEC.providers() == registry.fact_providers()

    class SameName(TfPrintUsers):
        name = SavedModelReloads.name

    class Other(TfPrintElsewhere):
        facts = (SameName,)

    with pytest.raises(RuntimeError, match="taken twice"):
        providers_of([*registry.all_rules(), Other])
