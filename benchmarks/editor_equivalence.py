"""Both editors on every round of ``apply`` over real folders: same bytes? how much CPU?

While the whole-module editor (``kmigrate.engine.editor``) and the splice editor
(``kmigrate.engine.splice_editor``) both exist, this runs apply's fix loop (in memory: no
file is written) on every ``.py`` file under the given folders, hands each round's
plans to both editors, and reports the rounds where they differ and the CPU each
editor spent::

    .venv/bin/python benchmarks/editor_equivalence.py benchmarks/corpus /path/to/repo

Exit 1 when any round differs.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import time
import warnings
from pathlib import Path

from kmigrate.engine import editor, splice_editor
from kmigrate.engine.apply import fix_module_text
from kmigrate.engine.rule_walk import RuleSet
from kmigrate.rules.context_spec import CONTEXT_SPEC
from kmigrate.rules.registry import select_rules


class Comparison:
    """Stands in for ``splice_editor.apply_plans``: runs both editors, keeps score."""

    def __init__(self) -> None:
        self.fast = splice_editor.apply_plans
        self.cpu = {"whole-module": 0.0, "splice": 0.0}
        self.rounds = 0
        self.differences: list[tuple[str, str]] = []
        self.path = ""

    def _timed(self, name: str, function, text: str, plans, style):
        start = time.process_time()
        try:
            result = function(text, plans, style)
            outcome = (result.text, result.applied, result.failed)
        except Exception as error:  # noqa: BLE001 - both must fail alike
            result, outcome = None, f"{type(error).__name__}: {error}"
        self.cpu[name] += time.process_time() - start
        return result, outcome

    def __call__(self, text: str, plans, style, tree=None):
        self.rounds += 1
        expected, expected_outcome = self._timed(
            "whole-module", editor.apply_plans, text, plans, style
        )
        # The splice editor gets the analysis' tree, as in `apply`.
        _, outcome = self._timed(
            "splice", lambda t, p, s: self.fast(t, p, s, tree), text, plans, style
        )
        if outcome != expected_outcome:
            old = expected_outcome[0] if isinstance(expected_outcome, tuple) else ""
            new = outcome[0] if isinstance(outcome, tuple) else str(outcome)
            diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), "old", "new")
            self.differences.append((self.path, "".join(diff)))
        if expected is None:
            raise RuntimeError(expected_outcome)
        return expected


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    comparison = Comparison()
    splice_editor.apply_plans = comparison  # apply looks it up at every round
    ruleset = RuleSet(select_rules(None))
    files = sorted(p for folder in args.folders for p in folder.rglob("*.py"))
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        comparison.path = str(path)
        fix_module_text(str(path), text, ruleset, CONTEXT_SPEC)
    old, new = comparison.cpu["whole-module"], comparison.cpu["splice"]
    print(
        f"{len(files)} files, {comparison.rounds} editing rounds, "
        f"{len(comparison.differences)} differences; editor CPU: whole-module {old:.1f} s, "
        f"splice {new:.1f} s ({old / max(new, 1e-9):.1f}x)"
    )
    for path, diff in comparison.differences[:20]:
        print(f"--- differs: {path}\n{diff}")
    return 1 if comparison.differences else 0


if __name__ == "__main__":
    sys.exit(main())
