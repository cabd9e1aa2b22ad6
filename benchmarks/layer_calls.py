"""TensorFlow / Keras-backend calls inside layer classes, and what a kmigrate build
makes of them: converted (a fixable finding starts there), reported (a finding without
a fix), valid in Keras 3 as written (a ``K.<name>`` that Keras 3's ``keras.backend`` still
has, such as ``K.floatx()`` or ``K.epsilon()``: nothing to change, so no finding), or left
with no finding at all; plus the Keras-backend calls a build rewrites to ``tf.*`` outside
proven data code.

Reads the output of /tmp/tools/snapshot.sh-style runs: ``SNAP/scan/<id>.json`` (scan
JSON) beside the scanned tree. A "layer class" is any class with a ``call``, ``build``,
``__call__`` or ``get_updates`` method, or whose written base ends in ``Layer``,
``Model``, ``Loss``, ``Metric``, ``Cell`` or ``Mixin``: a static reading independent of
kmigrate's own classification, so two builds are measured on the same calls. A call
counts when its callee is a dotted name whose root a module-level import binds to
``tensorflow`` (or a ``tensorflow.*`` module other than ``tensorflow.keras``, which is the
Keras API, not TensorFlow ops; ``tensorflow_addons`` is another package) or to a Keras
backend (``K``). "Valid in Keras 3" is read from kmigrate's table of the installed Keras 3
API, the one its rules check names against.

    python benchmarks/layer_calls.py SNAP CORPUS_DIR [--tsv]
"""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from pathlib import Path

from kmigrate.rules.common.keras_api import keras3_reference

_LAYER_METHODS = frozenset({"call", "build", "__call__", "get_updates"})
_LAYER_BASES = ("Layer", "Model", "Loss", "Metric", "Cell", "Mixin")


def _is_tensorflow_ops(module: str) -> bool:
    """``tensorflow`` or one of its modules, except ``tensorflow.keras`` (the Keras API)."""
    parts = module.split(".")
    return parts[0] == "tensorflow" and parts[1:2] != ["keras"]


def _framework_roots(tree: ast.Module) -> dict[str, str]:
    """Local name -> ``"tf"`` (TensorFlow ops) or ``"K"`` (a Keras backend module)."""
    roots: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_tensorflow_ops(alias.name):
                    roots[alias.asname or "tensorflow"] = "tf"
                elif alias.asname and alias.name.endswith(".backend"):
                    roots[alias.asname] = "K"
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                local = alias.asname or alias.name
                if _is_tensorflow_ops(full):
                    roots[local] = "tf"
                elif full.endswith(".backend") or alias.asname == "K":
                    roots[local] = "K"
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


def _valid_in_keras3(func: ast.Attribute, roots: dict[str, str]) -> bool:
    """``K.<name>(...)`` whose ``<name>`` Keras 3's ``keras.backend`` still has."""
    return (
        isinstance(func.value, ast.Name)
        and roots.get(func.value.id) == "K"
        and keras3_reference("backend." + func.attr) is not None
    )


def layer_calls(path: Path) -> list[tuple[int, int, bool]]:
    """(line, column, valid in Keras 3 as written) of each framework call inside a layer
    class of ``path``."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return []
    roots = _framework_roots(tree)
    if not roots:
        return []
    found = set()
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef) and _is_layer_class(cls):
            for node in ast.walk(cls):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and _root(node.func) in roots
                ):
                    # JSON columns: 1-based
                    found.add(
                        (node.lineno, node.col_offset + 1, _valid_in_keras3(node.func, roots))
                    )
    return sorted(found)


def survey(scan_json: Path, tree: Path) -> Counter[str]:
    data = json.loads(scan_json.read_text())
    starts: dict[tuple[str, int, int], bool] = {}
    for f in data.get("findings", []):
        key = (f["path"], f["line"], f["column"])
        starts[key] = starts.get(key, False) or bool(f["fixable"])
    counts: Counter[str] = Counter()
    for path in sorted(tree.rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        for line, column, valid in layer_calls(path):
            counts["calls"] += 1
            fixable = starts.get((rel, line, column))
            if fixable is None:
                counts["valid in Keras 3" if valid else "no finding"] += 1
            else:
                counts["converted" if fixable else "reported"] += 1
    for f in data.get("findings", []):
        if f["rule"] == "KM108" and f["fixable"] and f["context"] != "data":
            counts["K->tf outside data"] += 1
    return counts


def main(argv: list[str]) -> None:
    snap, corpus = Path(argv[0]), Path(argv[1])
    columns = [
        "calls",
        "converted",
        "reported",
        "valid in Keras 3",
        "no finding",
        "K->tf outside data",
    ]
    print("repo\t" + "\t".join(columns))
    for scan_json in sorted((snap / "scan").glob("corpus__*.json")):
        name = scan_json.stem.removeprefix("corpus__")
        counts = survey(scan_json, corpus / name)
        print(name + "\t" + "\t".join(str(counts[c]) for c in columns))


if __name__ == "__main__":
    main(sys.argv[1:])
