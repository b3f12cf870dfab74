"""The model's gate on a board: what only a person may do to a plan.

A model approves nothing. It cannot move a card waiting for a person (``awaiting_approval``,
or ``approval_mode: required`` and not yet approved) to work, change what a person approved,
drop a card's approval requirement, nor bring a removed gated plan (waiting or approved) back
under its id or its title. Hosts (CLI, API, panel) are not gated: ``decide_plan`` is their way
to approve. The store runs :func:`model_change` on every write a model makes, in its transaction: it
refuses what only a person may do and remembers the gated plans the model removed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from operator import attrgetter

from taskloom.domain.board import MAX_RETIRED, Board, changes
from taskloom.domain.card import (
    APPROVED_STATUSES,
    ApprovalMode,
    Card,
    CardStatus,
    needs_a_person,
    waits_for_person,
)
from taskloom.domain.errors import InvariantViolation
from taskloom.domain.titles import title_key

_APPROVED_CONTENT = (
    "title",
    "objective",
    "plan",
    "acceptance_criteria",
    "allowed_tools",
    "assigned_agent",
)
"""What a person approves with a plan: a model changing any of it after approval would carry
the approval over to something the person never saw."""


def _changes_what_was_approved(old: Card, new: Card) -> bool:
    """An approved card (by a person: see ``_waits_for_person``) whose approved content a
    change alters, other than by resubmitting it (awaiting approval) or withdrawing it."""
    return (
        old.status in APPROVED_STATUSES
        and new.status not in (CardStatus.AWAITING_APPROVAL, CardStatus.REJECTED)
        and any(getattr(old, name) != getattr(new, name) for name in _APPROVED_CONTENT)
    )


_DECISION_STATUSES = (CardStatus.AWAITING_APPROVAL, CardStatus.REJECTED)
"""Where a person's decision on a plan stands: asked for, or given as a rejection."""

_RESUBMIT_CHANGE = (
    "Resubmit it with the change (status awaiting_approval) for a person to approve again"
)
_RESUBMIT_CARD = "Resubmit it for a person's approval (awaiting_approval) or remove it"
_KEEP_WAITING = "Keep it awaiting_approval and ask the user, or withdraw it with revise_plan"
_RESUBMIT_DECIDED = "Resubmit it (awaiting_approval) or remove it"
_RESUBMIT_TITLE = "Resubmit the plan itself (awaiting_approval) for a person to decide"
_RENAME_TWIN = "Give it a title of its own (op edit, with its id) or remove it"

_LIST_TOOL_ADVICE = {
    _RESUBMIT_CHANGE: "Keep its content as the person approved it; put other work in a new item",
    _RESUBMIT_CARD: "Send it with the status the list shows for it now (a person takes it from"
    " there, in the panel or with `taskloom board`), or leave it out, and go on with another task",
    _KEEP_WAITING: "Send it as pending (it keeps waiting) and ask the user to approve it in the"
    " panel, or leave it out of the list, and go on with another task",
    _RESUBMIT_DECIDED: "Send it with the status the list shows for it now (a person takes it"
    " from there, in the panel or with `taskloom board`), or leave it out, and go on with another"
    " task",
    _RENAME_TWIN: "Leave it out of the list, or send it under a title of its own, and go on"
    " with another task",
    _RESUBMIT_TITLE: "Only a person can bring that plan back or add another under its title"
    " (with `taskloom board add`): if it is on the list, send it as the list shows it"
    " (same content; same id, where items have ids); if not, leave it out, ask the user if it is"
    " still needed, and go on with another task",
}
"""The advice of each refusal for a tool whose statuses are pending, in_progress, completed
(and cancelled): it cannot send ``awaiting_approval`` nor call ``revise_plan``, so telling its
model to resubmit would leave it nothing to do but retry."""


def advice_for_list_tools(message: str) -> str:
    """``message`` with its advice made one a ``todo_write``/``todo_list`` model can follow.
    The refusal itself is the same: only what the model is told to do next changes."""
    for advice, instead in _LIST_TOOL_ADVICE.items():
        if message.endswith(advice):
            return message[: -len(advice)] + instead
    return message


def _lowers_its_gate(old: Card | None, new: Card) -> bool:
    """A change that drops or changes the approval_mode of a gated card (one awaiting
    approval counts as required, whatever its mode says): withdrawn with ``not_required``,
    it could then be finished with no one's approval."""
    return (
        old is not None
        and needs_a_person(old)
        and new.approval_mode is not ApprovalMode.REQUIRED
        and new.approval_mode != old.approval_mode
    )


def _check_model_card(old: Card | None, new: Card) -> None:
    if _lowers_its_gate(old, new):
        raise InvariantViolation(
            f"card '{new.id}' requires a person's approval; only a person can change "
            "its approval_mode"
        )
    required = old is not None and old.approval_mode is ApprovalMode.REQUIRED
    if required and old is not None and _changes_what_was_approved(old, new):
        raise InvariantViolation(
            f"card '{new.id}' has a plan a person approved; a model cannot change its title,"
            f" objective, plan, acceptance_criteria, allowed_tools or assigned_agent on its own."
            f" {_RESUBMIT_CHANGE}"
        )
    before = old if old is not None else dataclasses.replace(new, status=CardStatus.TODO)
    if not waits_for_person(before) or new.status is CardStatus.REJECTED:
        return
    if not waits_for_person(new):
        if before.status is CardStatus.REJECTED:
            raise InvariantViolation(
                f"card '{new.id}' was rejected; a model cannot start or finish it (status"
                f" '{new.status.value}' refused). {_RESUBMIT_CARD}"
            )
        raise InvariantViolation(
            f"card '{new.id}' is waiting for a person to approve its plan; a model cannot "
            f"approve or start it (status '{new.status.value}' refused). {_KEEP_WAITING}"
        )
    if before.status in _DECISION_STATUSES and new.status not in _DECISION_STATUSES:
        raise InvariantViolation(
            f"card '{new.id}' is {before.status.value.replace('_', ' ')}: a person decides"
            f" on its plan, so a model cannot move it to '{new.status.value}', where no one"
            f" could approve it. {_RESUBMIT_DECIDED}"
        )


