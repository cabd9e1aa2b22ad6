"""Peak memory of ``kmigrate scan`` on a tree holding one large generated module.

Issue 32 item 4: a 12 MB generated ``.py`` once cost 2.5 GB and 25 s in the project
index although the report said "not analysed". This builds such a tree in a temp folder
(a TensorFlow import, a model line and a dense generated table, like a ``_pb2`` or a
weights dump) and runs ``/usr/bin/time -v KMIGRATE scan`` on it::

    python benchmarks/large_file_memory.py 12 50 [--kmigrate PATH]

It prints one line per size: megabytes, wall seconds, peak RSS in MB, exit status.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HEAD = "import tensorflow as tf\n\nmodel = tf.keras.layers.Dense(3)\n\nTABLE = [\n"
ROW = "    (1234, 5.678, 'abcdefgh', [9, 10, 11], {'k': 12}),\n"


def generated_module(megabytes: float) -> bytes:
    """A module of about ``megabytes`` MB: dense literals, many AST nodes per byte."""
    rows = int(megabytes * 1_000_000) // len(ROW)
    return (HEAD + ROW * rows + "]\n").encode("ascii")


def measure(kmigrate: str, megabytes: float) -> str:
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder)
        (tree / "small.py").write_text("import tensorflow as tf\nx = tf.reduce_sum(1)\n")
        (tree / "generated.py").write_bytes(generated_module(megabytes))
        env = dict(os.environ, XDG_CACHE_HOME=str(tree / ".user-cache"), HOME=str(tree))
        command = ["/usr/bin/time", "-v", kmigrate, "scan", ".", "-q", "-f", "json"]
        command += ["-o", str(tree / "report.json")]
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        wall = re.search(r"Elapsed \(wall clock\) time .*: ([\d:.]+)", done.stderr)
        peak = int(rss.group(1)) / 1024 if rss else float("nan")
        took = wall.group(1) if wall else "?"
        return f"{megabytes:g} MB: wall {took}, peak RSS {peak:.0f} MB, exit {done.returncode}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="+", type=float, help="file sizes in MB")
    default = str(Path(sys.executable).with_name("kmigrate"))
    parser.add_argument("--kmigrate", default=default, help="the kmigrate executable")
    arguments = parser.parse_args()
    for size in arguments.sizes:
        print(measure(arguments.kmigrate, size), flush=True)


if __name__ == "__main__":
    main()
