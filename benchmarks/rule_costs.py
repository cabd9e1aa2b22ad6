"""Where a scan's CPU time goes: parse, engine, each rule, the report footprint.

    .venv/bin/python benchmarks/rule_costs.py              # a sample of the corpus
    .venv/bin/python benchmarks/rule_costs.py src/ --every 1

Times are CPU seconds in this process (best of ``--repeat``), so a busy machine
skews them less than wall times. A rule's cost is measured leave-one-out: all
rules minus all rules but that one, which charges a rule for the work only it
causes (shared engine work, such as resolving every name once any reference rule
is selected, shows up in the "engine" lines instead).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from migrate.analyze import RuleSet, _parse, analyze_module_text  # noqa: E402
from migrate.sources import SourceError, decode_source  # noqa: E402
from rules.context_spec import CONTEXT_SPEC, SOURCE_MARKERS  # noqa: E402
from rules.registry import all_rules  # noqa: E402


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


def _best(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return min(times)


def _analyze_all(texts: list[str], ruleset: RuleSet):
    def run() -> None:
        for text in texts:
            analyze_module_text("module.py", text, ruleset, CONTEXT_SPEC)

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", type=Path, default=HERE / "corpus")
    parser.add_argument("--every", type=int, default=5, help="use every Nth file [5]")
    parser.add_argument("--repeat", type=int, default=3, help="best of N [3]")
    parser.add_argument("--top", type=int, default=15, help="rules to list [15]")
    args = parser.parse_args(argv)
    if not args.root.exists():
        raise SystemExit(f"{args.root} does not exist (run benchmarks/make_corpus.py)")
    texts = _texts(args.root, args.every)
    lines = sum(t.count("\n") for t in texts)
    rules = list(all_rules())
    print(
        f"{len(texts)} files, {lines:,} lines, {len(rules)} rules; CPU seconds, best of "
        f"{args.repeat}",
        flush=True,
    )

    def parse_only() -> None:
        for text in texts:
            _parse(text)

    parse = _best(parse_only, args.repeat)
    engine = _best(_analyze_all(texts, RuleSet([])), args.repeat)
    full = _best(_analyze_all(texts, RuleSet(rules)), args.repeat)
    rows = [
        ("ast.parse", parse),
        ("engine (no rule selected), parse included", engine),
        ("all rules", full),
    ]
    try:
        from migrate.report.footprint import count_tf_statements

        def footprint() -> None:
            for text in texts:
                count_tf_statements(_parse(text))

        rows.append(
            (
                "report footprint (count_tf_statements), parse excluded",
                _best(footprint, args.repeat) - parse,
            )
        )
    except ImportError:
        pass
    for label, seconds in rows:
        print(f"{seconds:8.2f}  {seconds / parse:5.1f}x parse  {label}")
    costs = []
    for rule in rules:
        others = RuleSet([r for r in rules if r is not rule])
        costs.append((full - _best(_analyze_all(texts, others), args.repeat), rule))
        print(".", end="", flush=True)
    print()
    costs.sort(key=lambda item: item[0], reverse=True)
    print("rule costs (leave-one-out):")
    for seconds, rule in costs[: args.top]:
        print(f"{seconds:8.2f}  {seconds / parse:5.2f}x parse  {rule.id} {rule.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
