"""Where a scan's CPU time goes: parse, engine, all rules, the report footprint, each rule.

    .venv/bin/python benchmarks/rule_costs.py              # a sample of the corpus
    .venv/bin/python benchmarks/rule_costs.py src/ --every 1

Times are CPU seconds in this process with the garbage collector paused (as the scan's
workers run), best of ``--repeat`` per file, and every measurement runs file by file,
interleaved, so a machine that changes speed during the run skews them alike. A rule's
cost is that rule alone minus the engine alone: it includes shared work the rule sets
off (resolving every name once any reference rule is selected), so the costs of the
rules add up to more than "all rules" does.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kmigrate.engine.analyze import _parse, analyze_module_text  # noqa: E402
from kmigrate.engine.rule_walk import RuleSet  # noqa: E402
from kmigrate.engine.sources import SourceError, decode_source  # noqa: E402
from kmigrate.rules.context_spec import CONTEXT_SPEC, SOURCE_MARKERS  # noqa: E402
from kmigrate.rules.registry import all_rules  # noqa: E402


def _texts(root: Path, every: int) -> list[str]:
    texts = []
    for index, path in enumerate(sorted(root.rglob("*.py"))):
        if index % every:
            continue
        data = path.read_bytes()
        if not any(marker in data for marker in SOURCE_MARKERS):
            continue
        try:
            texts.append(decode_source(data).text)
        except SourceError:
            continue
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", type=Path, default=HERE / "corpus")
    parser.add_argument("--every", type=int, default=5, help="use every Nth file [5]")
    parser.add_argument("--repeat", type=int, default=3, help="best of N [3]")
    parser.add_argument("--top", type=int, default=15, help="rules to list [15]")
    args = parser.parse_args(argv)
    if not args.root.exists():
        raise SystemExit(f"{args.root} does not exist (run benchmarks/make_corpus.py)")
    from kmigrate.report.footprint import count_tf_statements

    texts = _texts(args.root, args.every)
    lines = sum(t.count("\n") for t in texts)
    rules = list(all_rules())
    print(
        f"{len(texts)} files, {lines:,} lines, {len(rules)} rules; CPU seconds, best of "
        f"{args.repeat} per file",
        flush=True,
    )
    rulesets = {"engine": RuleSet([]), "all": RuleSet(rules)}
    # each rule alone, with every rule's claims (what a fallback is shown, as in a run)
    rulesets.update((rule.id, RuleSet([rule], claimants=rules)) for rule in rules)
    totals = dict.fromkeys(["parse", "footprint", *rulesets], 0.0)
    gc.collect()
    gc.disable()
    try:
        for text in texts:
            tree = _parse(text)
            totals["parse"] += _best(args.repeat, _parse, text)
            totals["footprint"] += _best(args.repeat, count_tf_statements, tree)
            for key, ruleset in rulesets.items():
                totals[key] += _best(
                    args.repeat, analyze_module_text, "module.py", text, ruleset, CONTEXT_SPEC
                )
    finally:
        gc.enable()
    parse, engine = totals["parse"], totals["engine"]
    rows = [
        ("ast.parse", parse),
        ("engine (no rule selected), parse included", engine),
        ("all rules, parse included", totals["all"]),
        ("report footprint (count_tf_statements), parse excluded", totals["footprint"]),
    ]
    for label, seconds in rows:
        print(f"{seconds:8.2f}  {seconds / parse:5.2f}x parse  {label}")
    costs = sorted(((totals[r.id] - engine, r) for r in rules), key=lambda c: -c[0])
    print("rule costs (the rule alone minus the engine alone):")
    for seconds, rule in costs[: args.top]:
        print(f"{seconds:8.2f}  {seconds / parse:5.2f}x parse  {rule.id} {rule.name}")
    return 0


def _best(repeat: int, action, *arguments) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        action(*arguments)
        times.append(time.process_time() - start)
    return min(times)


if __name__ == "__main__":
    sys.exit(main())
