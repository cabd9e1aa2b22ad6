"""Class-level edits (``ClassEdit``): parameters and statements ensured in ``__init__``,
items added to ``get_config``, parameters added to ``call``, methods added, in one LibCST
class."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from kmigrate.engine.cst_nodes import expression, is_docstring, statement, ws
from kmigrate.engine.model import ClassEdit
from kmigrate.engine.speller import Speller


def _is_super_init(stmt: cst.BaseStatement) -> bool:
    code = cst.Module(body=[stmt]).code
    return "__init__(" in code and ("super(" in code or ".__init__(self" in code)


def _bound_names(body: Iterable[cst.BaseStatement]) -> set[str]:
    """The names a class body binds with ``def`` or ``name = ...``."""
    names = set()
    for stmt in body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = [t.target for t in getattr(small, "targets", ())]
                targets.append(getattr(small, "target", None))
                names.update(t.value for t in targets if isinstance(t, cst.Name))
    return names


class ClassEditor:
    """Ensures ``__init__`` params/statements, ``get_config`` items, ``call`` params and
    methods in one class."""

    def __init__(self, node: cst.ClassDef, speller: Speller) -> None:
        self.node = node
        self.speller = speller

    def apply(self, edit: ClassEdit) -> cst.ClassDef:
        body = list(self.node.body.body)
        init_index = next(
            (
                i
                for i, s in enumerate(body)
                if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"
            ),
            None,
        )
        if init_index is None and (edit.init_params or edit.init_statements):
            params = "".join(f"{name}={default}, " for name, default in edit.init_params)
            init = statement(
                f"def __init__(self, {params}**kwargs):\n    super().__init__(**kwargs)\n"
            )
            insert_at = 1 if body and is_docstring(body[0]) else 0
            if insert_at:  # a blank line after the docstring, as a person would write
                init = init.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            body.insert(insert_at, init)
            init_index = insert_at
            following = body[insert_at + 1] if insert_at + 1 < len(body) else None
            if isinstance(following, (cst.FunctionDef, cst.ClassDef)) and not any(
                line.comment is None for line in following.leading_lines
            ):
                body[insert_at + 1] = following.with_changes(
                    leading_lines=[cst.EmptyLine(indent=False), *following.leading_lines]
                )
        if init_index is not None:
            init = body[init_index]
            assert isinstance(init, cst.FunctionDef)
            init = self._ensure_params(init, edit.init_params)
            init = self._ensure_statements(init, edit.init_statements)
            body[init_index] = init
            body[init_index + 1 : init_index + 1] = self._after_init(
                body[init_index + 1 :], edit.after_init
            )
        for i, stmt in enumerate(body):
            if not isinstance(stmt, cst.FunctionDef):
                continue
            if edit.config_items and stmt.name.value == "get_config":
                body[i] = self._extend_config(stmt, edit.config_items)
            elif edit.call_params and stmt.name.value == "call":
                body[i] = self._ensure_params(stmt, edit.call_params)
        for text in edit.methods:
            method = statement(self.speller.fill(text))
            assert isinstance(method, cst.FunctionDef), text
            if method.name.value not in _bound_names(body):
                # after the body, one blank line apart, as the methods above are
                body.append(method.with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
        return self.node.with_changes(body=self.node.body.with_changes(body=body))

    def _after_init(
        self, following: list[cst.BaseStatement], texts: Iterable[str]
    ) -> list[cst.BaseStatement]:
        """The statements of ``texts`` that do not already follow ``__init__``, one blank
        line after it as a method would be."""
        present = {cst.Module(body=[s]).code.strip() for s in following}
        added: list[cst.BaseStatement] = []
        for text in texts:
            stmt = statement(self.speller.fill(text))
            if cst.Module(body=[stmt]).code.strip() not in present:
                added.append(stmt.with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
        return added

    def _ensure_params(
        self, init: cst.FunctionDef, wanted: Iterable[tuple[str, str]]
    ) -> cst.FunctionDef:
        params = init.params
        present = {
            p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        }
        for name, default in wanted:
            if name in present:
                continue
            param = cst.Param(
                name=cst.Name(name),
                default=expression(default),
                equal=cst.AssignEqual(whitespace_before=ws(""), whitespace_after=ws("")),
            )
            if isinstance(params.star_arg, cst.MaybeSentinel):
                items = list(params.params)
                if items:
                    items[-1] = items[-1].with_changes(comma=cst.Comma(whitespace_after=ws(" ")))
                has_more = bool(params.kwonly_params or params.star_kwarg)
                items.append(
                    param.with_changes(comma=cst.Comma(whitespace_after=ws(" ")))
                    if has_more
                    else param
                )
                params = params.with_changes(params=items)
            else:
                items = list(params.kwonly_params)
                if items:
                    items[-1] = items[-1].with_changes(comma=cst.Comma(whitespace_after=ws(" ")))
                has_more = bool(params.star_kwarg)
                items.append(
                    param.with_changes(comma=cst.Comma(whitespace_after=ws(" ")))
                    if has_more
                    else param
                )
                params = params.with_changes(kwonly_params=items)
            present.add(name)
        return init.with_changes(params=params)

    def _ensure_statements(
        self, init: cst.FunctionDef, statements: Iterable[str]
    ) -> cst.FunctionDef:
        block = init.body
        assert isinstance(block, cst.IndentedBlock)
        body = list(block.body)
        module = cst.Module(body=[])
        existing = {module.code_for_node(s).strip() for s in body}
        anchor = next((i + 1 for i, s in enumerate(body) if _is_super_init(s)), 0)
        for text in statements:
            filled = self.speller.fill(text)
            if filled.strip() in existing:
                continue
            body.insert(anchor, statement(filled + "\n"))
            anchor += 1
            existing.add(filled.strip())
        return init.with_changes(body=block.with_changes(body=body))

    def _extend_config(
        self, method: cst.FunctionDef, items: Iterable[tuple[str, str]]
    ) -> cst.FunctionDef:
        block = method.body
        assert isinstance(block, cst.IndentedBlock)
        module = cst.Module(body=[])
        method_code = module.code_for_node(method)
        wanted = [
            (k, v) for k, v in items if f'"{k}"' not in method_code and f"'{k}'" not in method_code
        ]
        if not wanted:
            return method
        body = list(block.body)
        for i, stmt in enumerate(body):
            if (
                isinstance(stmt, cst.SimpleStatementLine)
                and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Return)
                and stmt.body[0].value is not None
            ):
                returned = stmt.body[0].value
                if isinstance(returned, cst.Dict):  # add the items inside the literal
                    body[i] = stmt.with_changes(
                        body=[stmt.body[0].with_changes(value=self._add_items(returned, wanted))]
                    )
                    continue
                value = module.code_for_node(returned)
                extra = ", ".join(f'"{k}": {self.speller.fill(v)}' for k, v in wanted)
                new_return = cst.parse_statement(f"return {{**{value}, {extra}}}\n")
                body[i] = stmt.with_changes(body=new_return.body)  # type: ignore[attr-defined]
        return method.with_changes(body=block.with_changes(body=body))

    def _add_items(self, literal: cst.Dict, items: Iterable[tuple[str, str]]) -> cst.Dict:
        """Append items to a dict literal, one per line when it is written one per line."""
        elements = list(literal.elements)
        separator = cst.Comma(whitespace_after=ws(" "))
        if isinstance(literal.lbrace.whitespace_after, cst.ParenthesizedWhitespace):
            separator = cst.Comma(whitespace_after=literal.lbrace.whitespace_after)
        trailing = elements[-1].comma if elements else cst.MaybeSentinel.DEFAULT
        if elements:
            elements[-1] = elements[-1].with_changes(comma=separator)
        added = [
            cst.DictElement(
                cst.SimpleString(f'"{key}"'),
                expression(self.speller.fill(value)),
                comma=separator,
            )
            for key, value in items
        ]
        if added:
            added[-1] = added[-1].with_changes(comma=trailing)
        return literal.with_changes(elements=[*elements, *added])
