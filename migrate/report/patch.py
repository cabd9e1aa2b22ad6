"""``apply --diff``: a unified diff that ``git apply`` takes as it is, and a terminal
view of it that cannot drive the terminal.

The patch is bytes: the sources' own (each side encoded as its file is), and file names
as the file system has them. A name that needs it is quoted the way git quotes one
(``"new\\nline.py"``, ``"bad_\\377.py"``), so a newline in a name cannot end the header
line, and ``git apply`` unquotes it. Piped output is that patch byte for byte (click
would strip ANSI sequences from it, and the patch would no longer apply). On a terminal
the control characters of names and sources are shown escaped instead: a file of the
tree must not write to the clipboard (OSC 52) or clear the screen.
"""

from __future__ import annotations

import difflib

from kmigrate.report.common import printable

# git's quote_c_style: these get a letter, other bytes below 0x20, 0x7f and bytes
# from 0x80 (core.quotePath, on by default) an octal escape
_LETTERS = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}


def git_quoted(name: bytes) -> bytes:
    """``name`` as git writes a path in a patch header: as it is when it holds nothing
    special, else in double quotes with C escapes."""
    if not any(b < 0x20 or b in (0x22, 0x5C) or b >= 0x7F for b in name):
        return name
    out = bytearray(b'"')
    for byte in name:
        if byte in _LETTERS:
            out += b"\\" + _LETTERS[byte].encode()
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


def unified_patch(name: bytes, old: bytes, new: bytes) -> bytes:
    """One file's diff (a/ and b/ prefixes, no missing-newline surprises)."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    lines = []
    header = (git_quoted(b"a/" + name), git_quoted(b"b/" + name))
    diff = difflib.diff_bytes(difflib.unified_diff, old_lines, new_lines, *header, n=3)
    for number, line in enumerate(diff):
        if number < 2:  # difflib ends a header line with a tab when no date is given
            line = line.rstrip(b"\t\n") + b"\n"
        elif not line.endswith((b"\n", b"\r")):
            line += b"\n\\ No newline at end of file\n"
        lines.append(line)
    return b"".join(lines)


def terminal_view(patch: bytes) -> str:
    """The patch as a terminal may show it: undecodable bytes as ``\\xff``, control and
    direction-changing characters as escapes (``\\x1b``), line by line (a CR before
    the line's end stays: it moves nothing)."""
    lines = patch.decode("utf-8", "backslashreplace").split("\n")
    shown = []
    for line in lines:
        ending = "\r" if line.endswith("\r") else ""
        shown.append(printable(line[: len(line) - len(ending)]) + ending)
    return "\n".join(shown)
