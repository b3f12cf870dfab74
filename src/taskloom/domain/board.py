"""The per-thread todo board: its cards (:mod:`taskloom.domain.card`) and every board
operation (what a board shows is :mod:`taskloom.domain.board_view`).

Each operation is a pure function ``(board, args, now[, new_id]) -> board`` that either returns
the next board or raises a :class:`~taskloom.domain.errors.TaskloomError`. The store runs it
inside one write transaction; nothing here reads a clock, a random source or a database.

Rules kept here:

- ids come from the injected ``new_id`` (uuids in production), never from a process counter;
- at most one card is ``in_progress``; breaking that is an error, never silently repaired;
- a card that is not ``blocked`` has no blocker (leaving ``blocked`` clears it, and a
  blocker given with another status is refused);
- ``updated_at`` moves only on the cards that actually changed;
- whole-list writes are :mod:`taskloom.domain.whole_list`'s;
- card text must be storable on every backend (no NUL, no lone surrogates);
- a card's and a board's text are bounded (:mod:`taskloom.domain.limits`);
- a model never approves a plan: :mod:`taskloom.domain.approval` gates the model's writes;
- cards come after others (``blocked_by``) by the rules of :mod:`taskloom.domain.graph`;
- each new card gets the board's next ``number`` (never reused), and a card's ``order`` (its
  sort key) moves only when cards are reordered, so a change touches only the cards it
  changes (:func:`changes`).
"""

from __future__ import annotations

import bisect
import dataclasses
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from operator import attrgetter
from typing import Any

from taskloom.domain import graph, index
from taskloom.domain.card import (
    ApprovalMode,
    Card,
    CardPatch,
    CardStatus,
    apply_patch,
    clean_text,
    clean_title,
    keeps_its_gate,
    parse_status,
    waits_if_gated,
)
from taskloom.domain.common import UNSET, Unset, iso, parse_iso
from taskloom.domain.errors import Conflict, InvalidInput, InvariantViolation, NotFound
from taskloom.domain.index import BoardIndex
from taskloom.domain.limits import check_board_size, check_card_count, check_card_size
from taskloom.domain.text import shown_id

