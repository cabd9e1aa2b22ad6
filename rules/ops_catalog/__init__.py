"""The ops catalog: what every TensorFlow / Keras 2 backend op becomes in ``keras.ops``.

The catalog is data. Each :class:`OpEntry` says, for one TF symbol and its aliases
(``tf.math.reduce_mean`` = ``tf.reduce_mean``; ``K.*`` functions are their own
entries because their signatures differ), either how a call maps onto a Keras 3
function or why it cannot be mapped and what to write instead. ``rules/km2_ops/``
interprets the table; ``scripts/gen_ops_doc.py`` renders it as ``docs/ops.md``.

An entry is written with three small strings, parsed once, when it is first used:

- ``sig``: the TF signature exactly as ``inspect.signature`` shows it in the installed
  TensorFlow 2.21 / tf_keras 2.21 (``tests/differential/test_signatures.py`` checks
  this), e.g. ``"input_tensor, axis=None, keepdims=False, name=None"``;
- ``out``: the Keras argument list, in Python call syntax, naming TF parameters:
  ``"input_tensor, axis=axis, keepdims=keepdims"``. An item is

  - ``p`` - the TF argument ``p``, kept as written (omitted when not given);
  - ``p | 0`` - the same, with ``0`` written when the call does not give it (for
    defaults that differ, e.g. ``tf.argmax`` axis 0 versus ``ops.argmax`` axis None);
  - ``f(p, ...)`` - the argument translated by the value translator ``f``
    (``dtype``, ``padding``, ``window`` ..., see ``_translators``); a translator may
    refuse (non-literal value whose meaning depends on the value): the call is manual;
  - a literal (``-1``, ``"channels_last"``, ``False``) - a new argument;
  - ``*p`` - a TF ``*args`` parameter, passed on positionally.

  A TF parameter that ``out`` does not mention must be absent or equal to an accepted
  value (its TF default unless ``accept`` says otherwise); ``name`` is always dropped.
- ``template``: instead of ``out``, an expression with ``{p}`` for the source text
  of argument ``p`` (``{(p)}`` parenthesises it unless it is atomic); ``ops.x`` and
  ``keras.x.y`` become qualified names the editor spells from the module's imports.

``builder`` names the few entries whose mapping depends on argument values in a way
the strings cannot say (``tf.matmul`` transpose flags, ``tf.shape``'s tensor-versus-
tuple result, ``tf.linalg.band_part`` -> ``tril``/``triu`` ...); the builders live in
``rules/common/catalog/builders.py`` and each has an explanation here (``when``).

Layout: ``sections/`` holds the entries, one data-only module per section; ``_model``
the vocabulary and the string parser; ``_wording`` the text sections share;
``_translators`` each value translator once, with what it does and the condition under
which it refuses; ``_table`` the assembled catalog and its index; ``_render`` the docs.
The sections are Python modules rather than TOML/JSON files: entries are built by
``op(...)``/``manual(...)`` with shared wording constants, which a file format would
have to re-express through a loader of its own, and Python data modules load from
cached bytecode with no parse at import (``scan`` imports the catalog).

Nothing here imports TensorFlow; the package is imported by ``scan``.
"""

from __future__ import annotations

from kmigrate.rules.ops_catalog._model import (
    OpEntry,
    OutArg,
    Param,
    Status,
    py_literal,
    qualify_names,
)
from kmigrate.rules.ops_catalog._render import (
    MANUAL_ALIASES,
    catalog_markdown,
    catalog_stats,
    describe,
    explain_entry,
    keras_form,
    template_form,
)
from kmigrate.rules.ops_catalog._table import CATALOG, SECTIONS, by_symbol, call_symbols, lookup
from kmigrate.rules.ops_catalog._translators import (
    REFUSING_TRANSLATORS,
    SAFE_TRANSLATORS,
    TRANSLATOR_DOCS,
    VALUE_TRANSLATORS,
)

__all__ = [
    "CATALOG",
    "MANUAL_ALIASES",
    "REFUSING_TRANSLATORS",
    "SAFE_TRANSLATORS",
    "SECTIONS",
    "TRANSLATOR_DOCS",
    "VALUE_TRANSLATORS",
    "OpEntry",
    "OutArg",
    "Param",
    "Status",
    "by_symbol",
    "call_symbols",
    "catalog_markdown",
    "catalog_stats",
    "describe",
    "explain_entry",
    "keras_form",
    "lookup",
    "py_literal",
    "qualify_names",
    "template_form",
]
