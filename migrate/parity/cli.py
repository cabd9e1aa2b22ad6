"""The `kmigrate parity` command (loaded lazily by the main CLI as `parity_command`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from click.core import ParameterSource

from kmigrate.parity import backends as registry

CONFIG_TABLE = ("tool", "kmigrate", "parity")
REPORT_WIDTH = 120
# [tool.kmigrate.parity] keys -> command parameters; paths are relative to the config file
CONFIG_KEYS = {
    "model": "model",
    "models": "models",  # a list: [{model = "...", reference = "..."}, ...] or model specs
    "reference": "reference",
    "backends": "backends",
    "reference_backend": "reference_backend",
    "reference_keras": "reference_keras",
    "custom_objects": "custom_objects",
    "input_shape": "input_shape",
    "input_dtype": "input_dtype",
    "inputs": "inputs_file",
    "batch_size": "batch_size",
    "seed": "seed",
    "int_high": "int_high",
    "input": "input",
    "input_spec": "input_spec",
    "checks": "checks",
    "bench": "bench",
    "bench_runs": "bench_runs",
    "bench_batch_size": "bench_batch_size",
    "factory_kwargs": "factory_kwargs",
    "atol": "atol",
    "rtol": "rtol",
    "timeout": "timeout",
    "accept_skips": "accept_skips",
    "entry-points": None,  # `kmigrate apply --parity`'s (apply_parity.entry_points), not ours
}
CONFIG_PATHS = {"model", "reference", "custom_objects", "inputs_file", "input_spec"}
MULTIPLE = {"model", "reference"}  # several models, each with its --reference or none

EPILOG = """\b
Examples:
  kmigrate parity model.keras --custom-objects layers.py
  kmigrate parity src/models.py:build_model --backends tensorflow,jax,torch
  kmigrate parity new/models.py --reference old/models.py --bench --bench-runs 50
  kmigrate parity src/models.py --reference old/models.py:build_model
  kmigrate parity model.keras --reference-backend jax --export build/savedmodel
  kmigrate parity src/models.py --format json --output parity.json
  kmigrate parity bert.py --input ids:int32:0:30000 --input segments:int32:0:2
  kmigrate parity new/a.py new/b.py --reference old/a.py --reference old/b.py

\b
Exit status: 0 every backend agrees with the reference; 1 a mismatch, a backend
that fails to build or times out, a reference that does not run, or a check not
compared (without --accept-skips); 2 a usage error.
Several models run one after the other in one process per backend (one framework
import each), each isolated from the others; the exit status is the worst of them.
Config: the same options under [tool.kmigrate.parity] in pyproject.toml
(model = "src/models.py:build_model", input_shape = [16, 32], backends = [...]),
several models as models = [{model = "new/a.py", reference = "old/a.py"}, ...].
"""


def _backends_help() -> str:
    """The --backends help, from the registry of backend profiles."""
    profiles = registry.profiles()
    extra = [p.name for p in profiles if p.inference_only]
    text = f"Comma-separated backends to check: {', '.join(p.name for p in profiles)}."
    if not extra:
        return text + " Default: every installed one."
    every = ",".join(p.name for p in profiles)
    return (
        f"{text} Default: every installed one but {', '.join(extra)} (inference only: it "
        f"runs model.predict; add it with --backends {every})."
    )


class _RegistryHelpOption(click.Option):
    """An option whose help is read from the backend registry when help is shown, so a
    profile registered after this module was imported is listed too."""

    def get_help_record(self, ctx: click.Context):
        self.help = _backends_help()
        return super().get_help_record(ctx)


def _load_config(path: Path) -> dict:
    try:
        import tomllib  # noqa: PLC0415
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # noqa: PLC0415
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise click.UsageError(f"cannot read {path}: {e}") from None
    for key in CONFIG_TABLE:
        data = data.get(key, {})
    unknown = sorted(set(data) - set(CONFIG_KEYS))
    if unknown:
        raise click.UsageError(
            f"{path} [tool.kmigrate.parity]: unknown key(s) {', '.join(unknown)}; known: "
            f"{', '.join(CONFIG_KEYS)}"
        )
    return data


def _config_path(value: str, base: Path) -> str:
    """A path (with an optional ``:factory``) relative to the config file's folder."""
    head, sep, tail = value.rpartition(":")
    target, factory = (
        (head, sep + tail) if sep and "/" not in tail and len(head) > 1 else (value, "")
    )
    candidate = base / target
    return f"{candidate}{factory}" if candidate.exists() else value


