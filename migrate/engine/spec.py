"""The shape of the knowledge the engine is given: :class:`ContextSpec`.

The engine classifies code (model, training loop, data) and indexes projects without
knowing a TensorFlow symbol; ``rules/context_spec.py`` fills this spec with them and the
caller passes it in. :func:`function_refs` is the one reading of "a function passed as an
argument" that both the per-module contexts and the project index share.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class ContextSpec:
    """The TensorFlow/Keras knowledge context classification needs (data, from rules/)."""

    model_base_prefixes: tuple[str, ...]  # canonical symbol prefixes of Layer/Model/Loss...
    model_name_suffixes: tuple[str, ...]  # unresolved base names that look like layers
    model_function_keywords: frozenset[str]  # loss=, metrics=, activation= ...
    model_function_callees: tuple[str, ...]  # symbol suffixes taking a function: ".Lambda"
    functional_input_suffixes: tuple[str, ...]  # ".Input": functional model builders
    data_methods: frozenset[str]  # dataset.map(fn) ...
    data_symbol_prefixes: tuple[str, ...]  # tf.data. tf.io. ...
    training_symbols: tuple[str, ...]  # tf.GradientTape ...
    # canonical symbols of whole namespaces (``K``, ``tf``): a project name that resolves
    # to one of them through re-exports or aliases is bound like an import of it
    namespace_symbols: frozenset[str] = frozenset()
    # endings of saved-model / weights file names (``.h5``): a literal path used by
    # several modules pairs a save in one with a load in another
    saved_file_suffixes: tuple[str, ...] = ()


def function_refs(node: ast.AST) -> Iterable[ast.AST]:
    """Function-valued expressions inside an argument: names, lambdas, list items."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for elt in node.elts:
            yield from function_refs(elt)
    elif isinstance(node, ast.Dict):
        for value in node.values:
            yield from function_refs(value)
    elif isinstance(node, ast.IfExp):  # loss=focal if use_focal else smoothed
        yield from function_refs(node.body)
        yield from function_refs(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from function_refs(value)
    else:
        yield node
