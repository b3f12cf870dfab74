"""The per-thread todo board: its cards (:mod:`taskloom.domain.card`), markdown rendering and
every board operation.

Each operation is a pure function ``(board, args, now[, new_id]) -> board`` that either returns
the next board or raises a :class:`~taskloom.domain.errors.TaskloomError`. The store runs it
inside one write transaction; nothing here reads a clock, a random source or a database.

Rules kept here:

- ids come from the injected ``new_id`` (uuids in production), never from a process counter;
- at most one card is ``in_progress``; breaking that is an error, never silently repaired;
- a card that is not ``blocked`` has no blocker (leaving ``blocked`` clears it);
- ``updated_at`` moves only on the cards that actually changed;
- ``replace`` drops empty-title cards *before* checking the invariant;
- card text must be storable on every backend (no NUL, no lone surrogates);
- a card's and a board's text are bounded (:mod:`taskloom.domain.limits`, :func:`check_sizes`);
- a model never approves a plan: :mod:`taskloom.domain.approval` gates the model's writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskloom.domain.card import (
    STATUS_VALUES,
    ApprovalMode,
    Card,
    CardPatch,
    CardStatus,
    apply_patch,
    clean_id,
    clean_text,
    clean_title,
    keeps_its_gate,
    parse_status,
    waits_if_gated,
)
from taskloom.domain.common import UNSET, Unset, iso, parse_iso
from taskloom.domain.errors import Conflict, InvalidInput, InvariantViolation, NotFound
from taskloom.domain.limits import MAX_BOARD_BYTES, MAX_CARD_BYTES, MAX_CARDS

BOARD_KIND = "board"
"""The kind of the stored document holding a thread's board (keyed by thread id)."""
MAX_RETIRED = 256
IdFactory = Callable[[], str]


