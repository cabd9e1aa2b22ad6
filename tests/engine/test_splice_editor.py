"""The splice editor gives the whole-module editor's output, byte for byte.

``kmigrate.engine.splice_editor`` parses only the statements that hold edits; while the
whole-module ``kmigrate.engine.editor`` exists, every round of ``apply`` on every rule
example, sample and fixture (and on hand-made modules aimed at the splice editor's
edges: line endings, indentation, decorators, semicolons, left-out method bodies,
imports) is run through both and the results compared.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kmigrate.engine import editor, splice_editor
from kmigrate.engine.apply import fix_module_text
from kmigrate.engine.model import CallEdit, EditPlan, ReplaceNode, Span
from kmigrate.engine.rule_walk import RuleSet
from kmigrate.engine.spec import ImportStyle
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.registry import all_rules, select_rules

STYLE = CONTEXT_SPEC.import_style

REPO = Path(__file__).resolve().parents[2]
RULES = RuleSet(select_rules(None))


def _files() -> list[Path]:
    found = [*REPO.glob("samples/**/*.py"), *REPO.glob("tests/fixtures/**/*.py")]
    return sorted(p for p in found if ".kmigrate_cache" not in p.parts)


_LAYER = """\
import tensorflow as tf
from tensorflow import keras


@keras.utils.register_keras_serializable()
class Noisy(keras.layers.Layer):
    \"\"\"Adds noise.\"\"\"

    def build(self, shape):
        self.w = self.add_weight("w", shape[-1:])

    @tf.function
    def call(self, x):
        # a comment the edit must keep
        y = tf.reduce_mean(x, axis=-1, keepdims=True)
        if True:
            y = tf.reduce_sum(y, 1)  # trailing
        return x + tf.random.normal(tf.shape(x)) * y

    def extra(self):
        return tf.square(2.0)

    def get_config(self):
        return {**super().get_config()}