def model_change(before: Board, after: Board) -> Board:
    """``after``, a model's change of ``before``, checked (:func:`check_model_change`) and
    with the gated plans it removes or renames remembered, so it cannot bring them back.
    Only a model's changes are remembered: a person's removal is theirs to make, and would
    fill the memory (and keep the model from a title) for nothing."""
    check_model_change(before, after)
    if after is before:
        return after
    gated, leaving = retiring(before, after)
    if not gated and not leaving:
        return after
    retired = (*after.retired_ids, *gated)[-MAX_RETIRED:]
    titles = after.retired_titles
    titles = (*(t for t in titles if t not in leaving), *leaving)[-MAX_RETIRED:]
    return after.evolve(retired_ids=retired, retired_titles=titles)


def retiring(before: Board, after: Board) -> tuple[list[str], list[str]]:
    """What a change from ``before`` to ``after`` retires: the ids of the gated cards it
    removes, and the titles (:func:`title_key`) of gated plans, waiting or approved, that
    leave the board, removed or renamed (otherwise a rename, then a removal, would free the
    plan's title, and an approved plan removed and added again as done would swap what a
    person approved)."""
    changed, removed = changes(before, after)
    gated = [i for i in removed if needs_a_person(before.get(i))]
    left = [*removed, *(c.id for c in changed)]
    titles = []
    for old in sorted(filter(None, map(before.find, left)), key=attrgetter("order")):
        new = after.find(old.id)
        if not needs_a_person(old):
            continue
        if new is None or title_key(new.title) != title_key(old.title):
            titles.append(title_key(old.title))
    return gated, titles


def check_model_change(before: Board, after: Board) -> None:
    """Refuse a model's write that does what only a person may: approve a plan, start or
    finish a card still waiting for approval, or drop a card's approval requirement.

    Hosts (CLI, API, panel) are not gated; ``decide_plan`` is their way to approve. A model may
    still withdraw a waiting card (rejected, ``revise_plan``) or remove it.
    """
    gated = before.index.gated
    retired = {i.casefold() for i in before.retired_ids}  # "STEP-1" is step-1 to a reader
    _check_room(before, after)
    for card in changes(before, after)[0]:
        previous = before.find(card.id)
        if previous is None and card.id.casefold() in retired:
            raise InvariantViolation(
                f"todo id '{card.id}' belonged to a plan that needed a person's approval and"
                " was removed: give new work a new id"
            )
        if previous is None or title_key(previous.title) != title_key(card.title):
            _check_title(before, card, gated)
        elif not needs_a_person(card):
            _check_twin(card, gated)
        _check_model_card(previous, card)


def _check_room(before: Board, after: Board) -> None:
    """The board remembers the last :data:`MAX_RETIRED` removed plans; a model removing more
    than fit would push the oldest out, and could then bring one back as its own (filling the
    memory with throw-away plans takes two calls). A person's removal retires nothing, and
    a person's clear forgets them all."""
    gated, waiting = retiring(before, after)
    over = len(before.retired_ids) + len(gated) > MAX_RETIRED
    if over or len(before.retired_titles) + len(waiting) > MAX_RETIRED:
        raise InvariantViolation(
            f"this board already remembers {MAX_RETIRED} removed plans that needed a person's"
            " approval: a model cannot remove more of them. Ask a person to remove it or to"
            " clear the board"
        )


def _check_twin(card: Card, gated: Mapping[str, str]) -> None:
    """A model may not change a plain card that shares a gated plan's title: with a twin made
    first, ``todo_write`` could drop the waiting plan and complete the twin under its title,
    and the board would show the plan a person was asked about as done."""
    key = title_key(card.title)
    if gated.get(key, card.id) != card.id:
        raise InvariantViolation(
            f"'{card.title}' ({card.id}) has the title of a plan that needs a person's approval"
            f" (card '{gated[key]}'): a model cannot change it while it could pass for that"
            f" plan. {_RENAME_TWIN}"
        )


def _check_title(before: Board, card: Card, gated: Mapping[str, str]) -> None:
    """A model's card, new or renamed, may not take, unless it waits for a person itself, the
    title of a gated plan (waiting for a person or approved by one; present or removed): the
    plan a person was asked about, or approved, would seem to be this one."""
    key = title_key(card.title)
    taken = gated.get(key, card.id) != card.id  # another gated card has this title
    if waits_for_person(card) or (not taken and key not in before.retired_titles):
        return
    which = f" (card '{gated[key]}')" if key in gated else ""
    raise InvariantViolation(
        f"'{card.title}' is the title of a plan that needs a person's approval{which}: a"
        f" model cannot add it again as '{card.status.value}' beside or instead of that plan."
        f" {_RESUBMIT_TITLE}"
    )
