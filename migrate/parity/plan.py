"""What a parity run will do, decided before any worker starts.

Parsing the model argument, finding the factory function (with `ast`, never by importing
the user's module), checking that the backends exist (with ``importlib.util.find_spec``,
which does not import them) and turning the options into one job per worker. Mistakes
found here are usage errors: they come with what to type instead.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kmigrate.parity import backends as registry
from kmigrate.parity.backends import module_available

__all__ = [
    "DEFAULT_FACTORIES",
    "ModelSpec",
    "ParityOptions",
    "ParityUsageError",
    "canonical_backend",
    "find_factory",
    "installed_backends",
    "module_available",
    "parse_model_spec",
    "parse_shape",
    "require_backend",
]

KERAS_FILE_SUFFIXES = (".keras", ".h5", ".hdf5")
DEFAULT_FACTORIES = ("build_model", "create_model", "get_model", "make_model")


class ParityUsageError(Exception):
    """The run cannot start as asked; the message says what to do instead."""


def installed_backends() -> list[str]:
    """Backends whose packages are importable here (and Keras 3 itself), in default order."""
    return [p.name for p in registry.installed()]


def canonical_backend(name: str) -> str:
    profile = registry.by_name(name)
    if profile is None:
        raise ParityUsageError(
            f"unknown backend '{name.strip().lower()}': choose from "
            f"{', '.join(registry.names())} (e.g. --backends tensorflow,jax,torch)"
        )
    return profile.name


def require_backend(name: str, installed: Sequence[str]) -> None:
    if name in installed:
        return
    if not module_available("keras"):
        raise ParityUsageError(
            "Keras 3 is not installed: pip install 'keras>=3' plus at least one backend "
            "(or pip install 'kmigrate[backends]')"
        )
    raise ParityUsageError(
        f"backend '{name}' is not installed (installed: {', '.join(installed) or 'none'}); "
        f"pip install '{registry.resolve(name).pip}', or leave it out with --backends"
    )


@dataclass(frozen=True)
class ModelSpec:
    """The model under test: a saved `.keras` file or a factory function in a module."""

    kind: str  # "keras_file" | "factory"
    label: str  # as the user wrote it (for reports)
    path: str | None = None  # absolute file path, when the model lives in a file
    module: str | None = None  # importable module name ("pkg.models"), for "pkg.models:f"
    factory: str | None = None
    sys_path: tuple[str, ...] = ()  # extra import roots for the worker (sibling modules)

    @property
    def is_keras_file(self) -> bool:
        return self.kind == "keras_file"

    def to_job(self) -> dict:
        return {
            "kind": self.kind,
            "label": self.label,
            "path": self.path,
            "module": self.module,
            "factory": self.factory,
            "sys_path": list(self.sys_path),
        }


def parse_model_spec(text: str, *, cwd: str | None = None) -> ModelSpec:
    """Parse ``model.keras``, ``path/models.py[:factory]`` or ``pkg.models:factory``."""
    cwd = cwd or os.getcwd()
    text = str(text).strip()
    if not text:
        raise ParityUsageError("empty model argument: give model.keras or models.py:build_model")
    target, factory = _split_factory(text)
    if target.lower().endswith(KERAS_FILE_SUFFIXES):
        if factory:
            raise ParityUsageError(f"'{text}': a saved model file takes no ':{factory}' part")
        path = _existing_file(target, cwd, what="saved model")
        return ModelSpec(kind="keras_file", label=text, path=path)
    if target.endswith(".py") or os.path.sep in target or "/" in target:
        path = _existing_file(target, cwd, what="model module")
        factory = find_factory(Path(path).read_text(encoding="utf-8"), factory, where=target)
        return ModelSpec(
            kind="factory",
            label=f"{target}:{factory}",
            path=path,
            factory=factory,
            sys_path=(str(Path(path).parent),),
        )
    if not factory:
        raise ParityUsageError(
            f"'{text}' is neither a .keras file nor a .py file; for a module on the import "
            f"path name the function too: {text}:build_model"
        )
    module_path = _module_file(target, cwd)
    if module_path:
        find_factory(Path(module_path).read_text(encoding="utf-8"), factory, where=target)
    return ModelSpec(kind="factory", label=text, module=target, factory=factory, sys_path=(cwd,))


def _split_factory(text: str) -> tuple[str, str | None]:
    head, sep, tail = text.rpartition(":")
    # "C:\\models.py" is a drive letter, not a factory
    if not sep or not tail or os.path.sep in tail or "/" in tail or len(head) <= 1:
        return text, None
    if not tail.replace("_", "a").replace(".", "a").isalnum():
        raise ParityUsageError(f"'{tail}' in '{text}' is not a function name")
    return head, tail


def _existing_file(target: str, cwd: str, *, what: str) -> str:
    path = Path(target).expanduser()
    if not path.is_absolute():
        path = Path(cwd) / path
    if not path.is_file():
        raise ParityUsageError(f"{what} '{target}' not found (looked at {path})")
    return str(path.resolve())


def _module_file(module: str, cwd: str) -> str | None:
    base = Path(cwd, *module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return str(candidate)
    return None


def top_level_callables(source: str) -> list[str]:
    """Names of the functions, classes and plain assignments at the top level of a module."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):  # build_model = functools.partial(...)
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def find_factory(source: str, wanted: str | None, *, where: str) -> str:
    """The factory to call: `wanted` if the module defines it, else a conventional name."""
    try:
        names = top_level_callables(source)
    except SyntaxError as e:
        raise ParityUsageError(f"{where}: cannot parse ({e.msg}, line {e.lineno})") from None
    if wanted:
        if wanted in names:
            return wanted
        listing = ", ".join(names) or "none"
        raise ParityUsageError(
            f"{where} defines no top-level function '{wanted}' (functions and classes: {listing})"
        )
    for name in DEFAULT_FACTORIES:
        if name in names:
            return name
    listing = ", ".join(names) or "none"
    raise ParityUsageError(
        f"no entry point found in {where}: none of {', '.join(DEFAULT_FACTORIES)} is defined "
        f"(functions and classes: {listing}); name the function that returns the model: "
        f"{where}:FUNCTION"
    )