"""

# Modules aimed at the splice editor's edges; rules supply the edits.
HAND_MADE = {
    "layer": _LAYER,
    "layer_crlf": _LAYER.replace("\n", "\r\n"),
    "layer_no_final_newline": _LAYER.rstrip("\n"),
    "layer_tabs": _LAYER.replace("    ", "\t"),
    "layer_two_spaces": _LAYER.replace("    ", "  "),
    "layer_two_spaces_after_one_line_blocks": (
        "try: import numpy\nexcept ImportError: numpy = None\n" + _LAYER.replace("    ", "  ")
    ),
    "semicolons_and_backslashes": textwrap.dedent(
        """\
        import tensorflow as tf


        class Odd(tf.keras.layers.Layer):
            def call(self, x):
                a = 1; y = tf.reduce_mean(x)
                z = tf.reduce_max(x) \\
                    + 1
                if a: y = tf.reduce_min(x)
                return y + z
            def extra(self, a): return tf.reduce_sum(a)
        """
    ),
    "imports_everywhere": textwrap.dedent(
        """\
        \"\"\"Docstring.\"\"\"
        from __future__ import annotations

        # about tf
        import tensorflow as tf  # the framework
        try:
            import numpy as np
        except ImportError:
            np = None


        # a comment before the class
        class Mean(tf.keras.layers.Layer):
            def call(self, x):
                return tf.reduce_mean(x, axis=-1)


        if __name__ == "__main__":
            import tensorflow as tf
        """
    ),
    "only_import_line": textwrap.dedent(
        """\
        import tensorflow as tf
        from tensorflow.keras import layers


        class Mean(layers.Layer):
            def call(self, x):
                return tf.reduce_mean(x)
        """
    ),
    "header_edits_and_runs_of_pieces": textwrap.dedent(
        """\
        import tensorflow as tf


        class Gate(tf.keras.layers.Layer):
            # the base class changes; the body is left out of that piece
            @tf.function
            def call(self, x, training=None):
                a = tf.reduce_mean(x)
                b = tf.reduce_max(x)
                if training:
                    c = tf.reduce_min(x)
                    d = tf.reduce_sum(x)  # two pieces in one block
                e = tf.square(a)
                return a + b + e


        class Plain(tf.keras.layers.Layer):
            def call(self, x):
                return tf.abs(x)
        """
    ),
    "nested_class": textwrap.dedent(
        """\
        import tensorflow as tf


        def make():
            class Inner(tf.keras.layers.Layer):
                def call(self, x):
                    return x + tf.random.uniform(tf.shape(x))

            return Inner
        """
    ),
}


def _run_both(path: str, text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """``apply`` on ``text`` with both editors at every round; returns the rounds."""
    rounds = []
    fast = splice_editor.apply_plans

    def both(current: str, plans, style, tree=None, keep=frozenset(), layout=None):
        expected = editor.apply_plans(current, plans, style, keep, layout)
        got = fast(current, plans, style, tree, keep, layout)  # the analysis' tree, as in apply
        assert got.text == expected.text, f"{path}: the editors differ"
        assert (got.applied, got.failed) == (expected.applied, expected.failed), path
        rounds.append(current)
        return got

    monkeypatch.setattr(splice_editor, "apply_plans", both)
    fix_module_text(path, text, RULES, CONTEXT_SPEC)
    return len(rounds)


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(REPO)))
def test_same_output_on_samples_and_fixtures(path: Path, monkeypatch) -> None:
    _run_both(str(path), path.read_text(encoding="utf-8"), monkeypatch)


@pytest.mark.parametrize("name", sorted(HAND_MADE))
def test_same_output_on_hand_made_modules(name: str, monkeypatch) -> None:
    assert _run_both(f"{name}.py", HAND_MADE[name], monkeypatch) >= 1


def test_same_output_on_every_rule_example(monkeypatch) -> None:
    rounds = 0
    for rule in all_rules():
        for index, example in enumerate(rule.examples):
            if example.flagged:
                rounds += _run_both(f"{rule.id}_{index}.py", example.code, monkeypatch)
    assert rounds > 50


def test_plans_that_fail_fail_the_same_way() -> None:
    text = "import tensorflow as tf\ny = tf.reduce_mean(x)\n"
    plans = [
        EditPlan((CallEdit(Span(2, 4, 2, 21), callee="keras.ops.mean"),)),
        EditPlan((CallEdit(Span(2, 4, 2, 9), callee="keras.ops.mean"),)),  # not a call
        EditPlan((CallEdit(Span(9, 0, 9, 3), callee="keras.ops.mean"),)),  # no such line
    ]
    expected = editor.apply_plans(text, plans, STYLE)
    got = splice_editor.apply_plans(text, plans, STYLE)
    assert (got.text, got.applied, got.failed) == (expected.text, expected.applied, expected.failed)
    assert got.applied == [0] and got.text == "from keras import ops\ny = ops.mean(x)\n"


def _recorded_parses(monkeypatch) -> list[str]:
    import libcst

    seen: list[str] = []
    parse = libcst.parse_module

    def recording(code: str, *args, **kwargs):
        seen.append(code)
        return parse(code, *args, **kwargs)

    monkeypatch.setattr(splice_editor.cst, "parse_module", recording)
    return seen


def test_an_edit_in_a_header_leaves_the_body_out(monkeypatch) -> None:
    """A changed base class or decorator makes the class a piece, not its methods."""
    seen = _recorded_parses(monkeypatch)
    text = (
        "import tensorflow as tf\n\n\n"
        "class Gate(tf.keras.layers.Layer):\n"
        "    def call(self, x):\n"
        "        return x + 1  # never parsed\n"
    )
    line = text.splitlines().index("class Gate(tf.keras.layers.Layer):") + 1
    base = Span(line, 11, line, 32)
    plan = EditPlan((ReplaceNode(base, "{name:keras.layers.Layer}"),))
    result = splice_editor.apply_plans(text, [plan], STYLE)
    assert seen and not any("never parsed" in code for code in seen)
    assert result.text == editor.apply_plans(text, [plan], STYLE).text
    assert "class Gate(keras.layers.Layer):" in result.text


def test_the_position_pass_gives_libcsts_ranges() -> None:
    """The editor's own position pass must agree with ``PositionProvider`` on every node."""
    import libcst
    from libcst.metadata import MetadataWrapper, PositionProvider

    texts = [p.read_text(encoding="utf-8") for p in _files()] + list(HAND_MADE.values())
    for text in texts:
        module = libcst.parse_module(text)
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        ranges = editor.PlanTransformer([], editor.Speller({}, set(), STYLE)).locate(module).ranges
        assert ranges == {
            id(node): (r.start.line, r.start.column, r.end.line, r.end.column)
            for node, r in expected.items()
        }


def test_only_the_statements_with_edits_are_parsed(monkeypatch) -> None:
    """The point of the splice editor: LibCST never sees the untouched function."""
    seen = _recorded_parses(monkeypatch)
    untouched = "def untouched():\n    return 'never parsed'\n\n\n"
    text = "import tensorflow as tf\n\n\n" + untouched + "y = tf.reduce_mean(x)\n"
    plan = EditPlan((CallEdit(Span(8, 4, 8, 21), callee="keras.ops.mean"),))
    result = splice_editor.apply_plans(text, [plan], STYLE)
    assert seen and not any("never parsed" in code for code in seen)
    assert result.text == editor.apply_plans(text, [plan], STYLE).text


def test_the_import_style_is_data_the_editor_is_given() -> None:
    """The editors know no framework's import style: without one a new name is written
    in full under ``import <root>``; a style that names a namespace spells through it."""
    text = "y = f(x)\n"
    plan = EditPlan((CallEdit(Span(1, 4, 1, 8), callee="pkg.sub.g"),))
    for style, expected in (
        (ImportStyle(), "import pkg\n\ny = pkg.sub.g(x)\n"),
        (ImportStyle(from_imports=("pkg.sub",)), "from pkg import sub\n\ny = sub.g(x)\n"),
    ):
        assert editor.apply_plans(text, [plan], style).text == expected
        assert splice_editor.apply_plans(text, [plan], style).text == expected
