"""Editing: execute edit plans on a LibCST tree, keeping every byte we do not change.

Rules hand over data (``CallEdit``, ``ReplaceNode``, ``ClassEdit``, ``EnsureImport``,
``EnsureHelper``, see ``migrate/engine/model.py``); this module and its helpers are the
only code that builds LibCST nodes (a helper module beside the file is composed as text
by ``helper_module``). It finds the node a plan points at by its span (the positions of
``cst_positions``, which follow LibCST's ``PositionProvider``, the same convention as
``Span``), applies the edits bottom-up so nested edits compose (class-level edits:
``class_editor``), then fixes imports (``import_edits``): adds what the new spellings
need and removes imports whose every use was rewritten away. The visit enters only the
nodes on the way to a target (:class:`Located`): the rest of the tree is kept as it is,
unvisited.

It is imported only by ``apply``, and only for files that have fixes.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from kmigrate.engine.class_editor import ClassEditor
from kmigrate.engine.cst_nodes import expression, statement, ws
from kmigrate.engine.cst_positions import Located, LocatingState
from kmigrate.engine.import_edits import fix_imports
from kmigrate.engine.import_layout import ImportLayout
from kmigrate.engine.model import (
    UNPLACED_EDITS,
    ArgOut,
    CallEdit,
    ClassEdit,
    EditPlan,
    ReplaceNode,
    Span,
    requested_import,
)
from kmigrate.engine.spec import ImportStyle
from kmigrate.engine.speller import Speller


class EditError(Exception):
    """A plan that cannot be executed on this tree; the plan is skipped, never half-applied."""

    def __init__(self, plan_index: int, reason: str) -> None:
        super().__init__(reason)
        self.plan_index = plan_index
        self.reason = reason


# ---------------------------------------------------------------------------
# The transformer.
# ---------------------------------------------------------------------------


def _key(span: Span) -> tuple[int, int, int, int]:
    return (span.line, span.column, span.end_line, span.end_column)


def laid_out(call: cst.Call, new_args: Sequence[cst.Arg]) -> list[cst.Arg]:
    """``new_args`` in the call's own layout: the separator after the n-th argument is
    the one that followed the old n-th (one argument per line stays so, a hanging
    indent keeps its column), an argument added at the end takes the separator between
    the old last two (or, for a call of one argument on its own line, the line break
    after the opening parenthesis), and the last keeps the old last one's comma and the
    spacing before ``)``. Never a space before a line break."""
    old = list(call.args)
    if not old:
        return _separated(new_args, [], _plain_separator(), None)
    if len(old) >= 2:
        extra = (old[-2].comma, old[-2].whitespace_after_arg)
    elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        extra = (cst.Comma(whitespace_after=call.whitespace_before_args), ws(""))
    else:
        extra = _plain_separator()
    separators = [(a.comma, a.whitespace_after_arg) for a in old[:-1]]
    return _separated(new_args, separators, extra, old[-1])


def _comment_words(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def _code_length(node: cst.CSTNode) -> int:
    return len(cst.Module(body=[]).code_for_node(node))


def _visual_indent_shifted(call: cst.Call, shift: int) -> cst.Call:
    """Arguments aligned under the opening parenthesis (``f(a,`` / ``  b)``) stay aligned
    when the callee's length changes by ``shift`` characters."""
    if not shift or isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        return call

    def moved(space):
        if not isinstance(space, cst.ParenthesizedWhitespace):
            return space
        indent = space.last_line.value
        if indent.strip(" ") or len(indent) + shift < 0:
            return space
        return space.with_changes(last_line=ws(" " * (len(indent) + shift)))

    args = []
    for arg in call.args:
        if isinstance(arg.comma, cst.Comma):
            arg = arg.with_changes(
                comma=arg.comma.with_changes(whitespace_after=moved(arg.comma.whitespace_after))
            )
        args.append(arg.with_changes(whitespace_after_arg=moved(arg.whitespace_after_arg)))
    return call.with_changes(args=args)


