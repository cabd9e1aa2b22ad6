"""The catalog as documentation: ``docs/ops.md``, ``kmigrate explain``, and its size."""

from __future__ import annotations

import re

from kmigrate.rules.ops_catalog._model import QUALIFIED, OpEntry, Status
from kmigrate.rules.ops_catalog._table import CATALOG, SECTIONS, by_symbol, lookup
from kmigrate.rules.ops_catalog._translators import TRANSLATOR_DOCS


def catalog_stats() -> dict[str, int]:
    """The catalog's size: TF symbols covered (aliases counted once), by status."""
    counts = {status: 0 for status in Status}
    for entry in CATALOG:
        counts[entry.status] += len(_documented_symbols(entry))
    covered = sum(counts.values())
    return {
        "symbols covered": covered,
        "exact": counts[Status.EXACT],
        "conditional": counts[Status.CONDITIONAL],
        "manual": counts[Status.MANUAL],
        "automatic entries": sum(1 for e in CATALOG if e.automatic),
        "spellings (with aliases)": len(by_symbol()),
        "tf.* symbols": sum(
            len(_documented_symbols(e)) for e in CATALOG if not e.symbol.startswith("K.")
        ),
        "K.* backend functions": sum(
            len(_documented_symbols(e)) for e in CATALOG if e.symbol.startswith("K.")
        ),
    }


def _documented_symbols(entry: OpEntry) -> list[str]:
    """The distinct symbols of an entry: aliases of one function count once.

    An automatic entry is one function under several names. A manual entry may group
    several functions sharing one reason (``tf.math.lgamma``-style families are kept
    one per entry; ``tf.nn.conv2d_transpose tf.nn.conv3d_transpose ...`` are distinct
    functions): those count one each, minus the aliases in ``MANUAL_ALIASES``.
    """
    if entry.automatic:
        return [entry.symbol]
    return [s for s in entry.symbols if s not in MANUAL_ALIASES]


# Spellings of one function inside manual groups (counted once with their first name).
MANUAL_ALIASES = frozenset(
    {
        "tf.eig",
        "tf.eigvals",
        "tf.nn.lrn",
        "tf.Assert",
        "tf.assert_equal",
        "tf.assert_rank",
        "tf.assert_less",
        "tf.assert_greater",
        "tf.dtypes.as_dtype",
        "tf.dtypes.complex",
        "tf.matrix_square_root",
        "tf.nn.space_to_batch",
        "tf.compat.v1.io.gfile.exists",
        "tf.compat.v1.io.gfile.GFile",
    }
)


_SLOT = re.compile(r"\{\((\w+)\)\}|\{(\w+)\}")


def template_form(template: str) -> str:
    """A template as Python a reader can follow: each argument slot (``{x}``, ``{(x)}``)
    becomes the TF parameter's name, ``ops.`` becomes ``keras.ops.``."""
    text = _SLOT.sub(lambda match: match.group(1) or match.group(2), template)
    return QUALIFIED.sub(
        lambda m: ("keras.ops" if m.group(1) == "ops" else "keras") + m.group(2), text
    )


def keras_form(entry: OpEntry) -> tuple[str, list[str]]:
    """The Keras call in plain Python plus notes on defaults and translated values."""
    if entry.template:
        return template_form(entry.template), []
    if not entry.target:
        return "", []
    items, notes = [], []
    for out in entry.out:
        if out.param is None:
            text = out.literal or ""
        elif out.star:
            text = f"*{out.param}"
        else:
            text = out.param
        items.append(text if out.keyword is None else f"{out.keyword}={text}")
        name = out.param
        if out.default is not None:
            notes.append(f"{name} absent -> {out.default.replace('{name:', '').replace('}', '')}")
        if out.translator:
            doc = TRANSLATOR_DOCS.get(out.translator, out.translator)
            notes.append(f"{name}: {doc.format(*out.translator_args)}")
    return f"{entry.target}({', '.join(items)})", notes


