"""Editing: execute edit plans on a LibCST tree, keeping every byte we do not change.

Rules hand over data (``CallEdit``, ``ReplaceNode``, ``ClassEdit``, ``EnsureImport``,
see ``migrate/engine/model.py``); this module is the only place that builds LibCST nodes.
It finds the node a plan points at by its span (LibCST's ``PositionProvider`` uses
the same convention as ``Span``), applies the edits bottom-up so nested edits
compose, then fixes imports: adds what the new spellings need and removes imports
whose every use was rewritten away. The visit enters only the nodes on the way to a
target (:class:`Located`): the rest of the tree is kept as it is, unvisited.

It is imported only by ``apply``, and only for files that have fixes.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter, deque
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

from kmigrate.engine.model import (
    ArgOut,
    CallEdit,
    ClassEdit,
    EditPlan,
    EnsureImport,
    ReplaceNode,
    Span,
)
from kmigrate.engine.names import import_bindings, module_level_uses, scope_bindings
from kmigrate.engine.spec import ImportStyle

_PLACEHOLDER = re.compile(r"\{name:([A-Za-z_][\w.]*)\}")


class EditError(Exception):
    """A plan that cannot be executed on this tree; the plan is skipped, never half-applied."""

    def __init__(self, plan_index: int, reason: str) -> None:
        super().__init__(reason)
        self.plan_index = plan_index
        self.reason = reason


# ---------------------------------------------------------------------------
# Spelling qualified names with the module's own imports.
# ---------------------------------------------------------------------------


@dataclass
class Speller:
    """Turns ``keras.ops.mean`` into what this module should write (``ops.mean``)
    and remembers which imports that spelling needs. The import style is the rules'
    (``ContextSpec.import_style``)."""

    bindings: dict[str, str]  # module-level local name -> qualified name
    taken: set[str]  # every module-level name, imported or not
    style: ImportStyle
    needed: list[EnsureImport] = field(default_factory=list)
    added: set[str] = field(default_factory=set)  # local names this edit introduces

    @classmethod
    def for_text(cls, text: str, style: ImportStyle) -> Speller:
        return cls.for_tree(ast.parse(text), style)

    @classmethod
    def for_tree(cls, tree: ast.Module, style: ImportStyle) -> Speller:
        scope = scope_bindings(tree)
        return cls(dict(scope.imports), set(scope.imports) | scope.others, style)

    def _need(self, module: str, name: str | None = None) -> None:
        wanted = EnsureImport(module, name)
        if wanted not in self.needed:
            self.needed.append(wanted)

    def spell(self, qualified: str) -> str:
        parts = qualified.split(".")
        # 1. The module's own imports: `layers.Dense` after `from keras import layers`.
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            for local, target in self.bindings.items():
                if target == prefix and local not in self.added:
                    return ".".join([local, *parts[cut:]])
        # 2. Namespaces imported by name (`from keras import ops` then `ops.mean`).
        for namespace in self.style.from_imports:
            parent, _, local = namespace.rpartition(".")
            if qualified.startswith(namespace + ".") and (
                self.bindings.get(local) == namespace or local not in self.taken
            ):
                self._add(local, namespace, EnsureImport(parent, local))
                return qualified[len(parent) + 1 :]
        # 3. Otherwise the full dotted name under `import <root>`.
        root = parts[0]
        bound = self.bindings.get(root)
        if (
            root not in self.taken
            or bound == root
            or any(bound == f"{p}.{root}" for p in self.style.superseded_parents)
        ):
            self._add(root, root, EnsureImport(root))
        return qualified

    def _add(self, local: str, target: str, wanted: EnsureImport) -> None:
        if local not in self.bindings:
            self.bindings[local] = target
            self.added.add(local)
        self.taken.add(local)
        self._need(wanted.module, wanted.name)

    def fill(self, text: str) -> str:
        """Replace ``{name:qualified}`` placeholders with spellings."""
        return _PLACEHOLDER.sub(lambda m: self.spell(m.group(1)), text)


# ---------------------------------------------------------------------------
# The transformer.
# ---------------------------------------------------------------------------


def _key(span: Span) -> tuple[int, int, int, int]:
    return (span.line, span.column, span.end_line, span.end_column)


# LibCST's parse functions, once per text: rules write the same few callees, values,
# ``__init__`` statements and imports over and over (each parse call costs about a
# millisecond of set-up), and LibCST nodes are immutable, so one node serves all.
_expression = functools.lru_cache(maxsize=4096)(cst.parse_expression)
_statement = functools.lru_cache(maxsize=4096)(cst.parse_statement)


def _ws(text: str) -> cst.SimpleWhitespace:
    return cst.SimpleWhitespace(text)


_LINE_BREAK = re.compile(r"\r\n?|\n")  # how LibCST's position pass counts lines

Range = tuple[int, int, int, int]  # line, column, end line, end column: a Span's key


class _LocatingState(CodegenState):
    """LibCST's position pass (``PositionProvider``: the same ranges, the same rules),
    written for speed: plain tuples, no regular expression for tokens without a line
    break, no generator per expression. On the way it notes the targets it meets and
    every node that holds one."""

    __slots__ = (
        "line",
        "column",
        "starts",
        "nodes",
        "ranges",
        "spans",
        "class_lines",
        "targets",
        "on_path",
    )

    def start(self, spans: Container[Range], class_lines: Container[int]) -> None:
        """``spans``: the targets' ranges; ``class_lines``: the lines of the class
        names a ``ClassEdit`` points at."""
        self.line, self.column = 1, 0
        self.starts: list[tuple[int, int]] = []
        self.nodes: list[cst.CSTNode] = []
        self.ranges: dict[int, Range] = {}  # by id(node): ints hash in C, nodes in Python
        self.spans = spans
        self.class_lines = class_lines
        self.targets: set[int] = set()
        self.on_path: set[int] = set()

    def _advance(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            segments = _LINE_BREAK.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._advance(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append((self.line, self.column))
        self.nodes.append(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self.starts.pop()
        self.nodes.pop()
        ranges = self.ranges
        key = id(node)
        where = ranges.get(key)
        if where is None:  # else a syntactic position was recorded: it wins
            where = ranges[key] = (line, column, self.line, self.column)
        if where in self.spans or (
            node.__class__ is cst.ClassDef
            and ranges.get(id(node.name), (0,))[0] in self.class_lines
        ):
            self.targets.add(key)
            for ancestor in reversed(self.nodes):
                if id(ancestor) in self.on_path:
                    break
                self.on_path.add(id(ancestor))

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """``PositionProvidingCodegenState.record_syntactic_position`` as a plain context
    manager: a node's range without its parentheses and whitespace, or hoisted from
    the child nodes LibCST names."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _LocatingState, node, start_node, end_node) -> None:  # noqa: ANN001
        self.state, self.node = state, node
        self.start_node, self.end_node = start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc_info: object) -> bool:
        state = self.state
        ranges = state.ranges
        start = ranges[id(self.start_node)][:2] if self.start_node is not None else self.start
        end = (
            ranges[id(self.end_node)][2:]
            if self.end_node is not None
            else (state.line, state.column)
        )
        ranges[id(self.node)] = (*start, *end)
        return False


