"""File discovery: .gitignore, exclude globs, virtualenvs and build folders."""

from __future__ import annotations

from pathlib import Path

from kmigrate.commands.config import load_config
from kmigrate.commands.discover import discover


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