MAX_RETIRED = 256
MAX_AGENT_MARKS = 64
IdFactory = Callable[[], str]


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Board:
    """A thread's todo board: its cards in order, and its version.

    A board keeps, beside its fields, its cards by id, their sort keys in order, its
    :class:`BoardIndex`, and (when an operation made it) the board it was made from and the
    ids of the cards that operation touched, so what a change checks, shows and stores costs
    what it changed, not the size of the board."""

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
    next_number: int = 1
    """The ``number`` the next new card gets."""
    shown_to_model: int = 0
    """The ``next_number`` a model's last write showed it: cards numbered from it on were
    made since, by another writer (:mod:`taskloom.domain.whole_list`). The mark of a model
    its host names no agent for."""
    shown_at: str = ""
    """The latest card ``updated_at`` that write showed it: a card changed later was changed
    since, by another writer (``""``: not known, only new cards count)."""
    shown_to_agents: tuple[tuple[str, int, str], ...] = ()
    """The same marks for each model its host names (``ToolContext.agent_id``), the last
    :data:`MAX_AGENT_MARKS`: two models on one thread each keep the cards the other made."""
    _by_id: dict[str, Card] | None = field(default=None, init=False, compare=False, repr=False)
    _orders: list[int] | None = field(default=None, init=False, compare=False, repr=False)
    _index: BoardIndex | None = field(default=None, init=False, compare=False, repr=False)
    _base: weakref.ref[Board] | None = field(default=None, init=False, compare=False, repr=False)
    _touched: frozenset[str] = field(default=frozenset(), init=False, compare=False, repr=False)

    @property
    def by_id(self) -> Mapping[str, Card]:
        """The cards by id."""
        if self._by_id is None:
            ids = map(attrgetter("id"), self.cards)
            object.__setattr__(self, "_by_id", dict(zip(ids, self.cards, strict=True)))
        assert self._by_id is not None
        return self._by_id

    @property
    def orders(self) -> Sequence[int]:
        """The cards' sort keys, in board order (increasing)."""
        if self._orders is None:
            object.__setattr__(self, "_orders", list(map(attrgetter("order"), self.cards)))
        assert self._orders is not None
        return self._orders

    def place(self, card_id: str) -> int | None:
        """The card's place on the board (``None``: no such card): found by its sort key, or
        one by one on a board whose keys do not increase (one built by hand)."""
        card = self.find(card_id)
        if card is None:
            return None
        i = bisect.bisect_left(self.orders, card.order)
        if i < len(self.cards) and self.cards[i] is card:
            return i
        return next(i for i, c in enumerate(self.cards) if c is card)

    @property
    def index(self) -> BoardIndex:
        """The board's :class:`BoardIndex`, built on first use."""
        if self._index is None:
            object.__setattr__(self, "_index", index.build(self.cards, self.find))
        assert self._index is not None
        return self._index

    def evolve(self, **fields: Any) -> Board:
        """This board with other values of fields beside its cards, keeping what it knows
        of its cards and of the change that made it."""
        if "cards" in fields:
            raise ValueError("evolve keeps the cards: make a board of other cards with commit")
        new = dataclasses.replace(self, **fields)
        for name in ("_by_id", "_orders", "_index", "_base", "_touched"):
            object.__setattr__(new, name, getattr(self, name))
        return new

    def find(self, card_id: str) -> Card | None:
        """The card of ``card_id``, also as the markdown shows it: `` `(id)` ``."""
        if not isinstance(card_id, str):
            raise InvalidInput(f"a todo id is text, not {type(card_id).__name__}")
        key = card_id.strip()
        return self.by_id.get(key) or self.by_id.get(key.strip("`()").strip())

    def shown_to(self, agent: str | None) -> tuple[int, str]:
        """The marks of the model ``agent`` (``None``: the one its host names no agent for):
        a card numbered from the first was made since its last write, and one updated after
        the second was changed since."""
        if agent is None:
            return self.shown_to_model, self.shown_at
        return next(((n, at) for a, n, at in self.shown_to_agents if a == agent), (0, ""))

    def marks_now(self) -> tuple[int, str]:
        """The marks a model's write shows it: the next number and the latest change."""
        return self.next_number, max((c.updated_at for c in self.cards), default="")

    def mark_shown(self, agent: str | None) -> Board:
        """This board, recorded as shown whole to the model ``agent``."""
        number, at = self.marks_now()
        if agent is None:
            return self.evolve(shown_to_model=number, shown_at=at)
        marks = [m for m in self.shown_to_agents if m[0] != agent]
        marks = [*marks[-(MAX_AGENT_MARKS - 1) :], (agent, number, at)]
        return self.evolve(shown_to_agents=tuple(marks))

    def get(self, card_id: str) -> Card:
        card = self.find(card_id)
        if card is None:
            raise NotFound(f"todo id '{shown_id(card_id)}' not found")
        return card

    def summary(self) -> dict[str, int]:
        counts = {s.value: n for s, n in self.index.counts.items()}
        counts["total"] = len(self.cards)
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "version": self.version,
            "updated_at": self.updated_at,
            "cards": list(self.index.dicts),
            **self.memory(),
        }

    def memory(self) -> dict[str, Any]:
        """What the board keeps beside its cards: the next card number and the removed gated
        plans a model may not bring back."""
        kept = {"retired_ids": self.retired_ids, "retired_titles": self.retired_titles}
        agents = {a: [n, at] for a, n, at in self.shown_to_agents}
        return {
            "next_number": self.next_number,
            "shown_to_model": self.shown_to_model,
            **({"shown_at": self.shown_at} if self.shown_at else {}),
            **({"shown_to_agents": agents} if agents else {}),
            **{key: list(values) for key, values in kept.items() if values},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], cards: Sequence[Card] | None = None) -> Board:
        """A board from :meth:`to_dict` (or from its memory, with ``cards`` given)."""
        if cards is None:
            cards = [Card.from_dict(c) for c in data.get("cards", ())]
        return cls(
            thread_id=data["thread_id"],
            cards=tuple(cards),
            version=int(data.get("version", 0)),
            updated_at=data.get("updated_at"),
            retired_ids=tuple(data.get("retired_ids", ())),
            retired_titles=tuple(data.get("retired_titles", ())),
            next_number=int(data.get("next_number", 1)),
            shown_to_model=int(data.get("shown_to_model", 0)),
            shown_at=str(data.get("shown_at") or ""),
            shown_to_agents=tuple(
                (str(a), int(m[0]), str(m[1] or ""))
                for a, m in dict(data.get("shown_to_agents") or {}).items()
            ),
        )


