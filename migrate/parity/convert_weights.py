"""`kmigrate convert-weights OLD NEW`: turn a legacy saved model into a Keras 3 `.keras` file.

Loaded lazily by the main CLI as ``convert_weights_command``; TensorFlow and Keras are
imported only inside the command (and the backend workers), on the TensorFlow backend,
because only TensorFlow can read what Keras 2 wrote.

What OLD can be, and how it is read:

- a full-model HDF5 file (``model.save("m.h5")``): Keras 3's legacy HDF5 loader, or, with
  ``--module pkg.models:build_model``, the model the factory builds plus the file's weights;
- a weights-only HDF5 file (``save_weights("w.h5")``): needs ``--module`` to build the model;
- a Keras SavedModel folder (``model.save("dir")`` in Keras 2): read with TF-Keras 2
  (``tf_keras``), then its weights go into the ``--module`` model, or through a temporary
  HDF5 file into Keras 3's loader.

NEW ends in ``.keras`` (whole model) or ``.weights.h5`` (weights). Then the command proves
the conversion: the legacy model (when it can be run), the converted model and NEW
reloaded all predict on the same random batch on TensorFlow, and ``--check-backends
jax,torch`` reloads NEW on those backends in subprocesses and compares again.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import click

from kmigrate.parity.convert_trust import TRUST_HINT, carried_code

__all__ = ["ConversionError", "carried_code", "convert_weights_command", "refuse_code"]

EXIT_MISMATCH = 1
DEFAULT_SEED = 0
DEFAULT_BATCH = 4
WORKER_TIMEOUT = 600


class ConversionError(click.ClickException):
    """A conversion that cannot proceed; exit status 1 with the message."""


class UnreadableModelError(click.ClickException):
    """OLD is an HDF5 model Keras 3 cannot rebuild (a config nested absurdly deep, Keras
    2 TFOpLambda layers): exit status 2 with the reason, found before TensorFlow is
    imported, instead of Keras's traceback."""

    exit_code = 2


# ---------------------------------------------------------------------------
# Inputs: what OLD is, and the user's module.
# ---------------------------------------------------------------------------


def detect_kind(path: Path) -> str:
    """``"h5-model"``, ``"h5-weights"``, ``"savedmodel"``, ``"keras"`` or ``"tf-checkpoint"``."""
    if path.is_dir():
        if (path / "saved_model.pb").exists() or (path / "saved_model.pbtxt").exists():
            return "savedmodel"
        if (path / "config.json").exists():
            return "keras"
        raise click.BadParameter(f"{path} is a folder but not a SavedModel", param_hint="OLD")
    if Path(str(path) + ".index").exists():
        return "tf-checkpoint"
    if not path.exists():
        raise click.BadParameter(f"{path} does not exist", param_hint="OLD")
    with open(path, "rb") as handle:
        magic = handle.read(8)
    if magic.startswith(b"PK"):
        return "keras"
    if magic != b"\x89HDF\r\n\x1a\n":
        raise click.BadParameter(
            f"{path} is neither an HDF5 file nor a SavedModel folder", param_hint="OLD"
        )
    import h5py

    with h5py.File(path, "r") as handle:
        return "h5-model" if "model_config" in handle.attrs else "h5-weights"


@dataclass
class UserModule:
    """``pkg.models:build_model`` or ``path/models.py:build_model``; the factory is optional."""

    module: object
    factory_name: str | None

    @classmethod
    def load(cls, spec: str) -> UserModule:
        target, _, factory = spec.partition(":")
        if not target:
            raise click.BadParameter(
                f"expected MODULE[:FUNCTION], got {spec!r}", param_hint="--module"
            )
        cwd = os.getcwd()
        if cwd not in sys.path:
            sys.path.insert(0, cwd)
        try:
            if target.endswith(".py") or os.sep in target:
                file = Path(target).resolve()
                sys.path.insert(0, str(file.parent))
                module_spec = importlib.util.spec_from_file_location(file.stem, file)
                if module_spec is None or module_spec.loader is None:
                    raise ImportError(f"cannot import {file}")
                module = importlib.util.module_from_spec(module_spec)
                sys.modules[file.stem] = module
                module_spec.loader.exec_module(module)
            else:
                module = importlib.import_module(target)
        except Exception as error:  # noqa: BLE001 - the user's code: report, do not crash
            raise click.BadParameter(
                f"cannot import {target}: {type(error).__name__}: {error}", param_hint="--module"
            ) from error
        if factory and not callable(getattr(module, factory, None)):
            raise click.BadParameter(f"{target} has no function {factory}", param_hint="--module")
        return cls(module, factory or None)

    def build(self):
        if self.factory_name is None:
            return None
        return getattr(self.module, self.factory_name)()

    def custom_objects(self) -> dict:
        """Every class the module defines or imports, so legacy configs can name them."""
        return {
            name: value
            for name, value in vars(self.module).items()
            if isinstance(value, type) and not name.startswith("_")
        }