def _config_value(key: str, value, base: Path):
    """Config values in the shape the command-line options take."""
    param = CONFIG_KEYS[key]
    if param == "models" and isinstance(value, list):
        return [
            {k: _config_path(str(v), base) for k, v in item.items()}
            if isinstance(item, dict)
            else {"model": _config_path(str(item), base)}
            for item in value
        ]
    if param in MULTIPLE:
        values = value if isinstance(value, list) else [value]
        return tuple(_config_path(str(v), base) for v in values)
    if param in CONFIG_PATHS and isinstance(value, str):
        return _config_path(value, base)
    if param in ("backends", "checks") and isinstance(value, list):
        return ",".join(value)
    if param == "input_shape" and isinstance(value, list):
        nested = value and isinstance(value[0], list)
        shapes = value if nested else [value]
        return tuple(",".join(str(d) for d in shape) for shape in shapes)
    if param in ("input_dtype", "input"):
        return tuple(value) if isinstance(value, list) else (value,)
    if param == "factory_kwargs" and isinstance(value, dict):
        return json.dumps(value)
    return value


def _apply_config(ctx: click.Context, params: dict, config_path: str | None) -> None:
    path = Path(config_path) if config_path else Path("pyproject.toml")
    if not path.is_file():
        return
    config = _load_config(path)
    for key, value in config.items():
        param = CONFIG_KEYS[key]
        if param is None:
            continue
        source = ctx.get_parameter_source(param) if param in params else None
        if source in (None, ParameterSource.DEFAULT) or (param in MULTIPLE and not params[param]):
            params[param] = _config_value(key, value, path.resolve().parent)


