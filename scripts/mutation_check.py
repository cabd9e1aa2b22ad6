"""Does the test suite catch a broken kmigrate? A re-runnable mutation check.

A green suite proves something only if breaking what it claims to test turns it red. This
script copies the checkout to a temporary folder, gives the copy its own virtualenv with
an editable install of the copy (the dependencies come from this interpreter's
environment), proves that the copy's tests import the copy, then applies each deliberate
breakage below in turn, runs only the test files that should notice it, and reports which
tests failed. Every mutation must be caught, and every targeted selection must pass on
the unbroken copy first (otherwise a failure would prove nothing).

    .venv/bin/python scripts/mutation_check.py            # all mutations
    .venv/bin/python scripts/mutation_check.py --list     # names only
    .venv/bin/python scripts/mutation_check.py --only gelu-default --only harness-tolerance

Exit status 0 when every mutation was caught, 1 otherwise. Few backend tests run (the
differential cases of one op via ``-k``, one small ``apply --parity`` run): the machine
is shared.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` (which must occur exactly once) by ``new`` in ``path``; a ``new``
    of None deletes the file."""

    path: str
    old: str = ""
    new: str | None = ""


@dataclass(frozen=True)
class Mutation:
    name: str
    breaks: str  # what the mutation does, in one sentence
    edits: tuple[Edit, ...]
    runs: tuple[tuple[str, ...], ...]  # pytest arguments, one selection per entry
    env: dict[str, str] = field(default_factory=dict)