@dataclass(frozen=True, slots=True)
class Board:
    """A thread's todo board: its cards in order, and its version."""

    thread_id: str
    cards: tuple[Card, ...] = ()
    version: int = 0
    updated_at: str | None = None
    retired_ids: tuple[str, ...] = ()
    """Ids of removed cards that needed a person's approval (the last :data:`MAX_RETIRED`):
    a model may not bring one back as a new card, which would look like the approved or
    waiting plan it replaced (see :mod:`taskloom.domain.approval`)."""
    retired_titles: tuple[str, ...] = ()
    """Titles (``title_key``) of removed or renamed gated cards (waiting for a person or
    approved by one): a whole-list write (``todo_write``) has no ids, so a plan dropped and
    sent again as ``done`` under its title would otherwise pass for the plan a person was
    asked about, or approved. Only a model's changes add to both (``model_change``): a
    person who removes a plan knows what they removed."""

    def find(self, card_id: str) -> Card | None:
        card_id = card_id.strip()
        return next((c for c in self.cards if c.id == card_id), None)

    def get(self, card_id: str) -> Card:
        card = self.find(card_id)
        if card is None:
            raise NotFound(f"todo id '{card_id}' not found")
        return card

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUS_VALUES, 0)
        for card in self.cards:
            counts[card.status] += 1
        counts["total"] = len(self.cards)
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "version": self.version,
            "updated_at": self.updated_at,
            "cards": [c.to_dict() for c in self.cards],
            **({"retired_ids": list(self.retired_ids)} if self.retired_ids else {}),
            **({"retired_titles": list(self.retired_titles)} if self.retired_titles else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Board:
        return cls(
            thread_id=data["thread_id"],
            cards=tuple(Card.from_dict(c) for c in data.get("cards", ())),
            version=int(data.get("version", 0)),
            updated_at=data.get("updated_at"),
            retired_ids=tuple(data.get("retired_ids", ())),
            retired_titles=tuple(data.get("retired_titles", ())),
        )


def check_single_in_progress(cards: Iterable[Card], before: Board | None = None) -> None:
    """At most one card in progress. The error names the card that already was (the one
    in progress on ``before``), so the model can finish or park it without listing first."""
    working = [c for c in cards if c.status is CardStatus.IN_PROGRESS]
    if len(working) > 1:
        was = {c.id for c in before.cards if c.status is CardStatus.IN_PROGRESS} if before else ()
        first = next((c for c in working if c.id in was), working[0])
        raise InvariantViolation(
            f"only one todo may be `in_progress` at a time (got {len(working)}): '{first.title}'"
            f" ({first.id}) is in progress already; mark it done, blocked or todo first"
        )


def check_sizes(before: Mapping[str, Card], cards: Sequence[Card]) -> None:
    """Refuse a change that makes a card or the board hold more text than it may. A card or
    a board already over a limit (stored before it existed, or by an older version) may still
    shrink or stay as it is: only growth past the limit is refused."""
    total = 0
    for card in cards:
        size = card.text_size()
        total += size
        old = before.get(card.id)
        if size > MAX_CARD_BYTES and old is not card and (old is None or size > old.text_size()):
            shown = card.title if len(card.title) <= 60 else card.title[:57] + "..."
            raise InvalidInput(
                f"card '{shown}' would hold {size} bytes of text, more than the"
                f" {MAX_CARD_BYTES} (64 KiB) a card may hold across its fields: shorten its"
                " notes, plan, acceptance criteria or evidence (keep long output in a file and"
                " cite its path), or split the work into several cards"
            )
    if total > MAX_BOARD_BYTES and total > sum(c.text_size() for c in before.values()):
        raise InvalidInput(
            f"the board would hold {total} bytes of card text, more than the"
            f" {MAX_BOARD_BYTES} (1 MiB) a board may hold (every operation returns the whole"
            " board): shorten long notes or evidence, or remove cards that are done"
        )


def _commit(board: Board, cards: Sequence[Card], now: datetime) -> Board:
    """Check invariants, renumber, and stamp only the cards whose content changed."""
    if len(cards) > max(MAX_CARDS, len(board.cards)):  # a board already over it may shrink
        raise InvalidInput(f"a board holds at most {MAX_CARDS} cards")
    check_single_in_progress(cards, board)
    seen: set[str] = set()
    for card in cards:
        if card.id in seen:
            raise InvariantViolation(f"duplicate todo id '{card.id}'")
        seen.add(card.id)
    stamp = iso(now)
    before = {c.id: c for c in board.cards}
    out: list[Card] = []
    changed = len(cards) != len(board.cards)
    for index, card in enumerate(cards):
        old = before.get(card.id)
        if old is card and card.order == index:
            out.append(card)
            continue
        if old is None:
            card = dataclasses.replace(
                waits_if_gated(card), order=index, created_at=stamp, updated_at=stamp
            )
            changed = True
        elif old.same_content(card):
            card = dataclasses.replace(
                card, order=index, created_at=old.created_at, updated_at=old.updated_at
            )
            changed = changed or old.order != index
        else:
            card = dataclasses.replace(
                keeps_its_gate(old, card),
                order=index,
                created_at=old.created_at,
                updated_at=_later(stamp, old.updated_at),
            )
            changed = True
        out.append(card)
    if not changed:
        return board
    check_sizes(before, out)
    return dataclasses.replace(board, cards=tuple(out), updated_at=stamp)


def _later(stamp: str, before: str) -> str:
    """``stamp``, or a millisecond after ``before`` when that is not earlier: a card's
    ``updated_at`` changes with every change of the card, even two in one millisecond. A
    person's decision names the version it saw by it (``decide_plan(seen=…)``), so a model's
    edit landing in the same millisecond as the plan it replaces never passes for that plan."""
    if before and stamp <= before:
        return iso(parse_iso(before) + timedelta(milliseconds=1))
    return stamp


def _index(board: Board, card_id: str) -> int:
    card_id = card_id.strip()
    for i, card in enumerate(board.cards):
        if card.id == card_id:
            return i
    raise NotFound(f"todo id '{card_id}' not found")


def _with_card(board: Board, index: int, card: Card) -> list[Card]:
    cards = list(board.cards)
    cards[index] = card
    return cards


# --- operations -------------------------------------------------------------------------------


def add(
    board: Board,
    title: str,
    patch: CardPatch | None = None,
    *,
    now: datetime,
    new_id: IdFactory,
) -> tuple[Board, Card]:
    card = apply_patch(Card(id=new_id(), title=clean_title(title)), patch or CardPatch())
    new = _commit(board, [*board.cards, card], now)
    return new, new.cards[-1]


def edit(board: Board, card_id: str, patch: CardPatch, *, now: datetime) -> Board:
    if not isinstance(patch.id, Unset) and patch.id != card_id:
        raise InvalidInput("a card's id cannot be changed")
    i = _index(board, card_id)
    return _commit(board, _with_card(board, i, apply_patch(board.cards[i], patch)), now)


def update_status(
    board: Board,
    card_id: str,
    status: str | CardStatus,
    *,
    now: datetime,
    blocker: str | Unset | None = UNSET,
) -> Board:
    return edit(board, card_id, CardPatch(status=status, blocker=blocker), now=now)


def decide_plan(
    board: Board, card_id: str, approve: bool, *, now: datetime, seen: str | None = None
) -> Board:
    """A person's decision on a plan awaiting approval. ``seen``: the card's ``updated_at``
    as the person saw it; if the card changed since (the model may still edit a waiting
    plan), the decision is refused, so no one approves a plan they were not shown. Either
    way the card stays a person's to approve from then on (``approval_mode`` required): an
    approved card whose mode is unset could be rewritten by the model and marked done."""
    i = _index(board, card_id)
    card = board.cards[i]
    if card.status is not CardStatus.AWAITING_APPROVAL:
        raise InvariantViolation(
            f"card '{card.id}' is not awaiting approval (status: {card.status.value})"
        )
    if seen is not None and seen != card.updated_at:
        raise Conflict(
            f"'{card.title}' ({card.id}) changed since it was shown (updated"
            f" {card.updated_at}): look at its plan again before deciding"
        )
    target = CardStatus.READY if approve else CardStatus.REJECTED
    decided = dataclasses.replace(card, status=target, approval_mode=ApprovalMode.REQUIRED)
    return _commit(board, _with_card(board, i, decided), now)


def revise_plan(board: Board, *, now: datetime) -> Board:
    """Reject every card awaiting approval (the plan goes back to the model). No-op if none."""
    cards = [
        dataclasses.replace(c, status=CardStatus.REJECTED)
        if c.status is CardStatus.AWAITING_APPROVAL
        else c
        for c in board.cards
    ]
    return _commit(board, cards, now)


def remove(board: Board, card_id: str, *, now: datetime) -> Board:
    i = _index(board, card_id)
    return _commit(board, [c for j, c in enumerate(board.cards) if j != i], now)


def replace(board: Board, items: Sequence[CardPatch], *, now: datetime, new_id: IdFactory) -> Board:
    """Make the board exactly ``items``. Items with an empty title are dropped first."""
    before = {c.id: c for c in board.cards}
    cards: list[Card] = []
    for item in items:
        title = "" if isinstance(item.title, Unset) else " ".join(item.title.split())
        if not title:
            continue
        card_id = clean_id(item.id) or new_id()
        base = Card(id=card_id, title=title)
        old = before.get(card_id)
        if old is not None:  # what an item cannot give, or need not repeat, is kept
            base = dataclasses.replace(
                base,
                source_metadata=old.source_metadata,
                session_thread_id=old.session_thread_id,
                approval_mode=old.approval_mode,
            )
        cards.append(apply_patch(base, item))
    return _commit(board, cards, now)


def upsert(
    board: Board,
    items: Sequence[CardPatch],
    *,
    prune: bool,
    now: datetime,
    new_id: IdFactory,
) -> Board:
    """Patch the cards named by ``items`` in place and append the rest as new cards.

    An item names an existing card by ``id``. With ``prune`` the board keeps only the named
    cards, in the order given (a whole-list write such as TodoWrite); without it, cards not
    named stay where they are (a merge). Untouched fields of an existing card are kept.
    """
    by_id = {c.id: c for c in board.cards}
    named: dict[str, Card] = {}
    order: list[str] = []
    for item in items:
        given = clean_id(item.id)
        old = named.get(given) if given else None
        old = old or (by_id.get(given) if given else None)
        if old is None:
            if isinstance(item.title, Unset):
                raise InvalidInput(f"todo '{given}' is new and needs content")
            old = Card(id=given or new_id(), title=clean_title(item.title))
        card = apply_patch(old, dataclasses.replace(item, id=UNSET))
        if card.id not in named:
            order.append(card.id)
        named[card.id] = card
    if prune:
        cards = [named[i] for i in order]
    else:
        cards = [named.pop(c.id, c) for c in board.cards]
        cards.extend(named[i] for i in order if i in named)
    return _commit(board, cards, now)


def clear(board: Board, *, now: datetime, forget_removed: bool = False) -> Board:
    """Remove every card. ``forget_removed`` (a person's clear, never a model's) also drops
    the memory of removed plans (``retired_ids``, ``retired_titles``): a fresh start."""
    cleared = _commit(board, [], now)
    if forget_removed and (cleared.retired_ids or cleared.retired_titles):
        stamp = iso(now)
        cleared = dataclasses.replace(cleared, retired_ids=(), retired_titles=(), updated_at=stamp)
    return cleared


def claim_card(
    board: Board,
    card_id: str,
    expected: Collection[str | CardStatus] | str | CardStatus,
    target: str | CardStatus,
    *,
    now: datetime,
) -> tuple[Board, Card]:
    """Compare-and-set on a card's status: move it to ``target`` only if it is in ``expected``
    (a list of statuses, or one status: a lone ``"todo"`` is one status, not four letters)."""
    if isinstance(expected, str):
        expected = [expected]
    elif not isinstance(expected, Collection):
        raise InvalidInput(
            f"claim_card: expected must be a status or a list of statuses, not"
            f" {type(expected).__name__}"
        )
    allowed = [parse_status(s) for s in expected]
    goal = parse_status(target)
    try:
        i = _index(board, card_id)
    except NotFound:
        raise NotFound(f"claim_card: card '{card_id}' not found on board") from None
    card = board.cards[i]
    if card.status not in allowed:
        names = ", ".join(s.value for s in allowed)
        raise InvariantViolation(
            f"claim_card: card '{card.id}' status is '{card.status.value}', "
            f"expected one of [{names}]; claim rejected"
        )
    new = _commit(board, _with_card(board, i, apply_patch(card, CardPatch(status=goal))), now)
    return new, new.cards[i]


def set_session_thread(
    board: Board, card_id: str, session_thread_id: str | None, *, now: datetime
) -> Board:
    i = _index(board, card_id)
    thread = clean_text(session_thread_id, "session_thread_id")
    card = dataclasses.replace(board.cards[i], session_thread_id=thread)
    return _commit(board, _with_card(board, i, card), now)


# --- rendering --------------------------------------------------------------------------------


def render_markdown(board: Board) -> str:
    """The board as a markdown checklist, one card per item, details indented under it."""
    if not board.cards:
        return "_No todos yet._"
    lines: list[str] = []
    for card in board.cards:
        lines.extend(card.markdown_lines())
    return "\n".join(lines).rstrip()


def snapshot(board: Board) -> dict[str, Any]:
    """What every board operation returns and what a ``todo_state`` event carries."""
    return {
        "thread_id": board.thread_id,
        "version": board.version,
        "updated_at": board.updated_at,
        "cards": [c.to_dict() for c in board.cards],
        "markdown": render_markdown(board),
        "summary": board.summary(),
    }
