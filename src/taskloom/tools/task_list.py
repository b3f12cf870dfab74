"""Task list tools: ``TaskCreate``, ``TaskUpdate``, ``TaskGet`` and ``TaskList``, in the shapes
coding agents are trained on, over the same board (and events) as ``todo``.

A task is a card of the thread's board. Its id is the card's ``number`` as text ("1", "2",
…): short, given in the order tasks are made, kept by the card and never reused on its
board; a card's own id is taken too. ``blockedBy`` and ``blocks`` are the card's
``blocked_by`` edges (:mod:`taskloom.domain.graph`): a task starts once the tasks it is
blocked by are completed. Agents share one list by sharing one thread: the host binds the
same ``ToolContext.thread_id`` to each of them. Every write goes through the model's gate,
as ``todo``'s do: a plan that waits for a person stays theirs to approve.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from taskloom.domain.approval import advice_for_list_tools
from taskloom.domain.board import Board
from taskloom.domain.card import Card, CardPatch, CardStatus
from taskloom.domain.common import UNSET, Unset
from taskloom.domain.errors import InvariantViolation, NotFound
from taskloom.domain.text import shown_id
from taskloom.tools.board import status_change
from taskloom.tools.spec import (
    ADDS,
    READS,
    REPLACES,
    ToolArgs,
    ToolContext,
    ToolEnv,
    ToolResult,
    ToolSpec,
)

if TYPE_CHECKING:
    from taskloom.boards import BoardHandle

STATUS = {
    CardStatus.TODO: "pending",
    CardStatus.AWAITING_APPROVAL: "pending",
    CardStatus.READY: "pending",
    CardStatus.BLOCKED: "pending",
    CardStatus.REJECTED: "pending",
    CardStatus.IN_PROGRESS: "in_progress",
    CardStatus.DONE: "completed",
}
"""A card's status in the task vocabulary; a write of the same word keeps the card's own."""


def task_id(card: Card) -> str:
    """A card's task id: its number, as text."""
    return str(card.number) if card.number is not None else card.id


def _find(board: Board, wanted: str) -> Card:
    wanted = wanted.strip()
    card = None
    if wanted.isascii() and wanted.isdigit():
        card = next((c for c in board.cards if c.number == int(wanted)), None)
    card = card or board.find(wanted)
    if card is None:
        raise NotFound(
            f"task '{shown_id(wanted)}' not found (TaskList shows the tasks and their ids)"
        )
    return card


def _note(card: Card) -> str | None:
    """What a task's status does not say about its card."""
    if card.status is CardStatus.AWAITING_APPROVAL:
        return "awaiting a person's approval: a person starts it"
    if card.status is CardStatus.BLOCKED:
        return f"blocked: {card.blocker}" if card.blocker else "blocked"
    if card.status is CardStatus.REJECTED:
        return "rejected"
    return None


def _summary(board: Board, card: Card) -> dict[str, Any]:
    waiting = [b for b in map(board.find, card.blocked_by) if b and b.status is not CardStatus.DONE]
    out: dict[str, Any] = {
        "id": task_id(card),
        "subject": card.title,
        "status": STATUS[card.status],
    }
    if card.assigned_agent:
        out["owner"] = card.assigned_agent
    out["blockedBy"] = [task_id(b) for b in waiting]
    if note := _note(card):
        out["note"] = note
    return out


def _detail(board: Board, card: Card) -> dict[str, Any]:
    blocks = sorted(map(board.get, board.index.waiters.get(card.id, ())), key=lambda c: c.order)
    out: dict[str, Any] = {
        "id": task_id(card),
        "subject": card.title,
        "description": card.objective or "",
        "status": STATUS[card.status],
        "blocks": [task_id(c) for c in blocks],
        "blockedBy": [task_id(b) for b in map(board.find, card.blocked_by) if b],
    }
    for key, value in (
        ("activeForm", card.active_form),
        ("owner", card.assigned_agent),
        ("metadata", card.metadata),
        ("note", _note(card)),
    ):
        if value:
            out[key] = value
    return out


def _result(payload: dict[str, Any]) -> ToolResult:
    return ToolResult(content=json.dumps(payload, ensure_ascii=False), data=payload)


def _board(env: ToolEnv, ctx: ToolContext) -> BoardHandle:
    return env.host.board(ctx.thread_id or "").as_model(ctx.agent_id)


def _gated(write: Any) -> Any:
    """Run a write; a refusal of the model's gate keeps its reason, with advice these tools
    can follow (they cannot resubmit a plan for approval)."""
    try:
        return write()
    except InvariantViolation as exc:
        raise InvariantViolation(advice_for_list_tools(exc.message)) from None


class TaskCreateArgs(ToolArgs):
    subject: str = Field(min_length=1, description="A brief title, imperative: 'Run the tests'.")
    description: str = Field(description="What needs to be done, and how to tell it is.")
    activeForm: str | None = Field(
        None, description="Present continuous form shown while in progress: 'Running tests'."
    )
    metadata: dict[str, Any] | None = Field(None, description="Data to keep on the task.")


TASK_CREATE_DESCRIPTION = (
    "Create a task in the task list of THIS thread (shared with every agent on the thread, "
    "and shown live to people). Use it to plan work of 3+ steps; the new task is pending. "
    "Returns its id; set its order with TaskUpdate addBlockedBy / addBlocks."
)


