"""The dotted names a file can be imported by, and the package its relative imports
start from: from its ``__init__.py`` chain, from the project root (namespace packages,
top-level scripts) and from below a ``src/`` folder."""

from __future__ import annotations

from pathlib import Path


def module_names(path: Path, root: Path, package: str) -> tuple[str, ...]:
    """Dotted names (``root`` absolute) a file can be imported by: from its ``__init__.py`` chain
    (``package``), from the project root (namespace packages, top-level scripts)
    and from below a ``src/`` folder."""
    return names_below(path.stem, package, folder_below(path.parent, root))


def folder_below(folder: Path, root: Path) -> tuple[str, ...] | None:
    """The parts of ``folder`` below ``root`` (``root`` absolute), None when it is not
    below it: what :func:`names_below` and :func:`package_below` take, the same for
    every file of a folder."""
    try:
        return folder.absolute().relative_to(root).parts
    except ValueError:
        return None


def names_below(stem: str, package: str, below: tuple[str, ...] | None) -> tuple[str, ...]:
    """:func:`module_names` of the file named ``stem`` (without its suffix) in the
    folder :func:`folder_below` gave ``below`` for."""
    names: list[str] = []
    own = package if stem == "__init__" else f"{package}.{stem}" if package else stem
    names.append(own)
    parts = [] if below is None else [*below, stem]
    if parts and parts[-1] == "__init__":
        parts.pop()
    if parts:
        names.append(".".join(parts))
        if parts[0] in ("src", "lib", "python") and len(parts) > 1:
            names.append(".".join(parts[1:]))
    return tuple(dict.fromkeys(n for n in names if n))


def relative_package(path: Path, root: Path, package: str) -> str:
    """The package relative imports start from: the ``__init__.py`` chain, or for a
    namespace package (no ``__init__.py``) the folders below the root."""
    return package or package_below("", folder_below(path.parent, root))


def package_below(package: str, below: tuple[str, ...] | None) -> str:
    """:func:`relative_package` of a file in the folder :func:`folder_below` gave
    ``below`` for."""
    if package or below is None:
        return package
    parts = list(below)
    if parts and parts[0] in ("src", "lib", "python"):
        parts = parts[1:]
    return ".".join(parts)