# ---------------------------------------------------------------------------
# Code inside the artifact: refused unless --trust.
# ---------------------------------------------------------------------------


def refuse_code(path: Path, kind: str, trust: bool) -> None:
    """Stop before anything is loaded when OLD carries code and --trust was not given."""
    reasons = carried_code(path, kind)
    if reasons and not trust:
        raise ConversionError(
            f"refusing to load {path}: {'; '.join(reasons)}. Loading it would run code "
            f"that came with the file; {TRUST_HINT}"
        )


# ---------------------------------------------------------------------------
# Loading the legacy artifact (TensorFlow backend, Keras 3 in this process).
# ---------------------------------------------------------------------------


@dataclass
class Loaded:
    """The converted Keras 3 model and, when it can run, the legacy model as reference."""

    model: object
    reference: object | None
    steps: list[str] = field(default_factory=list)


def _load_h5_model(path: Path, user: UserModule | None, steps: list[str], trust: bool = False):
    import keras

    custom = user.custom_objects() if user else {}
    safe = {"safe_mode": not trust}
    try:
        model = keras.saving.load_model(path, custom_objects=custom, **safe)
        steps.append("read the HDF5 model with Keras 3's legacy loader (compiled)")
    except Exception:  # noqa: BLE001 - retry without the training config
        model = keras.saving.load_model(path, custom_objects=custom, compile=False, **safe)
        steps.append("read the HDF5 model with Keras 3's legacy loader (without compile state)")
    return model


def _keras2_reference(path: Path, user: UserModule | None, steps: list[str]):
    """The file loaded by TF-Keras 2 itself, when installed: the most faithful reference."""
    try:
        import tf_keras
    except ImportError:
        return None
    custom = user.custom_objects() if user else {}
    try:
        model = tf_keras.models.load_model(path, custom_objects=custom, compile=False)
    except Exception:  # noqa: BLE001 - e.g. a file written by Keras 3: no Keras 2 reference
        return None
    steps.append("read it with TF-Keras 2 too, as the reference for the checks")
    return model


def _load_savedmodel_keras2(path: Path):
    try:
        import tf_keras
    except ImportError as error:
        raise ConversionError(
            "reading a Keras 2 SavedModel needs TF-Keras 2: pip install tf-keras"
        ) from error
    advice = (
        "a plain tf.saved_model (not written by Keras) can only be wrapped for inference "
        "with keras.layers.TFSMLayer on TensorFlow"
    )
    try:
        model = tf_keras.models.load_model(path, compile=False)
    except Exception as error:  # noqa: BLE001
        raise ConversionError(
            f"{path} is not a Keras SavedModel TF-Keras 2 can load "
            f"({type(error).__name__}: {error}); {advice}"
        ) from error
    if not isinstance(model, tf_keras.Model):  # TF hands back a generic restored object
        raise ConversionError(f"{path} holds no Keras model; {advice}")
    return model


def _refuse_early(path: Path, kind: str, module_spec: str | None) -> None:
    """Inputs that cannot be converted, found before TensorFlow is imported."""
    if kind == "tf-checkpoint":
        raise ConversionError(
            f"{path} is a TF checkpoint: Keras 3 cannot map it onto a model. Load it in the "
            "legacy code (TF-Keras 2), call save_weights('w.h5'), then run "
            "kmigrate convert-weights w.h5 NEW --module pkg.models:build_model"
        )
    if kind == "keras":
        raise ConversionError(f"{path} is already a Keras 3 file; nothing to convert")
    if kind == "h5-weights" and ":" not in (module_spec or ""):
        raise click.UsageError(
            f"{path} holds weights only: pass --module pkg.models:build_model to build "
            "the model they belong to"
        )


