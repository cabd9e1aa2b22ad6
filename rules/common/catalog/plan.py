"""Turning a bound call and its catalog entry's ``out`` template into a rewrite."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kmigrate.engine import NOT_LITERAL, ArgOut, CallEdit, EditPlan, ReplaceNode
from kmigrate.rules.common.catalog.binding import Binding, ManualPortError
from kmigrate.rules.common.catalog.translators import OMIT, TRANSLATORS, Translation, Value
from kmigrate.rules.common.dtypes import dtype_name
from kmigrate.rules.ops_catalog import OutArg, qualify_names


@dataclass
class Rewrite:
    """An automatic rewrite: the plan and the Keras name it writes."""

    plan: EditPlan
    target: str


_PARAM = re.compile(r"\{\((\w+)\)\}|\{(\w+)\}")
_NAME_SLOT = re.compile(r"\{name:([\w.]+)\}")


def plain_names(text: str) -> str:
    """Filled template text as a message shows it: ``{name:keras.ops.sum}`` -> ``keras.ops.sum``
    (the editor spells the name from the module's imports; a message names it in full)."""
    return _NAME_SLOT.sub(lambda match: match.group(1), text)


def fill_template(template: str, binding: Binding) -> str:
    """The template with each ``{p}`` replaced by argument ``p``'s source text."""

    def value(match: re.Match[str]) -> str:
        atom, plain = match.groups()
        return binding.atom(atom) if atom else binding.text(plain)

    return _PARAM.sub(value, qualify_names(template))


def check_conditions(binding: Binding) -> None:
    entry = binding.entry
    for name in entry.needs:
        if not binding.given(name) or binding.literal(name) is None:
            raise ManualPortError(entry.reason or f"`{name}` is not given", entry.suggestion)
    for param in entry.checked:
        node = binding.node(param.name)
        if node is None:
            continue
        accepted = entry.accepted(param.name)
        literal = binding.site.module.literal(node)
        named = dtype_name(binding.site, node)
        if named is not None and named in accepted:
            continue
        if literal is not NOT_LITERAL and any(
            literal == v and type(literal) is not bool or literal is v for v in accepted
        ):
            continue
        shown = " or ".join(repr(v) for v in accepted) or "absent"
        reason = f"`{param.name}={binding.site.text(node)}` is not supported (only {shown})"
        if entry.reason and not entry.needs:
            reason = f"{reason}: {entry.reason}"
        raise ManualPortError(reason, entry.suggestion)


def _arg_out(binding: Binding, out: OutArg) -> list[ArgOut]:
    if out.param is None:
        return [ArgOut(None, out.keyword, out.literal)]
    if out.star:
        return [ArgOut(index) for index in binding.star]
    arg = binding.args.get(out.param)
    if arg is None:
        if out.default is not None:
            return [ArgOut(None, out.keyword, out.default)]
        if out.keyword is None and binding.entry.param(out.param).default is None:
            raise ManualPortError(f"`{out.param}` is not given")
        return []
    translated: Translation = None
    if out.translator:
        value = Value(binding, out.param, arg.node)
        translated = TRANSLATORS[out.translator](value, *out.translator_args)
    if translated is OMIT:
        return []
    return [ArgOut(arg.source, out.keyword, translated)]


def table_rewrite(binding: Binding) -> Rewrite:
    entry = binding.entry
    check_conditions(binding)
    if entry.template is not None:
        text = fill_template(entry.template, binding)
        return Rewrite(EditPlan((ReplaceNode(binding.site.span, text),)), plain_names(text))
    args: list[ArgOut] = []
    for out in entry.out:
        args.extend(_arg_out(binding, out))
    edit = CallEdit(binding.site.span, callee=entry.target, args=tuple(args))
    assert entry.target is not None
    return Rewrite(EditPlan((edit,)), entry.target)