@dataclass
class Located:
    """Where a round's edits are in one LibCST tree: every node's range (positions as
    ``PositionProvider`` gives them, without its extra pass over the tree), the nodes
    a plan points at, and the nodes that hold one of them (the only ones visited)."""

    ranges: dict[int, Range]  # all three by id(node), the tree keeping the nodes alive
    targets: set[int]
    on_path: set[int]


class PlanTransformer(cst.CSTTransformer):
    """Executes the edits on the nodes their spans point at. Call :meth:`locate` for
    a tree, then :meth:`run` (a ``Located`` made for more edits may be reused)."""

    def __init__(self, edits: Sequence[tuple[int, object]], speller: Speller) -> None:
        super().__init__()
        self.speller = speller
        self.by_span: dict[tuple[int, int, int, int], list[tuple[int, object]]] = {}
        self.class_edits: dict[int, list[tuple[int, ClassEdit]]] = {}
        for plan_index, edit in edits:
            if isinstance(edit, ClassEdit):
                self.class_edits.setdefault(edit.span.line, []).append((plan_index, edit))
            elif isinstance(edit, (CallEdit, ReplaceNode)):
                self.by_span.setdefault(_key(edit.span), []).append((plan_index, edit))
        self.applied: Counter[int] = Counter()
        self.located = Located({}, set(), set())

    def locate(self, module: cst.Module) -> Located:
        """One position pass over ``module`` that also finds this transformer's targets."""
        state = _LocatingState(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        state.start(self.by_span, self.class_edits)
        module._codegen(state)
        return Located(state.ranges, state.targets, state.on_path)

    def run(self, module: cst.Module, located: Located) -> cst.Module:
        """The edited tree; ``located`` must come from :meth:`locate` on ``module``
        (for these edits or more)."""
        self.located = located
        return module.visit(self)

    # It defines no visit_/leave_ methods: the hooks skip LibCST's look-up of them (a
    # string built per node and per field).
    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.located.on_path

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def _edits_for(self, node: cst.CSTNode) -> list[tuple[int, object]]:
        key = id(node)
        if key not in self.located.targets:
            return []
        return self.by_span.get(self.located.ranges[key], [])

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        if isinstance(original_node, cst.SimpleStatementLine) and self.by_span:
            replaced = self._statement_edit(original_node, updated_node)
            if replaced is not None:
                return replaced
        if isinstance(original_node, cst.Decorator) and self.by_span:
            removals = [
                i
                for i, e in self._edits_for(original_node.decorator)
                if isinstance(e, ReplaceNode) and e.kind == "decorator"
            ]
            if removals:  # ReplaceNode(kind="decorator"): the decorator line goes
                self.applied[removals[0]] += 1
                return cst.RemovalSentinel.REMOVE
        edits = self._edits_for(original_node) if self.by_span else []
        result = updated_node
        for plan_index, edit in edits:
            try:
                if isinstance(edit, CallEdit) and isinstance(result, cst.Call):
                    result = self._call_edit(result, edit)
                elif isinstance(edit, ReplaceNode) and edit.kind == "expr":
                    if isinstance(result, cst.BaseExpression):
                        result = self._replace_expr(result, edit)
                    else:
                        continue
                elif isinstance(edit, ReplaceNode) and isinstance(
                    result, (cst.Import, cst.ImportFrom)
                ):
                    result = self._replace_import(result, edit)
                else:
                    continue
            except EditError:
                raise
            except Exception as error:  # noqa: BLE001 - any failure voids the plan
                raise EditError(plan_index, f"{type(error).__name__}: {error}") from error
            self.applied[plan_index] += 1
        if isinstance(result, cst.ClassDef) and self.class_edits:
            result = self._class_edits(original_node, result)
        return result

    # -- statements ---------------------------------------------------------------
    def _statement_edit(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.FlattenSentinel | None:
        """A ``ReplaceNode(kind="stmt")`` on a simple statement other than an import:
        the line becomes the statements of ``text`` (e.g. an ``os.makedirs`` before a
        save), keeping the line's leading comments and trailing comment."""
        if len(original.body) != 1 or isinstance(original.body[0], (cst.Import, cst.ImportFrom)):
            return None
        edits = [
            (i, e)
            for i, e in self._edits_for(original.body[0])
            if isinstance(e, ReplaceNode) and e.kind == "stmt"
        ]
        if not edits:
            return None
        plan_index, edit = edits[0]
        try:
            parsed = list(cst.parse_module(self.speller.fill(edit.text) + "\n").body)
            parsed[0] = parsed[0].with_changes(leading_lines=updated.leading_lines)
            if isinstance(parsed[-1], cst.SimpleStatementLine):
                parsed[-1] = parsed[-1].with_changes(
                    trailing_whitespace=updated.trailing_whitespace
                )
        except Exception as error:  # noqa: BLE001 - any failure voids the plan
            raise EditError(plan_index, f"{type(error).__name__}: {error}") from error
        self.applied[plan_index] += 1
        return cst.FlattenSentinel(parsed)

    # -- calls and expressions -------------------------------------------------
    def _parse_expr(self, text: str) -> cst.BaseExpression:
        return _expression(self.speller.fill(text))

    def _call_edit(self, call: cst.Call, edit: CallEdit) -> cst.Call:
        if edit.callee is not None:
            call = call.with_changes(func=_expression(self.speller.spell(edit.callee)))
        if edit.args is None:
            return call
        positional = [a for a in call.args if a.keyword is None and not a.star]
        keyword = {a.keyword.value: a for a in call.args if a.keyword is not None}
        if any(a.star for a in call.args):
            raise ValueError("cannot rearrange arguments of a call with *args/**kwargs")
        new_args = [self._arg(out, positional, keyword) for out in edit.args]
        last_comma = call.args[-1].comma if call.args else cst.MaybeSentinel.DEFAULT
        last_space = call.args[-1].whitespace_after_arg if call.args else None
        fixed: list[cst.Arg] = []
        for index, arg in enumerate(new_args):
            if index == len(new_args) - 1:
                # The old last argument's comma and spacing (a line break before `)`).
                arg = arg.with_changes(comma=last_comma)
                if last_space is not None:
                    arg = arg.with_changes(whitespace_after_arg=last_space)
            elif arg.comma is cst.MaybeSentinel.DEFAULT or not isinstance(arg.comma, cst.Comma):
                arg = arg.with_changes(comma=cst.Comma(whitespace_after=_ws(" ")))
            fixed.append(arg)
        return call.with_changes(args=fixed)

    def _arg(self, out: ArgOut, positional: list[cst.Arg], keyword: dict[str, cst.Arg]) -> cst.Arg:
        if out.source is None:
            if out.value is None:
                raise ValueError("a new argument needs a value")
            arg = cst.Arg(value=self._parse_expr(out.value))
        elif isinstance(out.source, int):
            arg = positional[out.source]
        else:
            arg = keyword[out.source]
        if out.value is not None and out.source is not None:
            arg = arg.with_changes(value=self._parse_expr(out.value))
        if out.keyword is None:
            return arg.with_changes(
                keyword=None,
                equal=cst.MaybeSentinel.DEFAULT,
                whitespace_after_arg=arg.whitespace_after_arg,
            )
        if arg.keyword is not None and arg.keyword.value == out.keyword:
            return arg
        equal = arg.equal if isinstance(arg.equal, cst.AssignEqual) else None
        if equal is None:
            equal = cst.AssignEqual(whitespace_before=_ws(""), whitespace_after=_ws(""))
        return arg.with_changes(keyword=cst.Name(out.keyword), equal=equal)

    def _replace_expr(self, node: cst.BaseExpression, edit: ReplaceNode) -> cst.BaseExpression:
        new = self._parse_expr(edit.text)
        # Keep the parentheses that were around the old expression.
        lpar = getattr(node, "lpar", ())
        rpar = getattr(node, "rpar", ())
        if lpar and hasattr(new, "lpar"):
            new = new.with_changes(lpar=lpar, rpar=rpar)
        return new

    # -- imports -----------------------------------------------------------------
    def _replace_import(self, node: cst.BaseSmallStatement, edit: ReplaceNode):
        new_line = _statement(self.speller.fill(edit.text))
        assert isinstance(new_line, cst.SimpleStatementLine) and len(new_line.body) == 1
        new = new_line.body[0]
        if (
            isinstance(node, cst.ImportFrom)
            and isinstance(new, cst.ImportFrom)
            and not isinstance(node.names, cst.ImportStar)
            and not isinstance(new.names, cst.ImportStar)
            and _alias_texts(node.names) == _alias_texts(new.names)
        ):
            # Same names: swap only the module, keeping parentheses and comments.
            return node.with_changes(module=new.module)
        return new

    # -- classes -----------------------------------------------------------------
    def _class_edits(self, original: cst.CSTNode, node: cst.ClassDef) -> cst.ClassDef:
        position = self.located.ranges.get(id(original.name))  # type: ignore[attr-defined]
        if position is None:
            return node
        edits = self.class_edits.get(position[0], [])
        seen: list[ClassEdit] = []
        for plan_index, edit in edits:
            if edit in seen:
                self.applied[plan_index] += 1
                continue
            seen.append(edit)
            try:
                node = _ClassEditor(node, self.speller).apply(edit)
            except Exception as error:  # noqa: BLE001
                raise EditError(plan_index, f"{type(error).__name__}: {error}") from error
            self.applied[plan_index] += 1
        return node


def _alias_texts(names: Sequence[cst.ImportAlias]) -> list[str]:
    module = cst.Module(body=[])
    return [
        module.code_for_node(a.name) + (f" as {a.asname.name.value}" if a.asname else "")
        for a in names
    ]  # type: ignore[union-attr]


def _is_super_init(stmt: cst.BaseStatement) -> bool:
    code = cst.Module(body=[stmt]).code
    return "__init__(" in code and ("super(" in code or ".__init__(self" in code)


class _ClassEditor:
    """Ensures ``__init__`` params/statements, ``get_config`` items and ``call`` params in
    one class."""

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
            init = _statement(
                f"def __init__(self, {params}**kwargs):\n    super().__init__(**kwargs)\n"
            )
            insert_at = 1 if body and _is_docstring(body[0]) else 0
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
        for i, stmt in enumerate(body):
            if not isinstance(stmt, cst.FunctionDef):
                continue
            if edit.config_items and stmt.name.value == "get_config":
                body[i] = self._extend_config(stmt, edit.config_items)
            elif edit.call_params and stmt.name.value == "call":
                body[i] = self._ensure_params(stmt, edit.call_params)
        return self.node.with_changes(body=self.node.body.with_changes(body=body))

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
                default=_expression(default),
                equal=cst.AssignEqual(whitespace_before=_ws(""), whitespace_after=_ws("")),
            )
            if isinstance(params.star_arg, cst.MaybeSentinel):
                items = list(params.params)
                if items:
                    items[-1] = items[-1].with_changes(comma=cst.Comma(whitespace_after=_ws(" ")))
                has_more = bool(params.kwonly_params or params.star_kwarg)
                items.append(
                    param.with_changes(comma=cst.Comma(whitespace_after=_ws(" ")))
                    if has_more
                    else param
                )
                params = params.with_changes(params=items)
            else:
                items = list(params.kwonly_params)
                if items:
                    items[-1] = items[-1].with_changes(comma=cst.Comma(whitespace_after=_ws(" ")))
                has_more = bool(params.star_kwarg)
                items.append(
                    param.with_changes(comma=cst.Comma(whitespace_after=_ws(" ")))
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
            body.insert(anchor, _statement(filled + "\n"))
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
        separator = cst.Comma(whitespace_after=_ws(" "))
        if isinstance(literal.lbrace.whitespace_after, cst.ParenthesizedWhitespace):
            separator = cst.Comma(whitespace_after=literal.lbrace.whitespace_after)
        trailing = elements[-1].comma if elements else cst.MaybeSentinel.DEFAULT
        if elements:
            elements[-1] = elements[-1].with_changes(comma=separator)
        added = [
            cst.DictElement(
                cst.SimpleString(f'"{key}"'),
                _expression(self.speller.fill(value)),
                comma=separator,
            )
            for key, value in items
        ]
        if added:
            added[-1] = added[-1].with_changes(comma=trailing)
        return literal.with_changes(elements=[*elements, *added])


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


# ---------------------------------------------------------------------------
# Imports: add what the spellings need, drop what the edits made unused.
# ---------------------------------------------------------------------------


def _name_uses(tree: ast.Module) -> Counter[str]:
    return Counter(module_level_uses(tree))


# What can hold a module-level import: the module, statement lines and suites, and
# every compound statement but ``def`` and ``class`` (imports in those stay).
_IMPORT_HOLDERS = (
    cst.Module,
    cst.SimpleStatementLine,
    cst.SimpleStatementSuite,
    cst.IndentedBlock,
    cst.If,
    cst.Else,
    cst.Try,
    cst.TryStar,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.Finally,
    cst.With,
    cst.For,
    cst.While,
    cst.Match,
    cst.MatchCase,
)


class ImportFixer(cst.CSTTransformer):
    """Drops the module-level imports of ``unused`` names and adds ``add``. The visit
    enters only what can hold such an import: never a function, a class or an
    expression."""

    def __init__(self, unused: set[str], add: list[EnsureImport]) -> None:
        super().__init__()
        self.unused = unused
        self.add = add

    def on_visit(self, node: cst.CSTNode) -> bool:
        return isinstance(node, _IMPORT_HOLDERS)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        pass  # no visit_<Node>_<field> methods here

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass

    def _keep(self, alias: cst.ImportAlias, is_from: bool) -> bool:
        if alias.asname is not None:
            local = alias.asname.name.value  # type: ignore[union-attr]
        elif is_from:
            local = alias.name.value  # type: ignore[union-attr]
        else:
            local = cst.Module(body=[]).code_for_node(alias.name).split(".")[0]
        return local not in self.unused

    def _filter(self, node, is_from: bool):
        names = node.names
        if isinstance(names, cst.ImportStar):
            return node
        kept = [a for a in names if self._keep(a, is_from)]
        if len(kept) == len(names):
            return node
        if not kept:
            return cst.RemovalSentinel.REMOVE
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(names=kept)

    def leave_Import(self, original_node, updated_node):  # noqa: N802
        return self._filter(updated_node, is_from=False)

    def leave_ImportFrom(self, original_node, updated_node):  # noqa: N802
        return self._filter(updated_node, is_from=True)

    def leave_Module(self, original_node, updated_node):  # noqa: N802
        if not self.add:
            return _no_new_blank_start(original_node, updated_node)
        lines = []
        for wanted in sorted(self.add, key=lambda e: (e.name is not None, e.module, e.name or "")):
            text = (
                f"import {wanted.module}"
                if wanted.name is None
                else f"from {wanted.module} import {wanted.name}"
            )
            lines.append(_statement(text + "\n"))
        body = list(updated_node.body)
        index = _import_insertion_index(body)
        body[index:index] = lines
        if index:
            return _no_new_blank_start(original_node, updated_node.with_changes(body=body))
        return updated_node.with_changes(body=body)


def _no_new_blank_start(original: cst.Module, updated: cst.Module) -> cst.Module:
    """When the first line (an import) was removed, the next statement must not start
    the file with the blank lines that used to separate it."""
    if not updated.body or not original.body or updated.header or original.header:
        return updated
    first = updated.body[0]
    if original.body[0].leading_lines or not first.leading_lines:
        return updated
    kept = list(first.leading_lines)
    while kept and kept[0].comment is None:
        kept.pop(0)
    return updated.with_changes(body=[first.with_changes(leading_lines=kept), *updated.body[1:]])


def _import_insertion_index(body: Sequence[cst.BaseStatement]) -> int:
    """After the leading docstring, ``__future__`` imports and the top import block."""
    return import_insertion_scan(body)[0]


def import_insertion_scan(body: Sequence[cst.BaseStatement]) -> tuple[int, int]:
    """Where new imports go, and the index of the statement that ended the search
    (``len(body)`` when none did): the answer depends on ``body[:stop + 1]`` only."""
    index = 0
    for i, stmt in enumerate(body):
        if i == 0 and _is_docstring(stmt):
            index = 1
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        ):
            index = i + 1
            continue
        if isinstance(stmt, (cst.Try, cst.If)) and index == i:
            continue  # `try: import x` blocks inside the import section
        return index, i
    return index, len(body)


_STATEMENT_LISTS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _bound(tree: ast.Module) -> dict[str, str]:
    """What every import in the module binds, the first binding of a name winning in
    ``ast.walk`` order (breadth first). Imports are statements and statements only
    sit in statement lists, so only those are walked: the same imports in the same
    order, without visiting every expression node."""
    bound: dict[str, str] = {}
    todo: deque[ast.AST] = deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for local, qualified in import_bindings(node):
                bound.setdefault(local, qualified)
            continue
        for name in node._fields:
            if name in _STATEMENT_LISTS:
                todo.extend(getattr(node, name))
    return bound


def _fix_imports(original_text: str, new_text: str, needed: list[EnsureImport]) -> str:
    unused, add = import_changes(ast.parse(original_text), ast.parse(new_text), needed)
    if not unused and not add:
        return new_text
    module = cst.parse_module(new_text)
    return module.visit(ImportFixer(unused, add)).code


def import_changes(
    original: ast.Module, tree: ast.Module, needed: list[EnsureImport]
) -> tuple[set[str], list[EnsureImport]]:
    """The module-level names whose imports the edits made unused, and the imports
    the new spellings need that the module does not have yet."""
    before = _name_uses(original)
    after = _name_uses(tree)
    imported = _bound(tree)
    unused = {name for name in imported if before[name] > 0 and after[name] == 0}
    add: list[EnsureImport] = []
    for wanted in needed:
        local = wanted.name or wanted.module.split(".")[0]
        qualified = f"{wanted.module}.{wanted.name}" if wanted.name else wanted.module
        if local in imported and local not in unused:
            continue  # already there (or bound to something we must not shadow)
        if imported.get(local) == qualified and local in unused:
            unused.discard(local)
            continue
        add.append(wanted)
    return unused, add


# ---------------------------------------------------------------------------
# Entry point.
# ---------------------------------------------------------------------------


@dataclass
class EditResult:
    text: str
    applied: list[int]  # indices of the plans that were applied
    failed: dict[int, str]  # plan index -> why it was skipped
    tree: ast.Module | None = None  # ast.parse(text), when the editor made it anyway


def apply_plans(text: str, plans: Sequence[EditPlan], style: ImportStyle) -> EditResult:
    """Apply every plan that can be applied, all-or-nothing per plan; names that fixes
    introduce are spelled in ``style``.

    A plan whose edit fails (node not found, bad argument index) is dropped and
    the rest re-applied from the original text, so no plan is half-applied.
    """
    failed: dict[int, str] = {}
    module = cst.parse_module(text)
    located: Located | None = None  # for every plan: good for any subset of them
    while True:
        active = [i for i in range(len(plans)) if i not in failed]
        edits = [(i, e) for i in active for e in plans[i].edits]
        speller = Speller.for_text(text, style)
        for _, edit in edits:  # explicit imports requested by rules
            if isinstance(edit, EnsureImport) and edit not in speller.needed:
                speller.needed.append(edit)
        transformer = PlanTransformer(edits, speller)
        if located is None:
            located = transformer.locate(module)
        try:
            new_module = transformer.run(module, located)
        except EditError as error:
            failed[error.plan_index] = error.reason
            continue
        expected = Counter(i for i, e in edits if not isinstance(e, EnsureImport))
        missing = [i for i in active if transformer.applied[i] < expected[i]]
        if missing:
            for i in missing:
                failed[i] = "the code this plan points at was not found (changed by another edit?)"
            continue
        new_text = new_module.code
        if new_text != text or speller.needed:
            new_text = _fix_imports(text, new_text, speller.needed)
        return EditResult(new_text, active, failed)