def _plain_separator() -> tuple[cst.Comma, cst.SimpleWhitespace]:
    return cst.Comma(whitespace_after=ws(" ")), ws("")


def _separated(
    args: Sequence[cst.Arg],
    separators: list[tuple],
    extra: tuple,
    last: cst.Arg | None,
) -> list[cst.Arg]:
    fixed = []
    for index, arg in enumerate(args):
        if index == len(args) - 1:
            if last is not None:
                arg = arg.with_changes(
                    comma=last.comma, whitespace_after_arg=last.whitespace_after_arg
                )
            else:
                arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=ws(""))
        else:
            comma, after = separators[index] if index < len(separators) else extra
            if not isinstance(comma, cst.Comma):
                comma, after = _plain_separator()
            arg = arg.with_changes(comma=comma, whitespace_after_arg=after)
        fixed.append(arg)
    return fixed


def _alias_texts(names: Sequence[cst.ImportAlias]) -> list[str]:
    module = cst.Module(body=[])
    return [
        module.code_for_node(a.name) + (f" as {a.asname.name.value}" if a.asname else "")
        for a in names
    ]  # type: ignore[union-attr]


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
        # (last line, comments) of replaced expressions whose old value a comment may name
        self.stale: list[tuple[int, tuple[str, ...]]] = []

    def locate(self, module: cst.Module) -> Located:
        """One position pass over ``module`` that also finds this transformer's targets."""
        state = LocatingState(
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
        if self.stale and isinstance(original_node, cst.SimpleStatementLine):
            updated_node = self._without_stale_comment(original_node, updated_node)
        elif self.stale and isinstance(original_node, cst.BaseCompoundStatement):
            self.stale = []  # a header's comment belongs to its block: left as it is
        if isinstance(original_node, cst.SimpleStatementLine) and self.by_span:
            replaced = self._statement_edit(original_node, updated_node)
            if replaced is not None:
                return replaced
        if isinstance(original_node, cst.If) and self.by_span:
            replaced = self._compound_edit(original_node, updated_node)
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
                        if edit.stale_comments:
                            self.stale.append((edit.span.end_line, edit.stale_comments))
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
    def _without_stale_comment(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        """The line without its trailing comment when that comment only named the value
        an edit on this same line replaced (``# HDF5`` beside what is now ``.keras``)."""
        stale, self.stale = self.stale, []
        where = self.located.ranges.get(id(original))
        comment = updated.trailing_whitespace.comment
        if comment is None or where is None:
            return updated
        said = _comment_words(comment.value)
        if not any(
            line == where[2] and said in {_comment_words(c) for c in comments}
            for line, comments in stale
        ):
            return updated
        trailing = updated.trailing_whitespace.with_changes(whitespace=ws(""), comment=None)
        return updated.with_changes(trailing_whitespace=trailing)

    def _statement_edit(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.FlattenSentinel | cst.RemovalSentinel | None:
        """A ``ReplaceNode(kind="stmt")`` on a simple statement other than an import:
        the line becomes the statements of ``text`` (e.g. an ``os.makedirs`` before a
        save), keeping the line's leading comments and trailing comment; an empty
        ``text`` removes the line (a statement moved elsewhere by the same plan)."""
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
        if not edit.text:
            self.applied[plan_index] += 1
            return cst.RemovalSentinel.REMOVE
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

    def _compound_edit(
        self, original: cst.If, updated: cst.If
    ) -> cst.FlattenSentinel[cst.BaseStatement] | None:
        """A ``ReplaceNode(kind="stmt")`` on a whole ``if`` statement (its ``elif`` and
        ``else`` branches included): it becomes the statements of ``text`` (a branch
        kept, KM208), keeping the comments and blank lines above it."""
        edits = [
            (i, e)
            for i, e in self._edits_for(original)
            if isinstance(e, ReplaceNode) and e.kind == "stmt" and e.text
        ]
        if not edits:
            return None
        plan_index, edit = edits[0]
        try:
            parsed = list(cst.parse_module(self.speller.fill(edit.text) + "\n").body)
            parsed[0] = parsed[0].with_changes(leading_lines=updated.leading_lines)
        except Exception as error:  # noqa: BLE001 - any failure voids the plan
            raise EditError(plan_index, f"{type(error).__name__}: {error}") from error
        self.applied[plan_index] += 1
        return cst.FlattenSentinel(parsed)

    # -- calls and expressions -------------------------------------------------
    def _parse_expr(self, text: str) -> cst.BaseExpression:
        return expression(self.speller.fill(text))

    def _call_edit(self, call: cst.Call, edit: CallEdit) -> cst.Call:
        if edit.callee is not None:
            func = expression(self.speller.spell(edit.callee))
            shift = _code_length(func) - _code_length(call.func)
            call = _visual_indent_shifted(call.with_changes(func=func), shift)
        if edit.args is None:
            return call
        positional = [a for a in call.args if a.keyword is None and not a.star]
        keyword = {a.keyword.value: a for a in call.args if a.keyword is not None}
        if any(a.star for a in call.args):
            raise ValueError("cannot rearrange arguments of a call with *args/**kwargs")
        new_args = [self._arg(out, positional, keyword) for out in edit.args]
        return call.with_changes(args=laid_out(call, new_args))

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
            equal = cst.AssignEqual(whitespace_before=ws(""), whitespace_after=ws(""))
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
        new_line = statement(self.speller.fill(edit.text))
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
                node = ClassEditor(node, self.speller).apply(edit)
            except Exception as error:  # noqa: BLE001
                raise EditError(plan_index, f"{type(error).__name__}: {error}") from error
            self.applied[plan_index] += 1
        return node


# ---------------------------------------------------------------------------
# Entry point.
# ---------------------------------------------------------------------------


@dataclass
class EditResult:
    text: str
    applied: list[int]  # indices of the plans that were applied
    failed: dict[int, str]  # plan index -> why it was skipped
    tree: ast.Module | None = None  # ast.parse(text), when the editor made it anyway


def apply_plans(
    text: str,
    plans: Sequence[EditPlan],
    style: ImportStyle,
    keep: frozenset[str] = frozenset(),
    layout: ImportLayout | None = None,
) -> EditResult:
    """Apply every plan that can be applied, all-or-nothing per plan; names that fixes
    introduce are spelled in ``style``; ``keep``: imported names other modules import
    from this one, whose imports stay however little this module uses them; ``layout``:
    where new imports go (the project's isort sections).

    A plan whose edit fails (node not found, bad argument index) is dropped and
    the rest re-applied from the original text, so no plan is half-applied.
    """
    failed: dict[int, str] = {}
    module = cst.parse_module(text)
    located: Located | None = None  # for every plan: good for any subset of them
    tree = ast.parse(text)
    while True:
        active = [i for i in range(len(plans)) if i not in failed]
        edits = [(i, e) for i in active for e in plans[i].edits]
        speller = Speller.for_tree(tree, style, [plans[i] for i in active])
        for _, edit in edits:  # explicit imports requested by rules
            wanted = requested_import(edit)
            if wanted is not None and wanted not in speller.needed:
                speller.needed.append(wanted)
        transformer = PlanTransformer(edits, speller)
        if located is None:
            located = transformer.locate(module)
        try:
            new_module = transformer.run(module, located)
        except EditError as error:
            failed[error.plan_index] = error.reason
            continue
        expected = Counter(i for i, e in edits if not isinstance(e, UNPLACED_EDITS))
        missing = [i for i in active if transformer.applied[i] < expected[i]]
        if missing:
            for i in missing:
                failed[i] = "the code this plan points at was not found (changed by another edit?)"
            continue
        new_text = new_module.code
        if new_text != text or speller.needed:
            new_text = fix_imports(text, new_text, speller.needed, keep, layout)
        return EditResult(new_text, active, failed)
