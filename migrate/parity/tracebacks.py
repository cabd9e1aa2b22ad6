"""What a worker says about an exception: the stage, the message in plain text, and a short
traceback that keeps the model's own frames (framework tracebacks are long; what helps is
the line of model code that failed and the library call it made)."""

from __future__ import annotations

import os
import re
import sysconfig
import traceback

from kmigrate.parity.keras2_alias import Keras2ModuleNotFoundError
from kmigrate.parity.plan import ParityUsageError

TRACEBACK_LINES = 40
EXCEPTION_LINES = 6
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class StageError(Exception):
    """A failure with a message meant for the user (no traceback needed)."""


_LIBRARY_DIRS = tuple(
    {os.path.realpath(sysconfig.get_paths()[key]) for key in ("stdlib", "purelib", "platlib")}
)


_PACKAGE_DIR = os.path.realpath(os.path.dirname(os.path.dirname(__file__)))


def is_user_frame(filename: str) -> bool:
    """The model's own code: not installed libraries, not kmigrate (its hooks wrap calls)."""
    path = os.path.realpath(filename)
    return not path.startswith(_LIBRARY_DIRS) and not under(path, _PACKAGE_DIR)


def exception_chain(exc: BaseException) -> list[BaseException]:
    """The root cause first, the exception that surfaced last."""
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return chain[::-1]


def _frames_summary(exc: BaseException) -> list[str]:
    frames = traceback.extract_tb(exc.__traceback__)
    keep = {i for i, frame in enumerate(frames) if is_user_frame(frame.filename)}
    keep.update(range(max(0, len(frames) - 2), len(frames)))
    lines = []
    previous = -1
    for i in sorted(keep):
        if i != previous + 1:
            lines.append("  ...")
        lines.extend(traceback.format_list([frames[i]])[0].rstrip("\n").splitlines())
        previous = i
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    lines.extend(message[:EXCEPTION_LINES])
    return lines


def _traceback_tail(exc: BaseException) -> str:
    """The frames of the user's code, the last library frames and the exception, for each
    exception in the chain (Keras re-raises errors from inside a layer's call()).

    Framework tracebacks are long; what helps is the line of model code that failed and
    the library call it made. Skipped frames are marked with "...".
    """
    lines = ["Traceback (most recent call last, library frames elided):"]
    for n, link in enumerate(exception_chain(exc)):
        if n:
            lines.append("During handling of the above exception, another exception occurred:")
        lines.extend(_frames_summary(link))
    if len(lines) > TRACEBACK_LINES:
        lines = lines[: TRACEBACK_LINES // 2] + ["  ..."] + lines[-(TRACEBACK_LINES // 2) :]
    return "\n".join(lines)


def _plain(text: str) -> str:
    """Keras colours parts of its messages; reports want plain text."""
    return ANSI_ESCAPE.sub("", text)


def _import_site(exc: BaseException) -> str:
    """``file:line: statement`` of the user's code that ran the failed import."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<") and not is_library_file(os.path.realpath(f.filename))
    ]
    if not frames:
        return ""
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno}: {(frame.line or '').strip()}"


def error_info(stage: str, exc: BaseException) -> dict:
    if isinstance(exc, Keras2ModuleNotFoundError):  # one sentence says it all
        site = _import_site(exc)
        return {
            "stage": stage,
            "type": type(exc).__name__,
            "message": f"{exc}; imported at {site}" if site else str(exc),
            "traceback": "",
        }
    message = str(exc).strip() or type(exc).__name__
    info = {
        "stage": stage,
        "type": type(exc).__name__,
        "message": _plain(message),
        "traceback": ""
        if isinstance(exc, StageError | ParityUsageError)
        else _plain(_traceback_tail(exc)),
    }
    root = exception_chain(exc)[0]
    if root is not exc and exc.__cause__ is None:  # failed while handling `root`: the real error
        first = (str(root).strip().splitlines() or [""])[0]
        info["cause"] = _plain(f"{type(root).__name__}: {first}" if first else type(root).__name__)
    return info


def is_library_file(path: str) -> bool:
    """Installed code (site-packages, the standard library, kmigrate itself)."""
    parts = path.split(os.sep)
    return (
        path.startswith(_LIBRARY_DIRS)
        or "site-packages" in parts
        or "dist-packages" in parts
        or under(path, _PACKAGE_DIR)
    )


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
