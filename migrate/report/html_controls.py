"""The HTML report's one script (sorting and filtering its tables) and what it needs: the
filter bar, its CSS, and a Content-Security-Policy that allows that script by its hash.

The script is a static file shipped with the package (``html_assets/table_controls.js``),
never built from strings, and the policy names its SHA-256: any other script (one that
a hostile file name or message managed to inject, an inline event handler, anything
remote) stays forbidden, as ``default-src 'none'`` keeps every other resource. The page
reads the same without it: the bar is ``hidden`` until the script shows it.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable
from functools import cache
from importlib.resources import files

from kmigrate.report.summary import ReportData, folder_of, remedy

SCRIPT_ASSET = "html_assets/table_controls.js"

CONTROLS_CSS = """
[hidden] { display: none !important; }
.filters { position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap;
  gap: 6px 12px; align-items: center; padding: 8px 0; background: var(--bg);
  border-bottom: 1px solid var(--line); }
.filters label { color: var(--muted); font-size: 12px; }
.filters select, .filters input { font: inherit; font-size: 13px; max-width: 220px; }
.filters output { flex-basis: 100%; color: var(--muted); font-size: 12px; }
th button { font: inherit; color: inherit; background: none; border: 0; padding: 0;
  cursor: pointer; text-align: inherit; }
th button:focus-visible { outline: 2px solid var(--info); outline-offset: 2px; }
th[aria-sort="ascending"] button::after { content: " \\25B2"; font-size: 10px; }
th[aria-sort="descending"] button::after { content: " \\25BC"; font-size: 10px; }
"""


@cache
def script() -> str:
    """The script's text, exactly as it goes between ``<script>`` and ``</script>``."""
    text = files(__package__).joinpath(SCRIPT_ASSET).read_text(encoding="utf-8")
    if "</script" in text.lower() or not text.isascii():
        raise ValueError(f"{SCRIPT_ASSET} must be ASCII and cannot hold '</script'")
    return text


def script_hash() -> str:
    """``sha256-<base64>``: the CSP source that allows exactly this script."""
    digest = hashlib.sha256(script().encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def content_security_policy() -> str:
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src '{script_hash()}'"
    )


def script_element() -> str:
    return f"<script>{script()}</script>"


def _select(name: str, label: str, options: Iterable[tuple[str, str]]) -> str:
    choices = "".join(
        f'<option value="{html.escape(value)}">{html.escape(text)}</option>'
        for value, text in options
    )
    return (
        f'<label>{label} <select name="{name}"><option value="">all</option>{choices}'
        "</select></label>"
    )


def _folders(paths: Iterable[str]) -> list[str]:
    """Every folder holding a file with findings, and the folders above it (a filter on
    a folder shows what is below it too)."""
    found: set[str] = set()
    for path in paths:
        folder = folder_of(path)
        found.add(folder)
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            found.add(folder)
    return sorted(found)


def filter_bar(data: ReportData) -> str:
    """The controls, filled from the values present in this report; hidden until the
    script runs (without it they would do nothing)."""
    findings = data.findings
    names = {r.rule: r.name for r in data.rules}
    rules = sorted({f.rule for f in findings})
    order = {"error": 0, "warning": 1, "info": 2, "fix": 0, "manual": 1, "note": 2}
    severities = sorted({f.severity.value for f in findings}, key=order.get)
    remedies = sorted({remedy(f) for f in findings}, key=order.get)
    contexts = sorted({f.context.value for f in findings})
    parts = [
        _select("rule", "Rule", ((r, f"{r} {names.get(r, '')}".strip()) for r in rules)),
        _select("severity", "Severity", ((s, s) for s in severities)),
        _select("fix", "Fix", ((r, r) for r in remedies)),
        _select("context", "Context", ((c, c) for c in contexts)),
        _select("folder", "Folder", ((d, d) for d in _folders(f.path for f in findings))),
        '<label>Text <input type="search" name="q" placeholder="path, message, symbol"></label>',
        '<button type="button" id="filter-clear">Clear</button>',
        '<output id="filter-count" aria-live="polite"></output>',
    ]
    return (
        '<div id="filters" class="filters" role="search" aria-label="Filter the files and '
        f'findings" hidden>{"".join(parts)}</div>'
    )