def _refuse_unreadable(path: Path, kind: str) -> None:
    from kmigrate.parity.legacy_config import config_problems

    problems = config_problems(path) if kind == "h5-model" else []
    if problems:
        raise UnreadableModelError(
            f"Keras 3 cannot rebuild the model in {path}: {'; '.join(problems)}"
        )


def load_legacy(path: Path, kind: str, user: UserModule | None, trust: bool = False) -> Loaded:
    """Read OLD into a Keras 3 model (and a runnable reference where possible).

    Refuses, before loading anything, an OLD that carries code unless ``trust``
    (:func:`refuse_code`).
    """
    refuse_code(path, kind, trust)
    steps: list[str] = []
    built = user.build() if user else None
    if kind == "h5-model":
        legacy = _load_h5_model(path, user, steps, trust)
        reference = _keras2_reference(path, user, steps) or legacy
        if built is None:
            return Loaded(legacy, reference, steps)
        built.load_weights(path)
        steps.append(f"loaded its weights into {user.factory_name}() from --module")
        return Loaded(built, reference, steps)
    if kind == "h5-weights":
        if built is None:
            raise click.UsageError(
                f"{path} holds weights only: pass --module pkg.models:build_model to build "
                "the model they belong to"
            )
        built.load_weights(path)
        steps.append(f"loaded the HDF5 weights into {user.factory_name}() from --module")
        return Loaded(built, None, steps)
    if kind == "savedmodel":
        keras2 = _load_savedmodel_keras2(path)
        steps.append("read the SavedModel with TF-Keras 2")
        if built is not None:
            try:
                built.set_weights(keras2.get_weights())
            except ValueError as error:
                raise ConversionError(
                    f"the SavedModel's weights do not fit {user.factory_name}(): {error}"
                ) from error
            steps.append(f"copied its weights into {user.factory_name}() from --module")
            return Loaded(built, keras2, steps)
        with tempfile.TemporaryDirectory() as tmp:
            bridge = Path(tmp) / "bridge.h5"
            keras2.save(bridge, save_format="h5")
            model = _load_h5_model(bridge, user, steps, trust)
        steps.append("went through a temporary Keras 2 HDF5 file")
        return Loaded(model, keras2, steps)
    _refuse_early(path, kind, None)
    raise ConversionError(f"cannot convert {path} ({kind})")


# ---------------------------------------------------------------------------
# Verification.
# ---------------------------------------------------------------------------


def sample_inputs(model, input_shape: tuple[int, ...] | None, seed: int):
    """A fixed random batch for every model input (a list, one array per input)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    try:
        inputs = list(model.inputs)
    except (AttributeError, ValueError):
        inputs = []
    if not inputs:
        if input_shape is None:
            raise ConversionError(
                "the model has no known inputs: pass --input-shape (without the batch "
                "dimension) or --no-verify"
            )
        return [rng.standard_normal((DEFAULT_BATCH, *input_shape)).astype("float32")]
    arrays = []
    for tensor in inputs:
        shape = tuple(tensor.shape)
        if input_shape is not None and len(inputs) == 1:
            shape = (DEFAULT_BATCH, *input_shape)
        shape = tuple(DEFAULT_BATCH if i == 0 and d is None else d for i, d in enumerate(shape))
        if any(d is None for d in shape):
            raise ConversionError(
                f"cannot make a test batch for input shape {tuple(tensor.shape)}: pass "
                "--input-shape (without the batch dimension) or --no-verify"
            )
        dtype = str(getattr(tensor, "dtype", "float32"))
        if "int" in dtype:
            arrays.append(rng.integers(0, 2, size=shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype("float32"))
    return arrays


def _outputs(model, arrays) -> list:
    import numpy as np

    feed = arrays[0] if len(arrays) == 1 else arrays
    result = model.predict(feed, verbose=0)
    if isinstance(result, dict):
        result = [result[k] for k in sorted(result)]
    if not isinstance(result, (list, tuple)):
        result = [result]
    return [np.asarray(r) for r in result]


def compare(name: str, values: list, reference: list) -> tuple[bool, str]:
    """Compare outputs with kmigrate's parity tolerances (float32: atol 1e-5, rtol 1e-4)."""
    from kmigrate.parity.compare import compare_arrays

    if len(values) != len(reference):
        return False, f"{name}: {len(values)} outputs, expected {len(reference)}"
    worst = 0.0
    for index, (value, ref) in enumerate(zip(values, reference)):
        diff = compare_arrays(f"output {index}", value, ref)
        if not diff.passed:
            why = diff.problem or f"max abs diff {diff.max_abs:.3g} ({diff.mismatched} mismatched)"
            return False, f"{name}: {why}"
        worst = max(worst, diff.max_abs)
    return True, f"{name}: max abs diff {worst:.3g}"