MUTATIONS = (
    Mutation(
        "gelu-default",
        "the catalog rewrites tf.nn.gelu(x) with keras.ops.gelu's approximate=True default",
        (
            Edit(
                "rules/ops_catalog/sections/nn.py",
                '"features, approximate=lit(approximate) | False"',
                '"features, approximate=lit(approximate) | True"',
            ),
        ),
        (
            ("tests/rules/test_ops_catalog.py",),
            ("tests/differential/test_differential.py", "-k", "gelu"),
        ),
    ),
    Mutation(
        "l2-normalize-epsilon",
        "K.l2_normalize is rewritten with epsilon=1e-12 on the norm instead of 1e-6",
        (
            Edit(
                "rules/ops_catalog/sections/nn.py",
                '"x, axis=axis | None, epsilon=1e-06",',
                '"x, axis=axis | None, epsilon=1e-12",',
            ),
        ),
        (
            ("tests/rules/test_ops_catalog.py", "-k", "l2_normalize"),
            ("tests/differential/test_differential.py", "-k", "l2_normalize"),
        ),
    ),
    Mutation(
        "catalog-made-up-parameter",
        "the catalog's tf.nn.gelu signature gains a parameter TensorFlow does not have",
        (
            Edit(
                "rules/ops_catalog/sections/nn.py",
                '"features, approximate=False, name=None",',
                '"features, approximate=False, name=None, fast=False",',
            ),
        ),
        (("tests/differential/test_signatures.py", "-k", "gelu"),),
    ),
    Mutation(
        "pad-symmetric-accepted",
        'tf.pad mode "SYMMETRIC" becomes an automatic rewrite (different numbers on torch)',
        (
            Edit(
                "rules/ops_catalog/sections/arrays.py",
                "mode=lower(mode, 'constant', 'reflect'), ",
                "mode=lower(mode, 'constant', 'reflect', 'symmetric'), ",
            ),
        ),
        (("tests/rules/test_ops_catalog.py", "-k", "pad"),),
    ),
    Mutation(
        "editor-statement-replacement",
        "the editor no longer replaces one statement by several (KM402's os.makedirs)",
        (
            Edit(
                "migrate/engine/editor.py",
                "if not edits:\n            return None\n        plan_index, edit = edits[0]",
                "if True:\n            return None\n        plan_index, edit = edits[0]",
            ),
        ),
        (
            ("tests/rules/test_saving_rules.py",),
            ("tests/rules/test_saving_backends.py", "-m", "not backends"),
            ("tests/parity/test_samples_parity.py", "-m", "not backends"),
        ),
    ),
    Mutation(
        "parity-tolerance",
        "kmigrate parity compares float32 outputs within 1e-3 instead of 1e-5/1e-4",
        (
            Edit(
                "migrate/parity/compare.py",
                '"float32": Tolerance(atol=1e-5, rtol=1e-4)',
                '"float32": Tolerance(atol=1e-3, rtol=1e-3)',
            ),
        ),
        (("tests/parity/test_parity_unit.py",),),
    ),
    Mutation(
        "apply-parity-exit-status",
        "apply --parity exits 0 when parity fails",
        (
            Edit(
                "migrate/cli/main.py",
                "not _parity_after_apply(settings, written, planned):\n        sys.exit(1)",
                "not _parity_after_apply(settings, written, planned):\n        pass",
            ),
        ),
        (("tests/parity/test_apply_parity.py", "-k", "diverges"),),
    ),
    Mutation(
        "harness-tolerance",
        "the differential harness accepts float32 results within 1e-3",
        (
            Edit(
                "tests/differential/harness.py",
                '"float32": (1e-5, 1e-6)',
                '"float32": (1e-3, 1e-3)',
            ),
        ),
        (("tests/differential/test_harness.py",),),
    ),
    Mutation(
        "legacy-reference-lambda",
        "the differential reference for K.logsumexp is a lambda, not tf_keras's function",
        (
            Edit(
                "tests/differential/harness.py",
                "logsumexp=implementation.logsumexp,",
                "logsumexp=lambda x, axis=None, keepdims=False: "
                "implementation.logsumexp(x, axis, keepdims),",
            ),
        ),
        (("tests/differential/test_signatures.py", "-k", "tf_keras_own"),),
    ),
    Mutation(
        "random-manual-finding-lost",
        "TF-only random ops without a keras.random twin (tf.random.poisson) go unreported",
        (
            Edit(
                "rules/km3_random/tf_random_without_keras_equivalent.py",
                "or symbol.startswith(GENERATOR_PREFIXES)\n        ):\n            return\n",
                "or True\n        ):\n            return\n",
            ),
        ),
        (("tests/rules/test_random_rules.py", "-k", "manual_findings_say_why"),),
    ),
    Mutation(
        "vae-sample-keeps-tensorflow",
        "another rule family (KM2: tf.exp) stops rewriting, so the vae sample keeps TensorFlow",
        (
            Edit(
                "rules/ops_catalog/sections/elementwise.py",
                '("tf.math.exp tf.exp tf.compat.v1.exp", "exp"),',
                '("tf.math.exp tf.compat.v1.exp", "exp"),',
            ),
        ),
        (("tests/rules/test_random_backends.py", "-k", "sample_builds and tensorflow"),),
    ),
    Mutation(
        "check-module-removed",
        "migrate/cli/check.py (the pre-commit command) is missing from the build",
        (Edit("migrate/cli/check.py", new=None),),
        (("tests/run/test_parallel_cache.py", "-k", "heavy"),),
    ),
    Mutation(
        "unreadable-file-ignored",
        "a file that cannot be read is passed over silently instead of reported as KM901",
        (
            Edit(
                "migrate/run/runner.py",
                'return unusable(f"cannot read this file ({error})")',
                "return report",
            ),
        ),
        (("tests/cli/test_hostile_inputs.py", "-k", "unreadable"),),
    ),
    Mutation(
        "ctrl-c-mid-write",
        "apply's writes no longer hold Ctrl-C back until the file and its count are done",
        (
            Edit(
                "migrate/cli/main.py",
                "with deferred_signals():  # Ctrl-C lands after the file and its count",
                "if True:",
            ),
        ),
        (("tests/engine/test_safe_writes.py", "-k", "sigint_mid"),),
    ),
    Mutation(
        "foreign-install",
        "the tests would run another kmigrate (a copy put first on PYTHONPATH)",
        (),
        (
            ("tests/cli/test_cli.py", "-k", "usage_errors"),
            ("tests/cli/test_check_baseline.py", "-k", "heavy_module"),
        ),
        env={"PYTHONPATH": "{foreign}"},
    ),
)


