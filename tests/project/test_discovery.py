"""File discovery: .gitignore, exclude globs, virtualenvs and build folders."""

from __future__ import annotations

from pathlib import Path

from kmigrate.project.config import load_config
from kmigrate.project.discover import discover


def touch(root: Path, relative: str, text: str = "import tensorflow as tf\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def found(root: Path, exclude: tuple[str, ...] = ()) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in discover([root], root, exclude))


def test_skips_virtualenvs_build_and_caches(tmp_path: Path) -> None:
    touch(tmp_path, "pkg/model.py")
    touch(tmp_path, "venv/lib/python3.11/site-packages/tf/x.py")
    touch(tmp_path, "myenv/pyvenv.cfg", "home = /usr\n")
    touch(tmp_path, "myenv/lib/y.py")
    touch(tmp_path, "build/lib/pkg/model.py")
    touch(tmp_path, "pkg/__pycache__/model.py")
    touch(tmp_path, "nb/demo.ipynb", "{}")
    assert found(tmp_path) == ["nb/demo.ipynb", "pkg/model.py"]


def test_honours_gitignore_and_negation(tmp_path: Path) -> None:
    touch(tmp_path, ".gitignore", "generated/\n*_pb2.py\n!keep_pb2.py\n/top_only.py\n")
    touch(tmp_path, "generated/a.py")
    touch(tmp_path, "proto/msg_pb2.py")
    touch(tmp_path, "proto/keep_pb2.py")
    touch(tmp_path, "top_only.py")
    touch(tmp_path, "sub/top_only.py")
    touch(tmp_path, "sub/.gitignore", "local.py\n")
    touch(tmp_path, "sub/local.py")
    touch(tmp_path, "main.py")
    assert found(tmp_path) == ["main.py", "proto/keep_pb2.py", "sub/top_only.py"]


def test_exclude_globs_from_config(tmp_path: Path) -> None:
    touch(
        tmp_path, "pyproject.toml", '[tool.kmigrate]\nexclude = ["third_party/**", "*_test.py"]\n'
    )
    touch(tmp_path, "third_party/lib/x.py")
    touch(tmp_path, "model_test.py")
    touch(tmp_path, "model.py")
    config = load_config(tmp_path)
    assert found(tmp_path, tuple(config.exclude)) == ["model.py"]


def test_explicit_files_are_always_yielded(tmp_path: Path) -> None:
    path = touch(tmp_path, "build/generated.py")
    assert list(discover([path], tmp_path)) == [path]


def test_the_index_reuses_the_walk_of_the_project_folder(tmp_path: Path, monkeypatch) -> None:
    """``scan .`` walks the project once: the index's files are the plan's walk spelled
    from the root, the same files in the same order as a walk of its own."""
    from kmigrate.project import index_pass

    root = tmp_path / "project"
    touch(root, ".gitignore", "generated/\n")
    touch(root, "generated/a.py")
    touch(root, "pkg/__init__.py", "")
    touch(root, "pkg/layers.py")
    touch(root, "pkg/skip/x.py")
    touch(root, "nb/demo.ipynb", "{}")
    touch(root, "stub.pyi", "")
    (root / "linked").symlink_to(root / "pkg", target_is_directory=True)
    (root / "alias.py").symlink_to(root / "pkg" / "layers.py")
    exclude = ["pkg/skip"]
    own = index_pass.index_scope([root], root, exclude)
    assert [p.relative_to(root).as_posix() for p in own] == ["pkg/__init__.py", "pkg/layers.py"]
    for named in (Path("."), root, tmp_path / "project" / ".." / "project"):
        if not named.is_absolute():
            monkeypatch.chdir(root)
        walked = list(discover([named], root, exclude))
        assert index_pass.index_scope([named], root, exclude, walked) == own
    # a sub-folder's walk is not the project's: the index walks the project itself
    walked = list(discover([root / "pkg"], root, exclude))
    assert index_pass.index_scope([root / "pkg"], root, exclude, walked) == own


def test_plain_gitignore_lines_match_as_their_expressions_do() -> None:
    """Names and name endings are compared as text, the other lines as expressions:
    both ways agree on every path."""
    import re

    from kmigrate.project.discover import _glob_to_regex, parse_gitignore

    lines = ["build", ".tox/", "*.so", "*", "*.egg-info/", "!keep.so", "__pycache__", "*~"]
    paths = [
        "build",
        "src/build",
        "src/build.py",
        "rebuild",
        ".tox",
        "a/.tox/b",
        "lib.so",
        "x/lib.so",
        "lib.so.1",
        "pkg.egg-info",
        "keep.so",
        "a/keep.so",
        "__pycache__",
        "deep/__pycache__",
        "notes.txt~",
        "so",
    ]
    for line in lines:
        (pattern,) = parse_gitignore(line)
        assert pattern.regex is None  # compared as text
        body = line.lstrip("!").rstrip("/")
        regex = re.compile(f"^(?:.*/)?{_glob_to_regex(body)}$")
        for path in paths:
            assert pattern.matches(path) == bool(regex.match(path)), (line, path)
    for line in ["docs/_build/", "*.py[cod]", "a?c", "**/tmp", "/top_only.py"]:
        (pattern,) = parse_gitignore(line)
        assert pattern.regex is not None