WORKER_CODE = "from kmigrate.parity.convert_weights import backend_worker; backend_worker()"


def backend_worker() -> None:
    """Run in a subprocess with KERAS_BACKEND set: reload NEW, predict the batch, save."""
    job = json.loads(sys.argv[1])
    import numpy as np

    if job.get("module"):
        os.chdir(job["cwd"])
        user = UserModule.load(job["module"])
    else:
        user = None
    import keras

    custom = user.custom_objects() if user else {}
    if job["new"].endswith(".keras"):
        model = keras.saving.load_model(
            job["new"], custom_objects=custom, compile=False, safe_mode=not job.get("trust")
        )
    else:
        model = user.build() if user else None
        if model is None:
            raise SystemExit("a .weights.h5 file needs --module MODULE:FUNCTION to rebuild")
        model.load_weights(job["new"])
    batch = np.load(job["batch"])
    arrays = [batch[f"input_{i}"] for i in range(len(batch.files))]
    np.savez(job["out"], *_outputs(model, arrays))
    print(keras.backend.backend())


def check_backend(
    backend: str,
    new: Path,
    batch_file: Path,
    module: str | None,
    reference: list,
    trust: bool = False,
) -> tuple[bool, str]:
    import numpy as np

    out = batch_file.with_name(f"outputs_{backend}.npz")
    job = {
        "new": str(new.resolve()),
        "batch": str(batch_file),
        "out": str(out),
        "module": module,
        "cwd": os.getcwd(),
        "trust": trust,
    }
    env = dict(os.environ, KERAS_BACKEND=backend)
    env.pop("TF_USE_LEGACY_KERAS", None)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    try:
        run = subprocess.run(
            [sys.executable, "-c", WORKER_CODE, json.dumps(job)],
            env=env,
            capture_output=True,
            text=True,
            timeout=WORKER_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return False, f"{backend}: timed out after {WORKER_TIMEOUT}s"
    if run.returncode != 0 or not out.exists():
        tail = "\n".join(run.stderr.strip().splitlines()[-5:])
        return False, f"{backend}: reload failed\n{tail}"
    stored = np.load(out)
    values = [stored[f"arr_{i}"] for i in range(len(stored.files))]
    return compare(f"{backend} reload", values, reference)


# ---------------------------------------------------------------------------
# The command.
# ---------------------------------------------------------------------------


def _parse_shape(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    try:
        return tuple(int(part) for part in text.replace("x", ",").split(",") if part.strip())
    except ValueError as error:
        raise click.BadParameter("use comma-separated integers, e.g. 16,16,3") from error


def _use_tensorflow_backend() -> None:
    wanted = os.environ.get("KERAS_BACKEND")
    if "keras" in sys.modules:
        import keras

        if keras.backend.backend() != "tensorflow":
            raise click.UsageError(
                "convert-weights reads legacy files with TensorFlow; Keras is already "
                f"imported on {keras.backend.backend()} in this process"
            )
        return
    if wanted and wanted != "tensorflow":
        click.echo(f"note: using the tensorflow backend (KERAS_BACKEND was {wanted})", err=True)
    os.environ["KERAS_BACKEND"] = "tensorflow"
    os.environ.pop("TF_USE_LEGACY_KERAS", None)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


EPILOG = """\b
Examples:
  kmigrate convert-weights model.h5 model.keras
  kmigrate convert-weights weights.h5 model.keras --module pkg.models:build_model
  kmigrate convert-weights saved_model_dir model.keras --trust --check-backends jax,torch
  kmigrate convert-weights model.h5 model.weights.h5 --module src/models.py:build_model

\b
Exit status: 0 converted (and every check agreed); 1 a check disagreed or the input
cannot be converted; 2 a usage error, or an OLD Keras 3 cannot rebuild (a config
nested absurdly deep, Keras 2 TFOpLambda layers: TF ops applied to Keras tensors).
"""


@click.command("convert-weights", epilog=EPILOG)
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option(
    "--module",
    "module_spec",
    metavar="MODULE[:FUNCTION]",
    help="Module with the model's code (custom layers); FUNCTION builds the Keras 3 model.",
)
@click.option("--input-shape", help="Input shape without the batch axis, for the check batch.")
@click.option(
    "--check-backends",
    default="",
    metavar="LIST",
    help="Reload NEW on these backends (e.g. jax,torch) and compare predictions.",
)
@click.option("--verify/--no-verify", default=True, show_default=True, help="Run the checks.")
@click.option("--seed", default=DEFAULT_SEED, show_default=True, help="Seed of the check batch.")
@click.option(
    "--trust",
    is_flag=True,
    help="Load OLD even though it carries code (a Lambda layer's Python bytecode, a "
    "SavedModel's TensorFlow graphs): only for files from a source you trust.",
)
def convert_weights_command(
    old: Path,
    new: Path,
    module_spec: str | None,
    input_shape: str | None,
    check_backends: str,
    verify: bool,
    seed: int,
    trust: bool,
) -> None:
    """Convert a legacy HDF5 file or Keras SavedModel OLD into a Keras 3 file NEW.

    NEW ends in `.keras` (architecture + weights, loads on every backend) or
    `.weights.h5` (weights only). The conversion runs on the TensorFlow backend.
    An OLD that carries code (a Lambda layer stored as Python bytecode, any
    SavedModel) is refused unless --trust: loading it would run that code.
    """
    new_name = str(new)
    if not new_name.endswith((".keras", ".weights.h5")):
        raise click.BadParameter("must end in .keras or .weights.h5", param_hint="NEW")
    backends = [b.strip() for b in check_backends.split(",") if b.strip()]
    unknown = sorted(set(backends) - {"tensorflow", "jax", "torch", "numpy", "openvino"})
    if unknown:
        raise click.BadParameter(f"unknown backend(s): {', '.join(unknown)}")
    shape = _parse_shape(input_shape)
    kind = detect_kind(old)
    _refuse_early(old, kind, module_spec)
    _refuse_unreadable(old, kind)
    refuse_code(old, kind, trust)  # before TensorFlow or the user's module is imported
    _use_tensorflow_backend()
    user = UserModule.load(module_spec) if module_spec else None
    loaded = load_legacy(old, kind, user, trust)
    for step in loaded.steps:
        click.echo(f"- {step}")
    new.parent.mkdir(parents=True, exist_ok=True)
    if new_name.endswith(".keras"):
        loaded.model.save(new)
    else:
        loaded.model.save_weights(new)
    click.echo(f"wrote {new}")
    if not verify:
        return
    ok = _verify(loaded, new, user, module_spec, shape, seed, backends, trust)
    if not ok:
        raise SystemExit(EXIT_MISMATCH)


def _verify(loaded, new, user, module_spec, shape, seed, backends, trust=False) -> bool:
    import keras
    import numpy as np

    arrays = sample_inputs(loaded.model, shape, seed)
    converted = _outputs(loaded.model, arrays)
    reference = converted
    results: list[tuple[bool, str]] = []
    if loaded.reference is not None and loaded.reference is not loaded.model:
        reference = _outputs(loaded.reference, arrays)
        results.append(compare("converted model vs legacy file", converted, reference))
    if str(new).endswith(".keras"):
        custom = user.custom_objects() if user else {}
        reloaded = keras.saving.load_model(
            new, custom_objects=custom, compile=False, safe_mode=not trust
        )
    else:
        built = user.build() if user is not None else None
        reloaded = built if built is not None else keras.models.clone_model(loaded.model)
        reloaded.load_weights(new)
    results.append(compare("tensorflow reload", _outputs(reloaded, arrays), reference))
    others = [b for b in backends if b != "tensorflow"]
    if others:
        with tempfile.TemporaryDirectory() as tmp:
            batch_file = Path(tmp) / "batch.npz"
            np.savez(batch_file, **{f"input_{i}": a for i, a in enumerate(arrays)})
            for backend in others:
                results.append(
                    check_backend(backend, new, batch_file, module_spec, reference, trust)
                )
    for passed, line in results:
        click.echo(f"{'ok  ' if passed else 'FAIL'} {line}")
    return all(passed for passed, _ in results)