def _check_one_in_progress(new: Board, before: Board) -> None:
    """At most one card in progress. The error names the card that already was (the one
    in progress on ``before``), so the model can finish or park it without listing first."""
    working = new.index.working
    if len(working) > 1:
        was = before.index.working
        first = new.get(next((w for w in working if w in was), working[0]))
        raise InvariantViolation(
            f"only one todo may be `in_progress` at a time (got {len(working)}): '{first.title}'"
            f" ({first.id}) is in progress already; mark it done, blocked or todo first"
        )


def commit(board: Board, cards: Sequence[Card], now: datetime) -> Board:
    """The board of ``cards``, any cards in any order, checked (see :func:`_settle`)."""
    check_card_count(len(cards), len(board.cards), board.index.finished)
    by_id = dict(zip(map(attrgetter("id"), cards), cards, strict=True))
    if len(by_id) < len(cards):
        seen: set[str] = set()
        twice = next(c.id for c in cards if c.id in seen or seen.add(c.id))  # type: ignore[func-returns-value]
        raise InvariantViolation(f"duplicate todo id '{twice}'")
    gone = [c.id for c in board.cards if c.id not in by_id]
    orders = _orders(board, cards)
    return _settle(board, list(cards), by_id, orders, range(len(cards)), gone, now)


def _apply(
    board: Board,
    now: datetime,
    *,
    put: Sequence[Card] = (),
    append: Card | None = None,
    drop: str | None = None,
) -> Board:
    """The board with the cards ``put`` in the places of the cards with their ids, ``append``
    added at the end and the card ``drop`` removed: a change of a few cards, which costs
    what it changes (see :func:`_settle`)."""
    cards, by_id, orders = list(board.cards), dict(board.by_id), list(board.orders)
    places = set()
    gone = []
    for card in put:
        i = _index(board, card.id)
        cards[i] = by_id[card.id] = card
        places.add(i)
    if drop is not None:
        i = _index(board, drop)
        del cards[i], orders[i], by_id[drop]
        gone.append(drop)
        places = {p - (p > i) for p in places}
        for waiter in board.index.waiters.get(drop, ()):  # their edges to it go too
            w = _index(board, waiter)
            places.add(w - (w > i))
    if append is not None:
        if append.id in by_id:
            raise InvariantViolation(f"duplicate todo id '{append.id}'")
        check_card_count(len(cards) + 1, len(board.cards), board.index.finished)
        orders.append(orders[-1] + 1 if orders else 0)
        places.add(len(cards))
        cards.append(append)
        by_id[append.id] = append
    return _settle(board, cards, by_id, orders, places, gone, now, fast=True)


