"""What a board's operations look up on every change, kept with the board.

A change of one card on a board of a thousand must not cost a pass over every card: its
checks (one card in progress, the text limits, the approval gate), its snapshot (every card's
JSON and markdown, the counts, the ready count) and what it stores all read a
:class:`BoardIndex`. A board builds its index from its cards once; each change brings the
index of the board it changed up to date from the cards it touched (:func:`advance`), which
reads the same as building it again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from taskloom.domain import graph
from taskloom.domain.card import Card, CardStatus, needs_a_person
from taskloom.domain.titles import title_key

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BoardIndex:
    """A board's counts, limits and lookups, and its cards as shown; read-only."""

    counts: Mapping[CardStatus, int]
    text: int
    """The text bytes of every card together (:meth:`Card.text_size`)."""
    working: tuple[str, ...]
    """The ids of the cards in progress (at most one, on a valid board)."""
    waiters: Mapping[str, frozenset[str]]
    """For each card others come after, the ids of those others."""
    ready: int
    """How many cards can start now (:func:`taskloom.domain.graph.is_ready`)."""
    gated: Mapping[str, str]
    """The ``title_key`` of each card a person decides on (``needs_a_person``), to its id."""
    dicts: Sequence[dict[str, Any]]
    """Each card's :meth:`Card.to_dict`, in board order."""
    items: Sequence[str]
    """Each card's :meth:`Card.markdown`, in board order."""

    @property
    def finished(self) -> int:
        """How many cards are done or rejected."""
        return self.counts[CardStatus.DONE] + self.counts[CardStatus.REJECTED]


def _gated(cards: Iterable[Card]) -> dict[str, str]:
    return {title_key(c.title): c.id for c in cards if needs_a_person(c)}


def build(cards: Sequence[Card], find: graph.Find) -> BoardIndex:
    """The index of a board holding ``cards`` (``find``: its lookup by id)."""
    counts = dict.fromkeys(CardStatus, 0)
    text = 0
    waiters: dict[str, set[str]] = {}
    for card in cards:
        counts[card.status] += 1
        text += card.text_size()
        for target in card.blocked_by:
            waiters.setdefault(target, set()).add(card.id)
    return BoardIndex(
        counts=counts,
        text=text,
        working=tuple(c.id for c in cards if c.status is CardStatus.IN_PROGRESS),
        waiters={target: frozenset(ids) for target, ids in waiters.items()},
        ready=sum(1 for c in cards if graph.is_ready(c, find)),
        gated=_gated(cards),
        dicts=[c.to_dict() for c in cards],
        items=[c.markdown() for c in cards],
    )


class Cards(Protocol):
    """A board as :func:`advance` reads it."""

    @property
    def cards(self) -> Sequence[Card]: ...

    def find(self, card_id: str) -> Card | None: ...

    def place(self, card_id: str) -> int | None: ...


def advance(index: BoardIndex, old: Cards, new: Cards, touched: Collection[str]) -> BoardIndex:
    """The index of ``new``, a change of ``old`` (whose index is ``index``) that made,
    changed or removed only the cards whose ids are in ``touched`` and kept the others in
    their order: the same as building it again."""
    before: dict[str, Card] = {}
    after: dict[str, Card] = {}
    for card_id in touched:
        was, now = old.find(card_id), new.find(card_id)
        if was is not now:
            if was is not None:
                before[card_id] = was
            if now is not None:
                after[card_id] = now
    moved = before.keys() | after.keys()
    if not moved:
        return index
    affected = set(moved)
    for card_id in moved:
        affected |= index.waiters.get(card_id, frozenset())
    ready = index.ready - _ready(affected, old.find) + _ready(affected, new.find)
    counts = dict(index.counts)
    text = index.text
    waiters = dict(index.waiters)
    for card in before.values():
        counts[card.status] -= 1
        text -= card.text_size()
        _unlink(waiters, card)
    for card in after.values():
        counts[card.status] += 1
        text += card.text_size()
        _link(waiters, card)
    working = [w for w in index.working if w not in moved]
    working += [c.id for c in after.values() if c.status is CardStatus.IN_PROGRESS]
    gate = any(needs_a_person(c) for c in (*before.values(), *after.values()))
    return BoardIndex(
        counts=counts,
        text=text,
        working=tuple(working),
        waiters=waiters,
        ready=ready,
        gated=_gated(new.cards) if gate else index.gated,
        dicts=_moved(index.dicts, old, new, moved, lambda c: c.to_dict()),
        items=_moved(index.items, old, new, moved, lambda c: c.markdown()),
    )


def _ready(ids: Iterable[str], find: graph.Find) -> int:
    """How many of the cards ``ids`` name (those ``find`` finds) can start now."""
    return sum(1 for c in map(find, ids) if c is not None and graph.is_ready(c, find))


def _unlink(waiters: dict[str, frozenset[str]], card: Card) -> None:
    for target in card.blocked_by:
        left = waiters.get(target, frozenset()) - {card.id}
        if left:
            waiters[target] = left
        else:
            waiters.pop(target, None)


def _link(waiters: dict[str, frozenset[str]], card: Card) -> None:
    for target in card.blocked_by:
        waiters[target] = waiters.get(target, frozenset()) | {card.id}


def _moved(
    values: Sequence[T],
    old: Cards,
    new: Cards,
    moved: Collection[str],
    make: Callable[[Card], T],
) -> list[T]:
    """``values`` (one per card of ``old``) for ``new``: the moved cards' taken out, then
    theirs on the new board put in at their places."""
    out = list(values)
    for i in sorted((i for i in map(old.place, moved) if i is not None), reverse=True):
        del out[i]
    places = {new.place(card_id): card_id for card_id in moved}
    for i in sorted(i for i in places if i is not None):
        card = new.find(places[i])
        assert card is not None
        out.insert(i, make(card))
    return out
