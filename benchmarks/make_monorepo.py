"""Assemble the scale benchmark's monorepo (issue 34, section 3) from real repositories.

The trees ``benchmarks/scale.py`` measures are real TF/Keras code, not generated: every
``.py`` file of the repositories listed in ``benchmarks/monorepo_sources.tsv`` (owner/name,
the commit used, its ``.py`` files), side by side::

    /tmp/mono/<name>/<path in the repository>     every regular .py file (>= 10,000)
    /tmp/mono-5k/...                               5,000 of them, hard links into /tmp/mono
    /tmp/mono-1k/...                               1,000 of them (a subset of mono-5k)

The subsets are the files whose ``sha256("<name>/<path>")`` sorts first, so they are
nested, stable from run to run and spread over every repository (they break packages
apart: a subset's package may lack the submodule its ``__init__`` imports).

To rebuild: get each repository of the TSV (the helpers' ``fetch`` tool brings a bare git
directory; a ``git clone`` does as well), then::

    .venv/bin/python benchmarks/make_monorepo.py /work/.mirror/*/repo
    .venv/bin/python benchmarks/make_monorepo.py tfx=/src/tfx-checkout ...

Each source is a git directory (bare, or a clone's ``.git``, or a work tree holding one)
or a plain checkout folder. From a git directory the files are read at the TSV's commit
(the run stops if that commit is missing: the tree would not be the measured one); a
plain folder is taken as it is (its commit cannot be checked; a warning says so).
Sources not in the TSV are skipped unless ``--record`` is given, which writes the TSV
anew from the sources' HEAD commits. Nothing of the repositories is committed here.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "monorepo_sources.tsv"
SUBSETS = (("-1k", 1000), ("-5k", 5000))  # /tmp/mono -> /tmp/mono-1k, /tmp/mono-5k
FIELDS = ("repository", "commit", "py_files")


def read_sources(path: Path) -> dict[str, dict[str, str]]:
    """The TSV's rows by repository (``owner/name``)."""
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        rows = csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t")
        return {row["repository"]: row for row in rows}


def write_sources(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as handle:
        handle.write("# benchmarks/make_monorepo.py: the repositories of /tmp/mono\n")
        writer = csv.DictWriter(handle, FIELDS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(sorted(rows, key=lambda row: row["repository"]))


def git_dir(folder: Path) -> Path | None:
    """The git directory ``folder`` is or holds, if any."""
    for candidate in (folder, folder / ".git"):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def repository_name(spec: str) -> tuple[str | None, Path]:
    """``owner/name`` (when the spec or the folder says it) and the folder of one source.

    ``NAME=PATH`` names it; otherwise a folder named ``owner+name`` (the fetch tool's
    ``/work/.mirror/owner+name/repo[/.git]``) is looked for up the path."""
    if "=" in spec:
        name, _, folder = spec.partition("=")
        return name, Path(folder)
    folder = Path(spec)
    for part in reversed(folder.resolve().parts):
        if "+" in part:
            return part.replace("+", "/", 1), folder
    return None, folder


def _git(directory: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={directory}", *args], input=data, capture_output=True, check=True
    ).stdout


def git_files(directory: Path, commit: str) -> Iterator[tuple[str, bytes]]:
    """Every regular ``.py`` file at ``commit`` (symbolic links and submodules left out)."""
    listing = _git(directory, "ls-tree", "-r", "-z", commit).split(b"\0")
    wanted = []
    for entry in listing:
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755") and path.endswith(b".py"):
            wanted.append((path.decode("utf-8", "surrogateescape"), sha.decode()))
    batch = _git(
        directory, "cat-file", "--batch", data="".join(f"{s}\n" for _, s in wanted).encode()
    )
    at = 0
    for path, sha in wanted:
        header_end = batch.index(b"\n", at)
        got, _, size = batch[at:header_end].split()
        assert got.decode() == sha, (got, sha)
        start = header_end + 1
        yield path, batch[start : start + int(size)]
        at = start + int(size) + 1


def folder_files(folder: Path) -> Iterator[tuple[str, bytes]]:
    for path in sorted(folder.rglob("*.py")):
        if path.is_file() and not path.is_symlink() and ".git" not in path.parts:
            yield path.relative_to(folder).as_posix(), path.read_bytes()


def subset_key(relative: str) -> str:
    return hashlib.sha256(relative.encode("utf-8", "surrogateescape")).hexdigest()


def link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def fresh(folder: Path, replace: bool) -> None:
    if folder.exists() and any(folder.iterdir()):
        if not replace:
            sys.exit(f"{folder} is not empty: give --replace to build it again")
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="git directories or checkouts, [NAME=]PATH")
    parser.add_argument("--out", type=Path, default=Path("/tmp/mono"))
    parser.add_argument("--tsv", type=Path, default=SOURCES)
    parser.add_argument("--record", action="store_true", help="write the TSV from these sources")
    parser.add_argument("--replace", action="store_true", help="rebuild non-empty trees")
    args = parser.parse_args(argv)

    listed = read_sources(args.tsv)
    out = args.out.resolve()
    fresh(out, args.replace)
    recorded, seen = [], set()
    for spec in args.sources:
        name, folder = repository_name(spec)
        if name is None:
            sys.exit(f"{spec}: say which repository it is, as owner/name=PATH")
        if name not in listed and not args.record:
            print(f"skipped {name}: not in {args.tsv.name}", file=sys.stderr)
            continue
        short = name.rsplit("/", 1)[-1]
        if short in seen:
            sys.exit(f"{name}: a second repository named {short}")
        seen.add(short)
        directory = git_dir(folder)
        if directory is None:
            print(
                f"warning: {folder} is no git directory; its commit is not checked", file=sys.stderr
            )
            commit, files = listed.get(name, {}).get("commit", "unknown"), folder_files(folder)
        else:
            commit = _git(directory, "rev-parse", "HEAD").decode().strip()
            if not args.record:
                commit = listed[name]["commit"]
            files = git_files(directory, commit)
        count = 0
        for relative, data in files:
            target = out / short / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            count += 1
        if name in listed and not args.record and int(listed[name]["py_files"]) != count:
            sys.exit(f"{name}: {count} .py files, the TSV says {listed[name]['py_files']}")
        recorded.append({"repository": name, "commit": commit, "py_files": str(count)})
        print(f"{name} {commit[:12]}: {count} files", file=sys.stderr)
    missing = sorted(set(listed) - {row["repository"] for row in recorded})
    if missing and not args.record:
        print(f"warning: not given, so not in the tree: {', '.join(missing)}", file=sys.stderr)
    if args.record:
        write_sources(args.tsv, recorded)

    every = sorted((subset_key(p.relative_to(out).as_posix()), p) for p in out.rglob("*.py"))
    print(f"{out}: {len(every)} files", file=sys.stderr)
    for suffix, size in SUBSETS:
        subset = out.with_name(out.name + suffix)
        fresh(subset, args.replace)
        for _, path in every[:size]:
            link_or_copy(path, subset / path.relative_to(out))
        print(f"{subset}: {min(size, len(every))} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
