"""Board tools: ``todo`` (the multiplexer), ``todo_write`` (Claude Code) and ``todo_list`` (Hermes).

The two compatibility tools exist for models trained on other harnesses; all three act on the
same board. Plan approval (``decide_plan``) is deliberately not a model op: a plan that needs
approval is approved by a person (CLI, API, web panel), not by the model that wrote it, and
every tool writes through ``BoardHandle.as_model()`` so no other op can do it either.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import BeforeValidator, ConfigDict, Field, StringConstraints
from pydantic_core import PydanticCustomError

from taskloom.domain.approval import advice_for_list_tools
from taskloom.domain.card import Card, CardPatch, CardStatus, naming_item, parse_status
from taskloom.domain.common import UNSET, Unset
from taskloom.domain.errors import InvalidInput, InvariantViolation, NotFound
from taskloom.domain.text import counted, shown_id
from taskloom.tools.spec import (
    REPLACES,
    Effect,
    ToolArgs,
    ToolContext,
    ToolEnv,
    ToolResult,
    ToolSpec,
)

if TYPE_CHECKING:
    from taskloom.boards import BoardHandle, Snapshot
    from taskloom.domain.board import Board

TodoOp = Literal[
    "add",
    "edit",
    "update_status",
    "revise_plan",
    "remove",
    "replace",
    "clear",
    "list",
    "ready",
]
TODO_OPS: tuple[str, ...] = get_args(TodoOp)

STATUS_HELP = "todo|awaiting_approval|ready|in_progress|blocked|done|rejected"
"""The statuses a model is told of; the other lists' words (pending, completed…) are read too."""


class CardFields(ToolArgs):
    objective: str | None = Field(None, description="Why.")
    plan: list[str] | None = Field(None, description="Steps.")
    assigned_agent: str | None = Field(None, description="Owner.")
    allowed_tools: list[str] | None = Field(None, description="Tools.")
    approval_mode: Literal["required", "not_required"] | None = Field(
        None, description="required: a person approves the plan."
    )
    acceptance_criteria: list[str] | None = Field(None, description="Done when.")
    evidence: list[str] | None = Field(None, description="Proof.")
    notes: str | None = Field(None, description="Notes.")
    blocker: str | None = Field(None, description="Why it is blocked.")
    active_form: str | None = Field(None, description="Label while in progress.")
    blocked_by: list[str] | None = Field(None, description="Ids of cards this one comes after.")


_SHOWN_IN_CARDS = ("id", "content", "status")


def _fields_said_once(schema: dict[str, Any]) -> None:
    """A replace card's schema shows its id, title and status; its other fields are named
    in its description, as ``todo``'s own arguments describe them: said again inside
    ``cards`` they cost a model's context as much as the rest of the schema. The card is
    still checked field by field, strictly."""
    props = schema.get("properties", {})
    schema["properties"] = {name: props[name] for name in _SHOWN_IN_CARDS}
    schema.pop("additionalProperties", None)
    schema["description"] = "A card: content, status, id, and any field add takes."


class ReplaceCard(CardFields):
    model_config = ConfigDict(json_schema_extra=_fields_said_once)

    id: str | None = Field(None, description="An existing card's id to keep; omit for a new one.")
    content: str = Field(description="Card title.")
    status: str | None = Field(None, description="Card status.")


_OP_MEANT = {
    "create": "use op 'add'",
    "new": "use op 'add'",
    "append": "use op 'add'",
    "update": "use op 'edit' or 'update_status'",
    "modify": "use op 'edit'",
    "change": "use op 'edit'",
    "set_status": "use op 'update_status'",
    "status": "use op 'update_status'",
    "move": "use op 'update_status'",
    "complete": "use op 'update_status'",
    "delete": "use op 'remove'",
    "del": "use op 'remove'",
    "rm": "use op 'remove'",
    "get": "use op 'list'",
    "read": "use op 'list'",
    "show": "use op 'list'",
    "view": "use op 'list'",
    "write": "use op 'replace'",
    "set": "use op 'replace'",
    "reset": "use op 'clear'",
    "decide_plan": "a person approves a plan, not the model: ask the user",
    "approve": "a person approves a plan, not the model: ask the user",
}
"""Ops models send that the tool does not have, and what to send instead."""


def _op_name(value: object) -> object:
    """An op as the tool names it: ``Add``, ``ADD``, ``updateStatus``, ``update-status`` and
    ``update status`` are ops the tool has, spelt otherwise. An op it does not have is
    refused with the op it has for it, if any, and the list of its ops."""
    if not isinstance(value, str):
        return value
    op = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", value.strip())
    op = re.sub(r"[\s-]+", "_", op).lower()
    if op in TODO_OPS:
        return op
    meant = _OP_MEANT.get(op)
    hint = f" ({meant})" if meant else ""
    raise PydanticCustomError(
        "unknown_op",
        "unknown op {op}{hint}; the ops are {ops}",
        {
            "op": json.dumps(shown_id(value), ensure_ascii=False),
            "hint": hint,
            "ops": ", ".join(TODO_OPS),
        },
    )


