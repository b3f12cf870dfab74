"""A board's work graph: cards that come after others, and what can start now.

A card's ``blocked_by`` names cards of its board that it comes after. The rules, checked on
every change (:func:`taskloom.domain.board` runs them in its commit):

- an edge a change adds names a card of the board, not the card itself;
- the edges make no cycle: one is refused with the cycle named;
- a card starts (``in_progress``) only once every card it comes after is ``done``: a start
  before that is refused with the unfinished ones named;
- removing a card that others wait on (it is not done, they are not finished) is refused
  unless forced; a forced removal, and a whole-list write that leaves a card out, drop the
  edges to it.

A card is *ready* when it can start now: its status is ``todo`` or ``ready``, it waits for no
person's approval, and every card it comes after is done (:func:`readiness`).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from taskloom.domain.card import Card, CardStatus, waits_for_person
from taskloom.domain.errors import InvalidInput, InvariantViolation
from taskloom.domain.text import chain

STARTABLE = frozenset({CardStatus.TODO, CardStatus.READY})
"""The statuses a card starts from: not begun, not waiting for a person, not blocked."""
FINISHED = frozenset({CardStatus.DONE, CardStatus.REJECTED})
Find = Callable[[str], Card | None]
"""Looks a card of a board up by id."""


def named(card: Card) -> str:
    """A card as an error or a listing names it: its title and id."""
    return f"'{card.title}' ({card.id})"


def settle_edges(card: Card, old: Card | None, exists: Container[str]) -> Card:
    """``card`` with its edges to cards no longer on the board dropped. An edge the change
    adds must name a card of the board (``exists``), not the card itself."""
    if not card.blocked_by:
        return card
    had = old.blocked_by if old is not None else ()
    # A card the change makes is named by its title: the id it would have had is never stored.
    who = named(card) if old is not None else f"'{card.title}'"
    for target in card.blocked_by:
        if target in had:
            continue
        if target == card.id:
            raise InvalidInput(f"card {who} cannot come after itself")
        if target not in exists:
            raise InvalidInput(
                f"card {who} cannot come after '{target}': no card of this board has that id"
            )
    kept = tuple(t for t in card.blocked_by if t in exists)
    return card if kept == card.blocked_by else replace(card, blocked_by=kept)


def check(old: Card | None, card: Card, find: Find) -> None:
    """Refuse a change of ``card`` (``old`` before it) that makes a cycle or starts it before
    what it comes after; ``find`` looks cards of the changed board up by id."""
    if not card.blocked_by:
        return
    had = old.blocked_by if old is not None else ()
    for target in card.blocked_by:
        if target not in had:
            _check_no_cycle(find, card, target)
    if card.status is CardStatus.IN_PROGRESS and (
        old is None or old.status is not CardStatus.IN_PROGRESS
    ):
        waiting = waiting_on(find, card)
        if waiting:
            raise InvariantViolation(
                f"card {named(card)} cannot start yet: it comes after "
                + ", ".join(f"{named(c)}, {c.status.value}" for c in waiting)
                + "; finish those first"
            )


def _check_no_cycle(find: Find, card: Card, target: str) -> None:
    """Refuse the edge ``card`` after ``target`` if ``target`` already comes, through its own
    edges, after ``card``."""
    path = _path(find, target, card.id)
    if path is not None:
        cards = [c for c in map(find, (card.id, *path)) if c is not None]
        loop = chain([named(c) for c in cards], " after ")
        raise InvalidInput(f"that would make a cycle: {loop}; a card cannot wait on itself")


def _path(find: Find, start: str, goal: str) -> list[str] | None:
    """Ids from ``start`` to ``goal`` following ``blocked_by`` edges, or ``None``."""
    parents: dict[str, str | None] = {start: None}
    stack = [start]
    while stack:
        node = stack.pop()
        if node == goal:
            path = [node]
            while (parent := parents[path[-1]]) is not None:
                path.append(parent)
            return path[::-1]
        card = find(node)
        for nxt in card.blocked_by if card is not None else ():
            if nxt not in parents:
                parents[nxt] = node
                stack.append(nxt)
    return None


def check_removal(card: Card, waiters: Iterable[Card]) -> None:
    """Refuse to remove ``card`` while others (``waiters``: the cards that come after it)
    wait on it: it is not done and they are not finished."""
    if card.status is CardStatus.DONE:
        return
    waiting = [c for c in waiters if c.status not in FINISHED]
    if waiting:
        one = len(waiting) == 1
        verb, edges, them = (
            ("comes", "that edge", "the edge") if one else ("come", "those edges", "them")
        )
        raise InvariantViolation(
            f"card {named(card)} cannot be removed: "
            + ", ".join(named(c) for c in waiting)
            + f" {verb} after it. Remove {edges} first (`remove_blocked_by`), or remove it"
            f" with `force`, which drops {them}"
        )


def waiting_on(find: Find, card: Card) -> list[Card]:
    """The cards ``card`` comes after that are not done yet."""
    found = (find(i) for i in card.blocked_by)
    return [c for c in found if c is not None and c.status is not CardStatus.DONE]


def is_ready(card: Card, find: Find) -> bool:
    """Whether ``card`` can start now (see the module's docstring)."""
    return (
        card.status in STARTABLE
        and not waits_for_person(card)
        and not (card.blocked_by and waiting_on(find, card))
    )


@dataclass(frozen=True, slots=True)
class Readiness:
    """Whether a card can start now, and if not, why."""

    card: Card
    waiting_on: tuple[Card, ...] = ()
    awaiting_approval: bool = False

    @property
    def ready(self) -> bool:
        return self.card.status in STARTABLE and not self.waiting_on and not self.awaiting_approval

    def reasons(self) -> list[str]:
        """Why the card cannot start, one short phrase each."""
        card = self.card
        out = []
        if self.waiting_on:
            out.append(
                "waiting on " + ", ".join(f"{named(c)}, {c.status.value}" for c in self.waiting_on)
            )
        if self.awaiting_approval and card.status is CardStatus.AWAITING_APPROVAL:
            out.append("awaiting a person's approval")
        elif self.awaiting_approval:  # gated, yet where no one can decide on it
            out.append(
                "its plan needs a person's approval: move it to awaiting_approval for a decision"
            )
        if card.status is CardStatus.BLOCKED:
            note = " ".join((card.blocker or card.notes or "").split())
            out.append(f"blocked: {note}" if note else "blocked")
        if card.status is CardStatus.IN_PROGRESS:
            out.append("in progress")
        return out


def readiness(cards: Sequence[Card], find: Find) -> list[Readiness]:
    """Every unfinished card's readiness, in board order."""
    return [
        Readiness(card, tuple(waiting_on(find, card)), waits_for_person(card))
        for card in cards
        if card.status not in FINISHED
    ]


def brief(card: Card) -> dict[str, Any]:
    """A card as the ready view names it."""
    return {"id": card.id, "number": card.number, "title": card.title, "status": card.status.value}


def ready_view(
    thread_id: str, version: int, cards: Sequence[Card], find: Find, *, explain: bool = False
) -> dict[str, Any]:
    """What can start now (``ready``), the card in progress if any (only one may be), and with
    ``explain`` every other unfinished card with why it cannot start (``not_ready``); ``text``
    says the same as markdown."""
    views = readiness(cards, find)
    ready = [v.card for v in views if v.ready]
    working = next((c for c in cards if c.status is CardStatus.IN_PROGRESS), None)
    lines = [f"Ready to start ({len(ready)}):" if ready else "Nothing can start now."]
    lines += [f"- {c.title}  `({c.id})`" for c in ready]
    if working is not None and ready:
        lines.append(f"(only one card may be in progress: {named(working)} is; finish it first)")
    out: dict[str, Any] = {
        "thread_id": thread_id,
        "version": version,
        "ready": [brief(c) for c in ready],
        "in_progress": brief(working) if working is not None else None,
    }
    if explain:
        others = [v for v in views if not v.ready]
        out["not_ready"] = [
            {
                **brief(v.card),
                "waiting_on": [brief(c) for c in v.waiting_on],
                "awaiting_approval": v.awaiting_approval,
                "blocker": v.card.blocker if v.card.status is CardStatus.BLOCKED else None,
                "reasons": v.reasons(),
            }
            for v in others
        ]
        if others:
            lines.append(f"Not ready ({len(others)}):")
            lines += [
                f"- {v.card.title}  `({v.card.id})`: {'; '.join(v.reasons())}" for v in others
            ]
    out["text"] = "\n".join(lines)
    return out
