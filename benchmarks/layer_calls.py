"""TensorFlow / Keras-backend calls inside layer classes, and what a kmigrate build
makes of them: converted (a fixable finding starts there), reported (a finding without
a fix), or left with no finding at all; plus the Keras-backend calls a build rewrites to
``tf.*`` outside proven data code.

Reads the output of /tmp/tools/snapshot.sh-style runs: ``SNAP/scan/<id>.json`` (scan
JSON) beside the scanned tree. A "layer class" is any class with a ``call``, ``build``,
``__call__`` or ``get_updates`` method, or whose written base ends in ``Layer``,
``Model``, ``Loss``, ``Metric``, ``Cell`` or ``Mixin``: a static reading independent of
kmigrate's own classification, so two builds are measured on the same calls. A call
counts when its callee is a dotted name whose root a module-level import binds to
``tensorflow`` (or a ``tensorflow.*`` module) or to a Keras backend (``K``).

    python benchmarks/layer_calls.py SNAP CORPUS_DIR [--tsv]
"""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from pathlib import Path

_LAYER_METHODS = frozenset({"call", "build", "__call__", "get_updates"})
_LAYER_BASES = ("Layer", "Model", "Loss", "Metric", "Cell", "Mixin")


def _framework_roots(tree: ast.Module) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "tensorflow":
                    roots.add(alias.asname or "tensorflow")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                local = alias.asname or alias.name
                if full.startswith("tensorflow") and "keras" not in full.split(".")[1:2]:
                    roots.add(local)
                elif full.endswith(".backend") or alias.asname == "K":
                    roots.add(local)
    return roots


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_layer_class(cls: ast.ClassDef) -> bool:
    methods = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if methods & _LAYER_METHODS:
        return True
    for base in cls.bases:
        tail = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if tail.endswith(_LAYER_BASES):
            return True
    return False


def layer_calls(path: Path) -> list[tuple[int, int]]:
    """(line, column) of each framework call inside a layer class of ``path``."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return []
    roots = _framework_roots(tree)
    if not roots:
        return []
    found = []
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef) and _is_layer_class(cls):
            for node in ast.walk(cls):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and _root(node.func) in roots
                ):
                    found.append((node.lineno, node.col_offset + 1))  # JSON columns: 1-based
    return sorted(set(found))


def survey(scan_json: Path, tree: Path) -> Counter[str]:
    data = json.loads(scan_json.read_text())
    starts: dict[tuple[str, int, int], bool] = {}
    for f in data.get("findings", []):
        key = (f["path"], f["line"], f["column"])
        starts[key] = starts.get(key, False) or bool(f["fixable"])
    counts: Counter[str] = Counter()
    for path in sorted(tree.rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        for line, column in layer_calls(path):
            counts["calls"] += 1
            fixable = starts.get((rel, line, column))
            counts["converted" if fixable else "no finding" if fixable is None else "reported"] += 1
    for f in data.get("findings", []):
        if f["rule"] == "KM108" and f["fixable"] and f["context"] != "data":
            counts["K->tf outside data"] += 1
    return counts


def main(argv: list[str]) -> None:
    snap, corpus = Path(argv[0]), Path(argv[1])
    columns = ["calls", "converted", "reported", "no finding", "K->tf outside data"]
    print("repo\t" + "\t".join(columns))
    for scan_json in sorted((snap / "scan").glob("corpus__*.json")):
        name = scan_json.stem.removeprefix("corpus__")
        counts = survey(scan_json, corpus / name)
        print(name + "\t" + "\t".join(str(counts[c]) for c in columns))


if __name__ == "__main__":
    main(sys.argv[1:])