def _settle(
    board: Board,
    cards: list[Card],
    by_id: dict[str, Card],
    orders: list[int],
    places: Iterable[int],
    gone: Sequence[str],
    now: datetime,
    *,
    fast: bool = False,
) -> Board:
    """Check invariants, place and number new cards, and stamp only the cards whose content
    changed; a card whose content and place are unchanged stays the same object.

    ``cards`` is the next board's, ``by_id`` them by id and ``orders`` their sort keys;
    ``places``: where the cards are that the op may have made or changed; ``gone``: the ids
    it removed. With ``fast``, the op kept every other card in its order, and the next
    board's index is brought up to date from the cards it touched."""
    stamp = iso(now)
    number = board.next_number
    touched = set(gone)
    changed = bool(gone) or len(cards) != len(board.cards)
    for i in sorted(places):
        card = cards[i]
        old = board.find(card.id)
        touched.add(card.id)
        card = graph.settle_edges(card, old, by_id)
        if old is None:
            card = dataclasses.replace(
                waits_if_gated(card),
                order=orders[i],
                number=number,
                created_at=stamp,
                updated_at=stamp,
            )
            number += 1
        elif old is card or old.same_content(card):
            card = old if old.order == orders[i] else dataclasses.replace(old, order=orders[i])
        else:
            card = dataclasses.replace(
                keeps_its_gate(old, card),
                order=orders[i],
                number=old.number,
                created_at=old.created_at,
                updated_at=_later(stamp, old.updated_at),
            )
        changed = changed or card is not old
        cards[i] = by_id[card.id] = card
    if not changed:
        return board
    new = dataclasses.replace(board, cards=tuple(cards), updated_at=stamp, next_number=number)
    object.__setattr__(new, "_by_id", by_id)
    object.__setattr__(new, "_orders", orders)
    object.__setattr__(new, "_base", weakref.ref(board))
    object.__setattr__(new, "_touched", frozenset(touched))
    if fast:
        object.__setattr__(new, "_index", index.advance(board.index, board, new, touched))
    _check_one_in_progress(new, board)
    for card_id in touched:
        made = new.find(card_id)
        if made is not None:
            old = board.find(card_id)
            if old is not made:
                check_card_size(made.title, made.text_size(), old.text_size() if old else None)
            graph.check(old, made, new.find)
    check_board_size(new.index.text, board.index.text)
    return new


def _orders(board: Board, cards: Sequence[Card]) -> list[int]:
    """The sort key of each card of ``cards``: a card already on the board keeps its own and
    a new one takes the next after the card before it, while that keeps them increasing;
    otherwise (the cards were reordered) they are numbered again from 0."""
    keys: list[int] = []
    last = -1
    for card in cards:
        old = board.find(card.id)
        if old is None:
            last += 1
        elif old.order > last:
            last = old.order
        else:
            return list(range(len(cards)))
        keys.append(last)
    return keys


def _later(stamp: str, before: str) -> str:
    """``stamp``, or a millisecond after ``before`` when that is not earlier: a card's
    ``updated_at`` changes with every change of the card, even two in one millisecond. A
    person's decision names the version it saw by it (``decide_plan(seen=…)``), so a model's
    edit landing in the same millisecond as the plan it replaces never passes for that plan."""
    if before and stamp <= before:
        return iso(parse_iso(before) + timedelta(milliseconds=1))
    return stamp


def _index(board: Board, card_id: str) -> int:
    i = board.place(card_id)
    if i is None:
        raise NotFound(f"todo id '{shown_id(card_id.strip())}' not found")
    return i


# --- operations -------------------------------------------------------------------------------


def add(
    board: Board,
    title: str,
    patch: CardPatch | None = None,
    *,
    now: datetime,
    new_id: IdFactory,
) -> tuple[Board, Card]:
    """Append a card; the board gives it its id (one given is refused, never dropped)."""
    if patch is not None and patch.id not in (UNSET, None):
        raise InvalidInput("add takes no id: the board gives each new card its own")
    card = apply_patch(Card(id=new_id(), title=clean_title(title)), patch or CardPatch())
    new = _apply(board, now, append=card)
    return new, new.cards[-1]


def edit(board: Board, card_id: str, patch: CardPatch, *, now: datetime) -> Board:
    if not isinstance(patch.id, Unset) and patch.id != card_id:
        raise InvalidInput("a card's id cannot be changed")
    i = _index(board, card_id)
    return _apply(board, now, put=[apply_patch(board.cards[i], patch)])


def _check_seen(card: Card, seen: str | None, then: str) -> None:
    """A person's action on ``card`` as they saw it (``seen``: its ``updated_at`` then): one
    that changed since is refused (:class:`Conflict`), saying what it is now."""
    if seen is not None and seen != card.updated_at:
        raise Conflict(
            f"'{card.title}' ({card.id}) changed since it was shown (now {card.status.value},"
            f" updated {card.updated_at}): {then}"
        )