class TodoArgs(CardFields):
    op: Annotated[TodoOp, BeforeValidator(_op_name)] = Field(description="The operation.")
    id: str | None = Field(None, description="Card id.")
    content: str | None = Field(None, description="Card title.")
    status: str | None = Field(None, description=STATUS_HELP)
    cards: list[ReplaceCard] | None = Field(None, description="The whole new board (replace).")
    add_blocked_by: list[str] | None = Field(None, description="Ids to add.")
    remove_blocked_by: list[str] | None = Field(None, description="Ids to drop.")
    force: bool | None = Field(None, description="remove: also a card others wait on.")
    explain: bool | None = Field(None, description="Say why not.")


TODO_DESCRIPTION = (
    "This thread's plan, shown to people. For 3+ steps: a card per step, ONE in_progress,"
    " done when finished, blocked with a blocker if stuck. Ops: add · edit(id) ·"
    " update_status(id, status) · revise_plan · remove(id, force?) · replace(cards) · clear ·"
    ' list · ready(explain?). "" or [] clears a field. A card awaiting_approval or'
    " approval_mode required waits for a person: ask the user."
)


def render_board(snap: Snapshot) -> str:
    counts = ", ".join(
        f"{n:,} {status}" for status, n in snap["summary"].items() if n and status != "total"
    )
    head = f"Todo board (version {snap['version']}; {counted(snap['summary']['total'], 'card')}"
    head += f": {counts}" if counts else ""
    head += f"; {snap['ready_count']:,} can start now)" if counts else ")"
    return f"{head}\n{kept_note(snap)}{snap['markdown']}"


def kept_note(snap: Snapshot) -> str:
    """The lines that tell a model which cards its whole-list write kept, or ``""``."""
    left_out = [f"'{c['title']}' ({c['id']})" for c in snap.get("kept") or []]
    finished = [
        f"'{c['title']}' ({c['id']}) {c['status']}" for c in snap.get("kept_finished") or []
    ]
    return _kept_line(
        left_out, "added or changed", "left out", "Leave {them} out again to remove {them}"
    ) + _kept_line(
        finished, "finished", "would reopen", "Send {them} unfinished again to reopen {them}"
    )


def _kept_line(cards: list[str], how: str, why: str, undo: str) -> str:
    """One line of :func:`kept_note`: ``cards`` someone else ``how`` since the model's last
    write, which its list ``why``, and how to ``undo`` that."""
    if not cards:
        return ""
    them = "it" if len(cards) == 1 else "them"
    return (
        f"Kept {counted(len(cards), 'card')} {how} by someone else since your last write, which"
        f" your list {why}: {', '.join(cards)}. {undo.format(them=them)}.\n"
    )


def _board_result(snap: Snapshot) -> ToolResult:
    return ToolResult(content=render_board(snap), data=snap)


def _fields(args: CardFields) -> dict[str, Any]:
    """The card fields the model gave. An explicit null counts as not given: many models send
    every parameter, null when unused, and that must not wipe a card (`""`/`[]` clear)."""
    values = {name: getattr(args, name) for name in CardFields.model_fields}
    return {name: value for name, value in values.items() if value is not None}


def _need(value: str | None, op: str, name: str) -> str:
    if value is None or not value.strip():
        raise InvalidInput(f"op '{op}' needs `{name}`")
    return value


def _model_board(env: ToolEnv, ctx: ToolContext) -> BoardHandle:
    """The thread's board, gated so the model cannot approve its own plans."""
    return env.host.board(ctx.thread_id or "").as_model(ctx.agent_id)


_CARD = frozenset(CardFields.model_fields)
_OP_TAKES: dict[str, frozenset[str]] = {
    "list": frozenset(),
    "add": _CARD | {"content", "status"},
    "edit": _CARD | {"id", "content", "status", "add_blocked_by", "remove_blocked_by"},
    "update_status": frozenset({"id", "status", "blocker"}),
    "revise_plan": frozenset(),
    "remove": frozenset({"id", "force"}),
    "replace": frozenset({"cards"}),
    "clear": frozenset(),
    "ready": frozenset({"explain"}),
}
"""The arguments each op uses. Any other is refused, never ignored in silence: ignored,
evidence sent with ``update_status`` would be lost, and ``{"op": "clear", "id": …}`` (a
model that meant remove) would empty the board."""