@click.command(
    "parity",
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.argument("model", nargs=-1, metavar="[MODEL]...")
@click.option(
    "--reference",
    "-r",
    multiple=True,
    metavar="ORIGINAL",
    help="Before/after check: the original (pre-migration) factory, e.g. old/models.py:"
    "build_model. It runs on TensorFlow in its own process: with Keras 2 (tf_keras) when it "
    "is Keras 2 code (imports TensorFlow), else Keras 3; MODEL (the converted factory) "
    "gets its weights. With several MODELs: one --reference per MODEL, in the same order.",
)
@click.option(
    "--backends",
    "-b",
    cls=_RegistryHelpOption,
    metavar="LIST",
    help="",
)
@click.option(
    "--reference-backend",
    metavar="NAME",
    help="Backend whose outputs are the reference for a .keras file or a factory "
    "(default: tensorflow if selected, else the first one).",
)
@click.option(
    "--reference-keras",
    type=click.Choice(["auto", "3", "2"]),
    default="auto",
    show_default=True,
    help="Keras version for the original with --reference: auto is 2 (tf_keras) for Keras 2 "
    "code, else 3 (then 2 if 3 cannot run it).",
)
@click.option(
    "--input",
    "input",
    multiple=True,
    metavar="SPEC",
    help="One model input: NAME:DTYPE[:LOW:HIGH[:SHAPE]], e.g. --input ids:int32:0:30000 "
    "--input segments:int32:0:2. Default: integer inputs that feed an Embedding use "
    "[0, input_dim), others [0, --int-high).",
)
@click.option(
    "--input-spec",
    type=click.Path(exists=True, dir_okay=False),
    metavar="FILE",
    help='Input specs for a multi-input model, JSON or TOML: {"inputs": [{"name": "ids", '
    '"dtype": "int32", "low": 0, "high": 30000}, ...]}.',
)
@click.option(
    "--checks",
    default="call,predict,train",
    show_default=True,
    metavar="LIST",
    help="How each backend runs the model: call (model(x, training=False)), predict "
    "(compiled), train (one SGD step: loss and updated weights). OpenVINO runs predict.",
)
@click.option(
    "--custom-objects",
    type=click.Path(exists=True, dir_okay=False),
    metavar="FILE.py",
    help="Module defining the custom layers/functions a .keras file needs.",
)
@click.option(
    "--input-shape",
    multiple=True,
    metavar="DIMS",
    help="Input shape without the batch axis, e.g. 16,32; repeat once per input. "
    "Default: read from the model's inputs.",
)
@click.option(
    "--input-dtype",
    multiple=True,
    metavar="DTYPE",
    help="Input dtype (float32, int32, ...); one for all inputs or one per input.",
)
@click.option(
    "--inputs",
    "inputs_file",
    type=click.Path(exists=True, dir_okay=False),
    metavar="FILE",
    help="Use this batch (.npy, or .npz with one array per input) instead of random data.",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Rows in the random input batch.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the input batch and weights."
)
@click.option(
    "--int-high",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Integer inputs (token ids, classes) are drawn from [0, N).",
)
@click.option(
    "--factory-kwargs",
    metavar="JSON",
    help="Keyword arguments for the factory, e.g. '{\"num_classes\": 5}'.",
)
@click.option(
    "--atol", type=float, help="Absolute tolerance for float outputs (default: by dtype)."
)
@click.option(
    "--rtol", type=float, help="Relative tolerance for float outputs (default: by dtype)."
)
@click.option(
    "--timeout",
    type=float,
    default=300.0,
    show_default=True,
    help="Seconds each backend may take (import, build, predict).",
)
@click.option(
    "--export",
    "export_dir",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Also export a TF SavedModel with model.export on the tensorflow backend, reload "
    "it and check that serving_default gives the reference outputs.",
)
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1), help="Backends run at once (default: all)."
)
@click.option(
    "--accept-skips",
    is_flag=True,
    help="Let a run PASS although a check could not be compared (the original failed it); "
    "without it such a run is NOT COMPARED and exits 1.",
)
@click.option(
    "--localize/--no-localize",
    default=True,
    show_default=True,
    help="Record every layer's outputs to name the first diverging layer on a mismatch.",
)
@click.option(
    "--safe-mode/--no-safe-mode",
    default=True,
    show_default=True,
    help="keras.saving.load_model safe_mode (--no-safe-mode loads Lambda layers).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Do not use the persistent JAX compilation cache (~/.cache/kmigrate/jax), which "
    "makes repeated runs several times faster.",
)
@click.option(
    "--bench",
    is_flag=True,
    help="After the checks, time model.predict on one batch (predict_on_batch) and one "
    "train_on_batch step on every side that ran them (compiled, after warm-up), beside the "
    "original; flag a converted model "
    "more than 2x slower than the original and name its slowest layer (eager per-layer "
    "timing). Never changes the verdict or the exit status.",
)
@click.option(
    "--bench-runs",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Timed runs of each (after 3 warm-up runs); the table shows median and quartiles.",
)
@click.option(
    "--bench-batch-size",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="Rows of the timed batch (the parity batch repeated).",
)
@click.option(
    "--keep-workdir",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Write the workers' jobs, logs and arrays here and keep them (for debugging).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Report as a table (with details under it) or as JSON.",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False),
    help="pyproject.toml with [tool.kmigrate.parity] (default: ./pyproject.toml if present).",
)
@click.pass_context
def parity_command(ctx: click.Context, **params) -> None:
    """Check that a model computes the same numbers on TensorFlow, JAX and PyTorch.

    MODEL is a saved model (model.keras), a factory (path/models.py:build_model, or
    pkg.models:build_model; build_model, create_model, get_model or make_model is found
    by itself) or, with --reference, the converted factory to compare with the original.
    Each backend runs in its own process with a fixed seeded input batch and, for
    factories, one shared set of weights; outputs are compared with dtype tolerances and,
    on a mismatch, layer by layer to name the first layer that diverges.
    """
    _apply_config(ctx, params, params.pop("config"))
    from kmigrate.parity.inputs import load_spec_file, parse_input_spec  # noqa: PLC0415
    from kmigrate.parity.plan import ParityOptions, ParityUsageError, parse_shape  # noqa: PLC0415
    from kmigrate.parity.runner import run_parity_batch  # noqa: PLC0415

    entries = _entries(params)
    try:
        options = ParityOptions(
            backends=_split(params["backends"]),
            reference_backend=params["reference_backend"],
            reference_keras=params["reference_keras"],
            custom_objects=params["custom_objects"],
            input_shapes=[parse_shape(s) for s in params["input_shape"]] or None,
            input_dtypes=list(params["input_dtype"]) or None,
            inputs_file=str(Path(params["inputs_file"]).resolve())
            if params["inputs_file"]
            else None,
            batch_size=params["batch_size"],
            seed=params["seed"],
            int_high=params["int_high"],
            input_specs=[
                *(load_spec_file(params["input_spec"]) if params["input_spec"] else []),
                *(parse_input_spec(text) for text in params["input"]),
            ],
            checks=_checks(params["checks"]),
            factory_kwargs=_kwargs(params["factory_kwargs"]),
            atol=params["atol"],
            rtol=params["rtol"],
            timeout=params["timeout"],
            export_dir=params["export_dir"],
            jobs=params["jobs"],
            localize=params["localize"],
            accept_skips=params["accept_skips"],
            safe_mode=params["safe_mode"],
            workdir=params["keep_workdir"],
            bench=params["bench"],
            bench_runs=params["bench_runs"],
            bench_batch_size=params["bench_batch_size"],
        )
        if params["no_cache"]:
            options.compile_cache = None
        if options.custom_objects:
            options.custom_objects = str(Path(options.custom_objects).resolve())
        fmt = params["fmt"]
        with _Progress(fmt) as progress:
            reports = run_parity_batch(entries, options=options, progress=progress)
    except ParityUsageError as e:
        raise click.UsageError(str(e)) from None
    _write_report(reports, fmt, params["output"])
    ctx.exit(max(report.exit_code for report in reports))


