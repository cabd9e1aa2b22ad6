"""The value translators the catalog's ``out`` strings name, each declared once.

For each translator: what it does (for ``docs/ops.md``) and, when it can refuse a value,
the condition it imposes (an entry's "converts when" column); ``None`` means it never
refuses (it translates literals and keeps any other expression as written). The
translator functions are in ``rules/common/catalog/translators.py``; a test checks that both
name the same translators.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TranslatorDoc:
    does: str  # what it does, for the docs
    refuses_unless: str | None  # the condition it imposes; None: it never refuses


VALUE_TRANSLATORS: dict[str, TranslatorDoc] = {
    "dtype": TranslatorDoc('tf.float32 -> "float32"', None),
    "none_to": TranslatorDoc("None -> {0}", None),
    "lit": TranslatorDoc("must be a literal", "is a literal"),
    "lower": TranslatorDoc(
        'upper case -> lower case ("REFLECT" -> "reflect")', "is a literal string"
    ),
    "padding": TranslatorDoc('"SAME"/"VALID" -> "same"/"valid"', 'is "SAME" or "VALID"'),
    "k_padding": TranslatorDoc('"valid"/"same" only', 'is "valid" or "same"'),
    "data_format": TranslatorDoc(
        '"NHWC" -> "channels_last", "NCHW" -> "channels_first"',
        "is a literal channels-last or channels-first format",
    ),
    "window": TranslatorDoc(
        "[1, s, s, 1] -> s", "is a literal int or list (batch and channel entries 1)"
    ),
    "split": TranslatorDoc(
        "sizes -> cut indices ([2, 3, 5] -> [2, 5])", "is an int or a literal list of sizes"
    ),
    "sqrt_eps": TranslatorDoc("epsilon -> sqrt(epsilon)", "is a literal number"),
    "not_none": TranslatorDoc("must not be None", "is not None"),
    "qr_mode": TranslatorDoc('False/True -> "reduced"/"complete"', "is a literal bool"),
    "resize_method": TranslatorDoc(
        "method -> interpolation (bilinear, nearest)", 'is a literal "bilinear" or "nearest"'
    ),
    "norm_ord": TranslatorDoc('"euclidean" -> the default', "is a literal order"),
    "int_lit": TranslatorDoc("must be a literal int", "is a literal int"),
    "sizes": TranslatorDoc("literal non-negative sizes", "is a literal list of non-negative sizes"),
    "scalar": TranslatorDoc(
        "a literal number", "is a literal number or a math.sqrt/exp/log... call"
    ),
    "axes": TranslatorDoc("a list of axes -> a tuple", None),
    "as_tensor": TranslatorDoc("a literal list -> ops.convert_to_tensor(...)", None),
}

# Views of the table, by what their readers need.
REFUSING_TRANSLATORS: dict[str, str] = {
    name: t.refuses_unless for name, t in VALUE_TRANSLATORS.items() if t.refuses_unless
}
SAFE_TRANSLATORS = frozenset(
    name for name, t in VALUE_TRANSLATORS.items() if t.refuses_unless is None
)
TRANSLATOR_DOCS: dict[str, str] = {name: t.does for name, t in VALUE_TRANSLATORS.items()}
