"""Whole-list writes: ``replace``, a list tool's write (``upsert``) and ``clear``.

A whole-list write makes the board the list it is given. A model's write keeps the cards it
has not been shown as they are: those another writer (a person, the host, another named
model) made or changed since the model's last write (:meth:`Board.shown_to`). Left out of
the list, they stay, after it, and the model is told; a model that leaves them out of its
next list, having seen them, removes them. Named in the list, they keep the fields its item
does not give, and one finished (done or rejected) stays finished where the list would reopen
it (:func:`reopened_unseen`). A whole-list write sent from an old view so never drops work it
did not know of, nor undoes a person's rename, note or done.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

from taskloom.domain.board import Board, IdFactory, commit
from taskloom.domain.card import (
    Card,
    CardPatch,
    CardStatus,
    apply_patch,
    clean_id,
    clean_title,
    naming_item,
    parse_status,
)
from taskloom.domain.common import UNSET, Unset, iso
from taskloom.domain.errors import InvalidInput, InvariantViolation
from taskloom.domain.graph import FINISHED
from taskloom.domain.limits import check_card_count
from taskloom.domain.text import counted


def unshown(board: Board, agent: str | None = None) -> list[Card]:
    """The cards made or changed since the last write of the model ``agent`` (see
    :meth:`Board.shown_to`) showed it the board, in board order."""
    mark, at = board.shown_to(agent)
    return [
        c
        for c in board.cards
        if (c.number is not None and c.number >= mark) or (at and c.updated_at > at)
    ]


def reopened_unseen(keep: Sequence[Card], items: Sequence[CardPatch]) -> list[Card]:
    """The cards of ``keep`` finished (done or rejected) that ``items`` name with an unfinished
    status. A whole-list write keeps them finished, as another writer left them; once the
    model has been shown them, its next list reopens them."""
    finished = {c.id: c for c in keep if c.status in FINISHED}
    reopened = []
    for item in items:
        card = finished.pop(clean_id(item.id) or "", None)
        status = item.status
        if (
            card is not None
            and not isinstance(status, Unset)
            and parse_status(status) not in FINISHED
        ):
            reopened.append(card)
    return reopened


def _finished_kept(cards: list[Card], keep: Sequence[Card], items: Sequence[CardPatch]) -> None:
    """Put back, in place, the finished status of the cards :func:`reopened_unseen` names."""
    held = {c.id: c for c in reopened_unseen(keep, items)}
    for n, card in enumerate(cards):
        old = held.get(card.id)
        if old is not None:
            cards[n] = dataclasses.replace(card, status=old.status, blocker=old.blocker)


def _with_kept(board: Board, cards: list[Card], keep: Sequence[Card]) -> list[Card]:
    """``cards`` and, after them, the cards of ``keep`` the list does not hold. A refusal
    those kept cards cause says so, since the writer's list does not show them."""
    held = {c.id for c in cards}
    kept = [c for c in keep if c.id not in held]
    if kept:
        _check_room(board, len(cards), kept)
        _check_working(cards, kept)
    return [*cards, *kept]


_KEPT = (
    "someone else added or changed since your last write, which your list leaves out and so keeps"
)


def _check_room(board: Board, listed: int, kept: Sequence[Card]) -> None:
    finished = board.index.finished
    check_card_count(listed, len(board.cards), finished)
    try:
        check_card_count(listed + len(kept), len(board.cards), finished)
    except InvalidInput as exc:
        head, _, advice = exc.message.partition(": ")
        raise InvalidInput(
            f"{head} ({listed:,} listed and {counted(len(kept), 'card')} {_KEPT}): {advice}"
        ) from None


def _check_working(cards: Sequence[Card], kept: Sequence[Card]) -> None:
    """One card in progress, where the one already in progress is a kept card."""
    working = next((c for c in kept if c.status is CardStatus.IN_PROGRESS), None)
    if working is not None and any(c.status is CardStatus.IN_PROGRESS for c in cards):
        raise InvariantViolation(
            f"only one todo may be `in_progress` at a time: '{working.title}' ({working.id}),"
            f" a card {_KEPT}, is in progress already; send your own cards with another"
            " status, or put it in your list with the status it should have"
        )


def replace(
    board: Board,
    items: Sequence[CardPatch],
    *,
    now: datetime,
    new_id: IdFactory,
    keep: Sequence[Card] = (),
) -> Board:
    """Make the board exactly ``items`` (and the cards of ``keep`` it leaves out; one it
    names keeps the fields its item does not give). Items with an empty title are dropped
    first."""
    before = {c.id: c for c in board.cards}
    unseen = {c.id for c in keep}
    cards: list[Card] = []
    for n, item in enumerate(items, 1):
        title = "" if isinstance(item.title, Unset) else " ".join(item.title.split())
        if not title:
            continue
        with naming_item(n, len(items), title):
            card_id = clean_id(item.id) or new_id()
            base = Card(id=card_id, title=title)
            old = before.get(card_id)
            if card_id in unseen:  # changed since the writer saw it: what it leaves is kept
                base = dataclasses.replace(old or base, title=title)
            elif old is not None:  # what an item cannot give, or need not repeat, is kept
                base = dataclasses.replace(
                    base,
                    source_metadata=old.source_metadata,
                    session_thread_id=old.session_thread_id,
                    approval_mode=old.approval_mode,
                    blocked_by=old.blocked_by,
                    metadata=old.metadata,
                )
            cards.append(apply_patch(base, item))
    _finished_kept(cards, keep, items)
    return commit(board, _with_kept(board, cards, keep), now)


def upsert(
    board: Board,
    items: Sequence[CardPatch],
    *,
    prune: bool,
    now: datetime,
    new_id: IdFactory,
    keep: Sequence[Card] = (),
) -> Board:
    """Patch the cards named by ``items`` in place and append the rest as new cards.

    An item names an existing card by ``id``. With ``prune`` the board keeps only the named
    cards, in the order given (a whole-list write such as TodoWrite), and the cards of
    ``keep``; without it, cards not named stay where they are (a merge). Untouched fields of
    an existing card are kept.
    """
    by_id = {c.id: c for c in board.cards}
    named: dict[str, Card] = {}
    order: list[str] = []
    for n, item in enumerate(items, 1):
        with naming_item(n, len(items), item.title):
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
        listed = [named[i] for i in order]
        _finished_kept(listed, keep, items)
        cards = _with_kept(board, listed, keep)
    else:
        cards = [named.pop(c.id, c) for c in board.cards]
        cards.extend(named[i] for i in order if i in named)
    return commit(board, cards, now)


def clear(
    board: Board, *, now: datetime, forget_removed: bool = False, keep: Sequence[Card] = ()
) -> Board:
    """Remove every card but those of ``keep``. ``forget_removed`` (a person's clear, never a
    model's) also drops the memory of removed plans (``retired_ids``, ``retired_titles``): a
    fresh start."""
    cleared = commit(board, list(keep), now)
    if forget_removed and (cleared.retired_ids or cleared.retired_titles):
        stamp = iso(now)
        cleared = dataclasses.replace(cleared, retired_ids=(), retired_titles=(), updated_at=stamp)
    return cleared