def _entries(params: dict) -> list:
    """The models to check, each with its original or none: MODEL... with as many
    --reference (paired in order) or none, else [tool.kmigrate.parity] models."""
    from kmigrate.parity.runner import ParityEntry  # noqa: PLC0415

    models, references = list(params["model"] or ()), list(params["reference"] or ())
    if not models and params.get("models"):
        pairs = params["models"]
        if any("model" not in item for item in pairs):
            raise click.UsageError("[tool.kmigrate.parity] models: each entry needs a model")
        return [ParityEntry(item["model"], item.get("reference")) for item in pairs]
    if not models:
        raise click.UsageError(
            "no model given: kmigrate parity model.keras | path/models.py[:build_model] "
            "(or set model = ... under [tool.kmigrate.parity] in pyproject.toml)"
        )
    if references and len(references) != len(models):
        raise click.UsageError(
            f"{len(models)} model(s) and {len(references)} --reference: give one --reference "
            f"per MODEL, in the same order, or none"
        )
    return [ParityEntry(m, r) for m, r in zip(models, references or [None] * len(models))]


def _split(text: str | None) -> list[str] | None:
    if not text:
        return None
    return [part for part in (p.strip() for p in text.split(",")) if part]


def _checks(text: str) -> tuple[str, ...]:
    names = tuple(_split(text) or ())
    unknown = sorted(set(names) - {"call", "predict", "train"})
    if unknown or not names:
        raise click.BadParameter(
            f"unknown check(s) {', '.join(unknown) or '(none)'}: choose from call, predict, train",
            param_hint="--checks",
        )
    return names


def _kwargs(text: str | None) -> dict:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise click.BadParameter(f"not JSON ({e})", param_hint="--factory-kwargs") from None
    if not isinstance(value, dict):
        raise click.BadParameter("give a JSON object", param_hint="--factory-kwargs")
    return value


class _Progress:
    """A spinner on stderr while the workers run (only for a table on a terminal)."""

    def __init__(self, fmt: str):
        self.status = None
        if fmt == "table" and sys.stderr.isatty():
            from rich.console import Console  # noqa: PLC0415

            self.status = Console(stderr=True).status("kmigrate parity: starting backends")

    def __enter__(self):
        if self.status is None:
            return None
        self.status.__enter__()
        return lambda message: self.status.update(f"kmigrate parity: {message}")

    def __exit__(self, *exc):
        if self.status is not None:
            self.status.__exit__(*exc)
        return False


def _write_report(reports: list, fmt: str, output: str | None) -> None:
    """One model: its report as always. Several: each report, then one line per model
    (table), or ``{"passed", "models": [...]}`` (JSON)."""
    from rich.console import Console  # noqa: PLC0415

    from kmigrate.parity.report import render, render_summary  # noqa: PLC0415

    if fmt == "json":
        data = reports[0].to_dict() if len(reports) == 1 else _batch_dict(reports)
        text = json.dumps(data, indent=2)
        if output:
            Path(output).write_text(text + "\n", encoding="utf-8")
        else:
            click.echo(text)
        return

    def show(console) -> None:
        for report in reports:
            render(report, console)
        if len(reports) > 1:
            render_summary(reports, console)

    if output:
        with open(output, "w", encoding="utf-8") as handle:
            show(Console(file=handle, width=REPORT_WIDTH, force_terminal=False))
    else:  # a pipe or a CI log gets the width of a report file, not 80 columns
        show(Console() if sys.stdout.isatty() else Console(width=REPORT_WIDTH))


def _batch_dict(reports: list) -> dict:
    return {
        "passed": all(r.passed for r in reports),
        "models": [r.to_dict() for r in reports],
    }


if __name__ == "__main__":  # python -m kmigrate.parity.cli ..., until the main CLI wires it
    parity_command()