def _create(env: ToolEnv, args: TaskCreateArgs, ctx: ToolContext) -> ToolResult:
    fields: dict[str, Any] = {"objective": args.description, "metadata": args.metadata}
    if args.activeForm is not None:
        fields["active_form"] = args.activeForm
    snap = _gated(lambda: _board(env, ctx).add(args.subject, **fields))
    card = snap["card"]
    number = card["number"] if card["number"] is not None else card["id"]
    return _result({"task": {"id": str(number), "subject": card["title"]}})


class TaskUpdateArgs(ToolArgs):
    taskId: str = Field(min_length=1, description="The task's id, as TaskList shows it.")
    status: Literal["pending", "in_progress", "completed", "deleted"] | None = Field(
        None, description="New status; deleted removes the task."
    )
    subject: str | None = Field(None, description="New title.")
    description: str | None = Field(None, description="New description.")
    activeForm: str | None = Field(None, description="New present continuous form.")
    addBlocks: list[str] | None = Field(
        None, description="Ids of tasks that cannot start until this one is completed."
    )
    addBlockedBy: list[str] | None = Field(
        None, description="Ids of tasks that must be completed before this one starts."
    )
    owner: str | None = Field(None, description="Agent the task belongs to ('' clears).")
    metadata: dict[str, Any] | None = Field(
        None, description="Keys to merge into the task's metadata (a null value removes one)."
    )


TASK_UPDATE_DESCRIPTION = (
    "Update a task of THIS thread's task list: its status, fields, or order. Keep ONE task "
    "in_progress; mark a task completed as soon as it is done."
)


def _update(env: ToolEnv, args: TaskUpdateArgs, ctx: ToolContext) -> ToolResult:
    handle = _board(env, ctx)
    board = handle.get()
    card = _find(board, args.taskId)
    if args.status == "deleted":  # those waiting on it no longer do
        _gated(lambda: handle.remove(card.id, force=True))
        return _result({"success": True, "taskId": task_id(card), "updatedFields": ["status"]})
    given = {k: v for k, v in args.model_dump(exclude={"taskId"}).items() if v is not None}
    after: dict[str, list[str]] = {card.id: [_find(board, t).id for t in args.addBlockedBy or ()]}
    for other in args.addBlocks or ():
        after.setdefault(_find(board, other).id, []).append(card.id)
    patches = {other: CardPatch(add_blocked_by=ids) for other, ids in after.items() if ids}
    patches[card.id] = CardPatch(
        title=args.subject if args.subject is not None else UNSET,
        objective=_given(args.description),
        active_form=_given(args.activeForm),
        assigned_agent=_given(args.owner),
        status=status_change(card, args.status, STATUS) if args.status else UNSET,
        metadata=_merged(card.metadata, args.metadata),
        add_blocked_by=after[card.id] or UNSET,
    )
    snap = _gated(lambda: handle.edit_many(patches))
    payload: dict[str, Any] = {"success": True, "taskId": task_id(card)}
    payload["updatedFields"] = sorted(given)
    new = next(c for c in snap["cards"] if c["id"] == card.id)
    if new["status"] != card.status.value:
        payload["statusChange"] = {
            "from": STATUS[card.status],
            "to": STATUS[CardStatus(new["status"])],
        }
    return _result(payload)


def _given(value: str | None) -> str | Unset | None:
    return UNSET if value is None else value


def _merged(
    old: Mapping[str, Any] | None, given: Mapping[str, Any] | None
) -> dict[str, Any] | Unset | None:
    """A task's metadata with ``given`` merged in: a key set to null is removed."""
    if given is None:
        return UNSET
    merged = {**(old or {}), **given}
    kept = {key: value for key, value in merged.items() if value is not None}
    return kept or None


class TaskGetArgs(ToolArgs):
    taskId: str = Field(min_length=1, description="The task's id, as TaskList shows it.")


TASK_GET_DESCRIPTION = (
    "Get one task of THIS thread's task list in full: subject, description, status, owner, "
    "metadata, and the tasks it blocks and is blocked by."
)


def _get(env: ToolEnv, args: TaskGetArgs, ctx: ToolContext) -> ToolResult:
    board = _board(env, ctx).get()
    return _result({"task": _detail(board, _find(board, args.taskId))})


class TaskListArgs(ToolArgs):
    pass


TASK_LIST_DESCRIPTION = (
    "List the tasks of THIS thread's task list: id, subject, status, owner and the "
    "unfinished tasks each is blocked by. A pending task with "
    "an empty blockedBy can start now; a `note` says when a person must act first."
)


def _list(env: ToolEnv, args: TaskListArgs, ctx: ToolContext) -> ToolResult:
    board = _board(env, ctx).get()
    return _result({"tasks": [_summary(board, c) for c in board.cards]})


TOOLS = (
    ToolSpec("TaskCreate", TASK_CREATE_DESCRIPTION, TaskCreateArgs, _create, effect=ADDS),
    ToolSpec("TaskUpdate", TASK_UPDATE_DESCRIPTION, TaskUpdateArgs, _update, effect=REPLACES),
    ToolSpec("TaskGet", TASK_GET_DESCRIPTION, TaskGetArgs, _get, effect=READS),
    ToolSpec("TaskList", TASK_LIST_DESCRIPTION, TaskListArgs, _list, effect=READS),
)
"""The task list tools."""