def _check_takes(args: TodoArgs) -> None:
    """Refuse arguments the op does not use. Null and empty ones pass: many models send every
    parameter, empty when unused."""
    given = {name for name in type(args).model_fields if getattr(args, name) not in (None, "", [])}
    extra = sorted(given - {"op"} - _OP_TAKES[args.op])
    if extra:
        takes = ", ".join(f"`{n}`" for n in sorted(_OP_TAKES[args.op])) or "nothing else"
        hint = {
            "update_status": " (op 'edit' changes a card's other fields)",
            "add": " (the board assigns card ids)" if "id" in extra else "",
        }.get(args.op, "")
        raise InvalidInput(
            f"op '{args.op}' does not take {', '.join(f'`{n}`' for n in extra)}: it takes"
            f" {takes}{hint}"
        )


def _todo(env: ToolEnv, args: TodoArgs, ctx: ToolContext) -> ToolResult:
    _check_takes(args)
    try:
        if args.op == "ready":
            view = _model_board(env, ctx).ready(explain=bool(args.explain))
            return ToolResult(content=view["text"], data=view)
        return _board_result(_todo_op(_model_board(env, ctx), args))
    except NotFound as exc:  # an id the model made up, or one of a card removed since
        raise NotFound(f"{exc.message} (op 'list' shows the cards and their ids)") from None


def _todo_op(board: BoardHandle, args: TodoArgs) -> dict[str, Any]:
    fields = _fields(args)
    if args.status is not None:
        fields["status"] = parse_status(args.status)
    op = args.op
    if op == "list":
        snap = board.list()
    elif op == "add":
        snap = board.add(_need(args.content, op, "content"), **fields)
    elif op == "edit":
        if args.content is not None:
            fields["title"] = args.content
        for name in ("add_blocked_by", "remove_blocked_by"):
            if getattr(args, name) is not None:
                fields[name] = getattr(args, name)
        snap = board.edit(_need(args.id, op, "id"), **fields)
    elif op == "update_status":
        status = _need(args.status, op, "status")
        snap = board.update_status(
            _need(args.id, op, "id"), status, blocker=fields.get("blocker", UNSET)
        )
    elif op == "revise_plan":
        snap = board.revise_plan()
    elif op == "remove":
        snap = board.remove(_need(args.id, op, "id"), force=bool(args.force))
    elif op == "replace":
        if args.cards is None:
            raise InvalidInput("op 'replace' needs `cards` (use op 'clear' to empty the board)")
        snap = board.replace(
            [_replace_patch(c, n, len(args.cards)) for n, c in enumerate(args.cards, 1)]
        )
    else:
        snap = board.clear()
    return snap


def _replace_patch(card: ReplaceCard, n: int, count: int) -> CardPatch:
    """Item ``n`` of the ``count`` cards of a ``replace``."""
    with naming_item(n, count, card.content):
        status = parse_status(card.status) if card.status else CardStatus.TODO
    return CardPatch(id=card.id, title=card.content, status=status, **_fields(card))


# --- todo_write: Claude Code's TodoWrite shape --------------------------------------------------


class TodoWriteItem(ToolArgs):
    content: str = Field(min_length=1, description="Imperative form: 'Run the tests'.")
    status: Literal["pending", "in_progress", "completed"] = Field(description="Item status.")
    activeForm: str = Field(
        min_length=1, description="Present continuous form shown while running: 'Running tests'."
    )


class TodoWriteArgs(ToolArgs):
    todos: list[TodoWriteItem] = Field(description="The complete, updated todo list.")


TODO_WRITE_DESCRIPTION = (
    "Create and manage the structured task list for THIS thread (Claude Code TodoWrite shape). "
    "Send the FULL list on every call; it replaces the previous one. Keep exactly one item "
    "in_progress; mark items completed as soon as they are done. Use it for multi-step work; "
    "skip it for trivial requests."
)


_TODO_WRITE_STATUS = {
    CardStatus.TODO: "pending",
    CardStatus.AWAITING_APPROVAL: "pending",
    CardStatus.READY: "pending",
    CardStatus.BLOCKED: "pending",
    CardStatus.REJECTED: "pending",
    CardStatus.IN_PROGRESS: "in_progress",
    CardStatus.DONE: "completed",
}


def status_change(
    card: Card | None, status: str, vocabulary: Mapping[CardStatus, str]
) -> CardStatus | Unset:
    """A compatibility tool's status, or UNSET when it already describes the card.

    These vocabularies are coarser than the board's: resending an awaiting-approval, blocked
    or rejected card as "pending" must keep that status (and its blocker), not reset it.
    """
    if card is not None and vocabulary[card.status] == status:
        return UNSET
    return parse_status(status)