def copy_checkout(target: Path) -> None:
    """The files git knows (tracked and new, not ignored): no venv, caches or builds."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def make_environment(copy: Path) -> Path:
    """A virtualenv for the copy: an editable install of the copy itself; every other
    package from this interpreter's environment (a .pth line, so this environment's own
    editable kmigrate, which a .pth file in it installs, is not loaded)."""
    venv = copy / ".venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
        check=True,
    )
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    import site

    ours = [p for p in site.getsitepackages() if p.startswith(sys.prefix)]
    (Path(purelib) / "_parent_environment.pth").write_text("\n".join(ours) + "\n")
    install = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
    install += ["--no-build-isolation", "-e", str(copy)]
    subprocess.run(install, check=True, cwd=copy, capture_output=True)
    return python


def imported_from(python: Path, env: dict[str, str]) -> list[Path]:
    code = (
        "import kmigrate, kmigrate.rules; print(kmigrate.__file__); print(kmigrate.rules.__file__)"
    )
    done = subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        env=env,
        check=True,
    )
    return [Path(line).resolve() for line in done.stdout.split()]


def foreign_kmigrate(folder: Path, copy: Path) -> Path:
    """A working kmigrate that is not the copy: its sources arranged as the import package."""
    shutil.copytree(copy / "migrate", folder / "kmigrate")
    shutil.copytree(copy / "rules", folder / "kmigrate" / "rules")
    return folder


@dataclass
class Outcome:
    failed: list[str]
    passed: int
    seconds: float
    log: str


def run_tests(python: Path, copy: Path, args: tuple[str, ...], env: dict[str, str]) -> Outcome:
    started = time.monotonic()
    command = [str(python), "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *args]
    done = subprocess.run(command, cwd=copy, capture_output=True, text=True, env=env)
    log = done.stdout + done.stderr
    failed = [
        test if kind == "FAILED" else f"{test} (error in its set-up)"
        for kind, test in re.findall(r"^(FAILED|ERROR) (.+?)(?: - .*)?$", log, flags=re.MULTILINE)
    ]
    summary = done.stdout.strip().splitlines()[-1:] or [""]
    passed = sum(int(n) for n in re.findall(r"(\d+) passed", summary[0]))
    if done.returncode == 5:
        failed = ["no test selected"]
    elif done.returncode not in (0, 1) and not failed:
        failed = [f"pytest exit {done.returncode}: {log.strip().splitlines()[-1:]}"]
    return Outcome(failed, passed, time.monotonic() - started, log)


def apply_edits(copy: Path, edits: tuple[Edit, ...]) -> dict[Path, bytes]:
    """Apply the edits; the original bytes of every file touched, to restore."""
    saved: dict[Path, bytes] = {}
    for edit in edits:
        path = copy / edit.path
        saved.setdefault(path, path.read_bytes())
        if edit.new is None:
            path.unlink()
            continue
        text = path.read_text(encoding="utf-8")
        count = text.count(edit.old)
        if count != 1:
            raise SystemExit(f"mutation out of date: {edit.old!r} occurs {count} times in {path}")
        path.write_text(text.replace(edit.old, edit.new), encoding="utf-8")
    return saved


def restore(saved: dict[Path, bytes]) -> None:
    for path, data in saved.items():
        path.write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="run this mutation (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    options = parser.parse_args(argv)
    if options.list:
        for mutation in MUTATIONS:
            print(f"{mutation.name:30} {mutation.breaks}")
        return 0
    unknown = set(options.only or ()) - {m.name for m in MUTATIONS}
    if unknown:
        parser.error(f"unknown mutation(s): {', '.join(sorted(unknown))}")
    chosen = [m for m in MUTATIONS if not options.only or m.name in options.only]

    scratch = Path(tempfile.mkdtemp(prefix="kmigrate-mutation-"))
    try:
        copy = scratch / "kmigrate"
        copy_checkout(copy)
        python = make_environment(copy)
        foreign = foreign_kmigrate(scratch / "foreign", copy)
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env.pop("VIRTUAL_ENV", None)
        where = imported_from(python, env)
        if not where or any(not p.is_relative_to(copy) for p in where):
            print(f"the copy's interpreter imports kmigrate from {where}, not {copy}")
            return 1
        print(f"copy: {copy}\nits interpreter imports {', '.join(map(str, where))}\n")

        print("baseline (unbroken copy): every targeted selection must pass")
        selections = list(dict.fromkeys(args for m in chosen for args in m.runs))
        broken = False
        for args in selections:
            outcome = run_tests(python, copy, args, env)
            state = "ok" if not outcome.failed and outcome.passed else "FAILS"
            broken |= state != "ok"
            print(
                f"  {state:5} {outcome.passed:4} passed {outcome.seconds:6.1f} s  {' '.join(args)}"
            )
            if state != "ok":
                print("\n".join("        " + f for f in outcome.failed) or outcome.log[-2000:])
        if broken:
            print("the unbroken copy fails a targeted selection: the check proves nothing")
            return 1

        missed = []
        for mutation in chosen:
            print(f"\n{mutation.name}: {mutation.breaks}")
            saved = apply_edits(copy, mutation.edits)
            run_env = {k: v.format(foreign=foreign) for k, v in mutation.env.items()}
            try:
                caught = []
                for args in mutation.runs:
                    outcome = run_tests(python, copy, args, dict(env, **run_env))
                    print(
                        f"  {len(outcome.failed):3} failed {outcome.passed:4} passed "
                        f"{outcome.seconds:6.1f} s  {' '.join(args)}"
                    )
                    caught += outcome.failed
            finally:
                restore(saved)
            for test in caught:
                print(f"    caught by {test}")
            if not caught:
                print("    NOT CAUGHT")
                missed.append(mutation.name)
        print(
            f"\n{len(chosen) - len(missed)} of {len(chosen)} mutations caught"
            + (f"; missed: {', '.join(missed)}" if missed else "")
        )
        return 1 if missed else 0
    finally:
        if options.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