def describe(entry: OpEntry) -> str:
    """One catalog entry as plain text (``kmigrate explain tf.reduce_mean``)."""
    lines = [f"{entry.symbol}  [{entry.status.value}]"]
    if len(entry.symbols) > 1:
        label = "aliases" if entry.automatic else "same reason"
        lines.append(f"  {label}: {', '.join(entry.symbols[1:])}")
    if entry.params:
        sig = ", ".join(
            (f"*{p.name}" if p.varargs else p.name) + ("" if p.default is None else f"={p.default}")
            for p in entry.params
        )
        lines.append(f"  TensorFlow: {entry.symbol}({sig})")
    form, value_notes = keras_form(entry)
    if form:
        lines.append(f"  Keras 3:    {form}")
        if value_notes:
            lines.append("  values: " + "; ".join(value_notes))
    elif entry.builder:
        lines.append(f"  Keras 3:    depends on the arguments ({entry.builder}, see below)")
    if entry.legacy:
        renamed = ", ".join(f"{old} -> {new}" for old, new in entry.legacy.items())
        lines.append(f"  old keywords: {renamed}")
    dropped = sorted(entry.drop & set(entry.param_names))
    if dropped and entry.automatic:
        lines.append(f"  dropped: {', '.join(dropped)}")
    conditions = entry.conditions()
    if conditions and entry.automatic:
        lines.append("  rewritten when: " + "; ".join(conditions))
    if entry.note:
        lines.append(f"  note: {entry.note}")
    if entry.reason:
        label = "manual because" if not entry.automatic else "otherwise manual because"
        lines.append(f"  {label}: {entry.reason}")
    if entry.suggestion:
        lines.append(f"  instead: {entry.suggestion}")
    return "\n".join(lines) + "\n"


def explain_entry(code: str) -> str | None:
    """``kmigrate explain tf.reduce_mean``: the entry for any spelling of a symbol."""
    from kmigrate.rules.context_spec import CONTEXT_SPEC

    canonical = CONTEXT_SPEC.canonical
    for candidate in (code, canonical(code), canonical(code.replace("tf.", "tensorflow.", 1))):
        entry = lookup(candidate)
        if entry is not None:
            return describe(entry)
    return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _keras_column(entry: OpEntry) -> str:
    form, value_notes = keras_form(entry)
    if form:
        return f"`{form}`" + "".join(f"<br>{_cell(n)}" for n in value_notes)
    if entry.builder:
        return "depends on the arguments (see conditions)"
    return ""


def catalog_markdown() -> str:
    """The reference page, docs/ops.md (scripts/gen_ops_doc.py writes it)."""
    stats = catalog_stats()
    lines = [
        "# The ops catalog: TensorFlow / Keras 2 backend -> keras.ops",
        "",
        "Generated from `rules/ops_catalog/` by `python scripts/gen_ops_doc.py`; do not "
        "edit by hand. `kmigrate explain tf.reduce_mean` shows one entry, "
        "`kmigrate rules --catalog` the counts.",
        "",
        "- **exact**: always rewritten (rule KM201);",
        "- **conditional**: rewritten when the call meets the listed conditions, otherwise "
        "reported for a manual port with the reason (KM202);",
        "- **manual**: never rewritten; the finding (KM202) says why and what to write.",
        "",
        "Every automatic entry has at least one differential test "
        "(`tests/differential/cases.py`): the TensorFlow call and its rewrite run on the "
        "same seeded inputs on the tensorflow, jax and torch backends and must agree "
        "(float32 within 1e-5 relative / 1e-6 absolute unless the case says otherwise; "
        "integers exactly; same shape and dtype).",
        "",
        "| | count |",
        "|---|---|",
        *(f"| {key} | {value} |" for key, value in stats.items()),
        "",
    ]
    for title, section in SECTIONS.items():
        lines += [
            f"## {title}",
            "",
            "| TensorFlow | Keras 3 | status | notes |",
            "|---|---|---|---|",
        ]
        for entry in section:
            symbols = "<br>".join(f"`{s}`" for s in entry.symbols)
            notes = []
            if entry.automatic:
                conditions = entry.conditions()
                if conditions:
                    notes.append("When: " + "; ".join(conditions) + ".")
                if entry.legacy:
                    renamed = ", ".join(f"`{o}` -> `{n}`" for o, n in entry.legacy.items())
                    notes.append(f"Old keywords: {renamed}.")
                if entry.note:
                    notes.append(entry.note)
                if entry.reason:
                    notes.append(f"Otherwise manual: {entry.reason}.")
            else:
                notes.append(f"{entry.reason[:1].upper()}{entry.reason[1:]}.")
            if entry.suggestion:
                notes.append(f"Instead: {entry.suggestion}.")
            row = [symbols, _cell(_keras_column(entry)), entry.status.value, _cell(" ".join(notes))]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)