def _list_write(
    board: BoardHandle, patches: Callable[[Board], list[CardPatch]], *, prune: bool
) -> Snapshot:
    """A ``todo_write``/``todo_list`` write of the items ``patches`` makes from the board, in
    the write's own transaction. A refusal keeps its reason, with advice these tools can
    follow: they cannot resubmit a plan (``awaiting_approval``) nor withdraw it."""
    try:
        return board.upsert(patches, prune=prune)
    except InvariantViolation as exc:
        raise InvariantViolation(advice_for_list_tools(exc.message)) from None


def _todo_write_patches(todos: list[TodoWriteItem], current: Board) -> list[CardPatch]:
    """The items as patches of the cards of ``current`` their titles name."""
    unused = {c.id: " ".join(c.title.split()) for c in current.cards}
    patches = []
    for item in todos:
        title = " ".join(item.content.split())
        match = next((cid for cid, t in unused.items() if t == title), None)
        if match is not None:
            del unused[match]
        card = current.find(match) if match is not None else None
        patches.append(
            CardPatch(
                id=match,
                title=title,
                status=status_change(card, item.status, _TODO_WRITE_STATUS),
                active_form=item.activeForm,
            )
        )
    return patches


def _todo_write(env: ToolEnv, args: TodoWriteArgs, ctx: ToolContext) -> ToolResult:
    board = _model_board(env, ctx)
    snap = _list_write(board, lambda b: _todo_write_patches(args.todos, b), prune=True)
    return ToolResult(
        content="Todos have been modified successfully. Keep using the todo list to track "
        "progress, and proceed with the current task.\n" + render_board(snap),
        data=snap,
    )


# --- todo_list: Hermes Agent's todo tool --------------------------------------------------------

_HERMES_STATUS = {
    CardStatus.TODO: "pending",
    CardStatus.AWAITING_APPROVAL: "pending",
    CardStatus.READY: "pending",
    CardStatus.BLOCKED: "pending",
    CardStatus.IN_PROGRESS: "in_progress",
    CardStatus.DONE: "completed",
    CardStatus.REJECTED: "cancelled",
}


class HermesItem(ToolArgs):
    # Stripped before use, so "1" and "1 " are one id (a duplicate) and " " is no id at all.
    id: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)] = Field(
        description="Your id for the item, e.g. '1'."
    )
    content: str | None = Field(None, description="What to do.")
    status: Literal["pending", "in_progress", "completed", "cancelled"] | None = Field(
        None, description="Item status."
    )


class HermesArgs(ToolArgs):
    todos: list[HermesItem] | None = Field(
        None, description="Items to write; omit to read the current list."
    )
    merge: bool = Field(
        False,
        description="false: replace the whole list. true: update items by id and append new ones.",
    )


TODO_LIST_DESCRIPTION = (
    "Hermes-compatible task list for THIS thread. Call it with merge=true on every state "
    "change. List order is priority. "
    "Keep only ONE item in_progress; mark items completed immediately; cancel items that "
    "are no longer needed. Always returns the full current list."
)


def _todo_list(env: ToolEnv, args: HermesArgs, ctx: ToolContext) -> ToolResult:
    board = _model_board(env, ctx)
    if args.todos is None:
        snap = board.list()
    else:
        ids = [item.id for item in args.todos]
        repeated = next((i for n, i in enumerate(ids) if i in ids[:n]), None)
        if repeated is not None:  # which one was meant is anyone's guess: say so, as replace does
            raise InvariantViolation(f"duplicate todo id '{repeated}'")
        items = args.todos

        def patches(current: Board) -> list[CardPatch]:
            return [
                CardPatch(
                    id=item.id,
                    title=item.content if item.content and item.content.strip() else UNSET,
                    status=status_change(current.find(item.id), item.status, _HERMES_STATUS)
                    if item.status
                    else UNSET,
                )
                for item in items
            ]

        snap = _list_write(board, patches, prune=not args.merge)
    todos = [
        {"id": c["id"], "content": c["title"], "status": _HERMES_STATUS[CardStatus(c["status"])]}
        for c in snap["cards"]
    ]
    summary = {"total": len(todos)}
    for name in ("pending", "in_progress", "completed", "cancelled"):
        summary[name] = sum(1 for t in todos if t["status"] == name)
    payload: dict[str, Any] = {"todos": todos, "summary": summary}
    if snap.get("kept") or snap.get("kept_finished"):
        payload["note"] = kept_note(snap).strip()
    return ToolResult(content=json.dumps(payload, ensure_ascii=False), data=payload)


TOOLS = (
    ToolSpec("todo", TODO_DESCRIPTION, TodoArgs, _todo, effect=Effect(destructive=True)),
    ToolSpec("todo_write", TODO_WRITE_DESCRIPTION, TodoWriteArgs, _todo_write, effect=REPLACES),
    ToolSpec("todo_list", TODO_LIST_DESCRIPTION, HermesArgs, _todo_list, effect=REPLACES),
)
"""The board tools."""