def default_cache_dir(name: str) -> str:
    """~/.cache/kmigrate/<name> (or under $XDG_CACHE_HOME)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kmigrate", name)


@dataclass
class ParityOptions:
    """Everything about a run except the models; the CLI and `kmigrate apply` fill it in."""

    backends: Sequence[str] | None = None  # None: every installed one but inference-only ones
    reference_backend: str | None = None  # form 1/2 reference; default tensorflow or first
    reference_keras: str = "auto"  # "auto" (Keras 2 for Keras 2 code), "3" or "2"
    custom_objects: str | None = None  # module file with the custom layers of a .keras file
    input_shapes: Sequence[Sequence[int]] | None = None  # per input, without the batch axis
    input_dtypes: Sequence[str] | None = None
    inputs_file: str | None = None  # .npy / .npz with the batch to use
    batch_size: int = 4
    seed: int = 0
    int_high: int = 10  # integer inputs are drawn from [0, int_high) unless a spec says
    input_specs: Sequence = ()  # kmigrate.parity.inputs.InputSpec, one per named input
    checks: Sequence[str] = ("call", "predict", "train")  # how each target is run
    factory_kwargs: dict = field(default_factory=dict)
    atol: float | None = None
    rtol: float | None = None
    timeout: float = 300.0
    export_dir: str | None = None
    jobs: int | None = None  # concurrent workers; None: all at once
    localize: bool = True
    accept_skips: bool = False  # a check the reference could not run still lets a run PASS
    safe_mode: bool = True  # keras.saving.load_model(safe_mode=...)
    workdir: str | None = None  # keep worker files here instead of a temp dir
    # JAX compiles every op it meets; its persistent cache makes the next run of the same
    # model several times faster. None: no cache.
    compile_cache: str | None = field(default_factory=lambda: default_cache_dir("jax"))
    bench: bool = False  # --bench: time predict and a training step on every side
    bench_runs: int = 20  # timed runs of each, after a few untimed warm-up runs
    bench_batch_size: int = 32  # rows of the timed batch (the parity batch repeated)

    def bench_job(self) -> dict | None:
        """What a worker's ``bench`` stage is asked to do, or None without --bench."""
        if not self.bench:
            return None
        return {"runs": self.bench_runs, "batch_size": self.bench_batch_size}

    def resolved_backends(self, installed: Sequence[str]) -> list[str]:
        if self.backends is None:  # OpenVINO only predicts: it runs when asked for
            trainable = [b for b in installed if not registry.resolve(b).inference_only]
            if not trainable:
                require_backend(registry.names()[0], installed)
            return trainable
        chosen: list[str] = []
        for name in self.backends:
            name = canonical_backend(name)
            require_backend(name, installed)
            if name not in chosen:
                chosen.append(name)
        if not chosen:
            raise ParityUsageError("no backend selected: e.g. --backends tensorflow,jax,torch")
        return chosen


def parse_shape(text: str) -> tuple[int, ...]:
    """'16,32' or '(16, 32)' or '16x32' -> (16, 32); the batch axis is not included."""
    cleaned = text.strip().strip("()[]").replace("x", ",").replace(" ", "")
    try:
        dims = tuple(int(d) for d in cleaned.split(",") if d)
    except ValueError:
        raise ParityUsageError(
            f"bad input shape '{text}': give the sizes without the batch axis, e.g. 16,32"
        ) from None
    if not dims or any(d <= 0 for d in dims):
        raise ParityUsageError(f"bad input shape '{text}': sizes must be positive integers")
    return dims
