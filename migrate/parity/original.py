"""The original tree a before/after reference runs in, rebuilt from the texts `kmigrate
apply` kept: an original ``models.py`` must meet the original ``layers.py``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kmigrate.parity.plan import ModelSpec, ParityUsageError, find_factory

SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist"})
MAX_TREE_FILES = 5000

MAX_TREE_FILES = 5000


def original_tree(
    folder: Path, originals: Mapping[str, str], destination: Path
) -> tuple[Path, int]:
    """Rebuild the original tree of `folder` under `destination`: its Python files as they
    are on disk (unchanged by the rewrite), with each rewritten file's original text
    (`originals`: absolute path -> text) put back. Returns (destination, files written).

    The reference imports its siblings from this copy, never from the rewritten folder:
    an original ``models.py`` must meet the original ``layers.py``.
    """
    count = 0
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") or part in SKIPPED_FOLDERS for part in relative.parts[:-1]):
            continue
        if count >= MAX_TREE_FILES:
            raise ParityUsageError(
                f"{folder} holds more than {MAX_TREE_FILES} Python files: point parity at a "
                f"smaller folder (the model's own package)"
            )
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        text = originals.get(str(path.resolve()))
        if text is None:
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
        target.write_text(text, encoding="utf-8", errors="surrogateescape")
        count += 1
    return destination, count


def reference_from_source(
    source: str,
    subject: ModelSpec,
    workdir: Path,
    originals: Mapping[str, str] | None = None,
) -> ModelSpec:
    """The original code (kept in memory by `kmigrate apply`) as a module file to import,
    inside a copy of its folder as it was before the rewrite (`original_tree`)."""
    factory = find_factory(source, subject.factory, where=f"the original of {subject.label}")
    label = f"{subject.label.rsplit(':', 1)[0]}:{factory}"
    if subject.path:
        entry = Path(subject.path).resolve()
        texts = {**(originals or {}), str(entry): source}
        root, _ = original_tree(entry.parent, texts, workdir / "original")
        path = root / entry.name
    else:
        path = workdir / "original" / "original_model.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return ModelSpec(
        kind="factory",
        label=label,
        path=str(path),
        factory=factory,
        sys_path=(str(path.parent),),
    )