def update_status(
    board: Board,
    card_id: str,
    status: str | CardStatus,
    *,
    now: datetime,
    blocker: str | Unset | None = UNSET,
    refuse_awaiting: bool = False,
    seen: str | None = None,
) -> Board:
    """``refuse_awaiting``: a card awaiting approval is not moved (:class:`Conflict`): its
    plan takes a decision (:func:`decide_plan`), which checks it is the plan shown.
    ``seen``: the card's ``updated_at`` as shown; a card changed since is not moved."""
    card = board.cards[_index(board, card_id)]
    _check_seen(card, seen, "look at it again before moving it")
    if refuse_awaiting and card.status is CardStatus.AWAITING_APPROVAL:
        raise Conflict(
            f"card '{card.id}' is awaiting approval: its plan takes a decision (approve"
            " or reject), not a status"
        )
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
    _check_seen(card, seen, "look at its plan again before deciding")
    target = CardStatus.READY if approve else CardStatus.REJECTED
    decided = dataclasses.replace(card, status=target, approval_mode=ApprovalMode.REQUIRED)
    return _apply(board, now, put=[decided])


def revise_plan(board: Board, *, now: datetime) -> Board:
    """Reject every card awaiting approval (the plan goes back to the model). No-op if none."""
    cards = [
        dataclasses.replace(c, status=CardStatus.REJECTED)
        if c.status is CardStatus.AWAITING_APPROVAL
        else c
        for c in board.cards
    ]
    return commit(board, cards, now)


def edit_many(board: Board, patches: Mapping[str, CardPatch], *, now: datetime) -> Board:
    """Patch several cards in one change (a card and the cards that come after it)."""
    cards: dict[str, Card] = {}
    for card_id, patch in patches.items():
        if not isinstance(patch.id, Unset) and patch.id != card_id:
            raise InvalidInput("a card's id cannot be changed")
        card = board.cards[_index(board, card_id)]
        cards[card.id] = apply_patch(cards.get(card.id, card), patch)
    return _apply(board, now, put=list(cards.values()))


def remove(board: Board, card_id: str, *, now: datetime, force: bool = False) -> Board:
    """Remove a card; one that others wait on only with ``force``, which drops their edges
    to it (see :mod:`taskloom.domain.graph`)."""
    card = board.cards[_index(board, card_id)]
    if not force:
        waiters = sorted(board.index.waiters.get(card.id, ()), key=lambda w: board.get(w).order)
        graph.check_removal(card, map(board.get, waiters))
    return _apply(board, now, drop=card.id)


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
        raise NotFound(f"claim_card: card '{shown_id(card_id)}' not found on board") from None
    card = board.cards[i]
    if card.status not in allowed:
        names = ", ".join(s.value for s in allowed)
        raise InvariantViolation(
            f"claim_card: card '{card.id}' status is '{card.status.value}', "
            f"expected one of [{names}]; claim rejected"
        )
    new = _apply(board, now, put=[apply_patch(card, CardPatch(status=goal))])
    return new, new.cards[i]


def set_session_thread(
    board: Board, card_id: str, session_thread_id: str | None, *, now: datetime
) -> Board:
    i = _index(board, card_id)
    thread = clean_text(session_thread_id, "session_thread_id")
    card = dataclasses.replace(board.cards[i], session_thread_id=thread)
    return _apply(board, now, put=[card])


def changes(before: Board, after: Board) -> tuple[list[Card], list[str]]:
    """The cards of ``after`` that are new or differ from ``before`` (in content, order or
    stamps), in board order, and the ids of the cards it no longer has, in ``before``'s
    order. Counted from the cards the op touched when ``after`` was made from ``before``."""
    if after._base is not None and after._base() is before:
        ids: Collection[str] = after._touched
    else:
        ids = before.by_id.keys() | after.by_id.keys()
    found = [(before.find(i), after.find(i)) for i in ids]
    changed = [new for old, new in found if new is not None and new is not old]
    removed = [old for old, new in found if new is None and old is not None]
    changed.sort(key=attrgetter("order"))
    removed.sort(key=attrgetter("order"))
    return changed, [c.id for c in removed]
