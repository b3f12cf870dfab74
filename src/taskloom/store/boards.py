"""Boards in the store: one document per board, one row per card, one small event per change.

A board's document (kind ``board``, keyed by its thread) holds its version, its counts and
its memory (:meth:`~taskloom.domain.board.Board.memory`); its cards are rows of
``board_cards``, keyed by thread and card id. A change writes the cards it made or changed,
deletes the ones it removed, rewrites the document and appends one ``todo_change`` event
(:func:`~taskloom.domain.board.change_event`): what it stores follows the change, not the
size of the board.

A board stored whole in its document (``cards`` in the document's state, as databases made
before cards had rows, or copied from one, hold it) is read from there, and its cards move to
rows on its next change.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

from taskloom.domain import board as ops
from taskloom.domain import board_view as view
from taskloom.domain.board import Board
from taskloom.domain.card import Card
from taskloom.domain.events import TODO_CHANGE, Event
from taskloom.domain.kinds import BOARD_KIND
from taskloom.store.base import Document, Transaction, decode, encode

_CARDS = "SELECT data FROM board_cards WHERE thread_id = ? ORDER BY position, card_id"
_UPSERT = (
    "INSERT INTO board_cards (thread_id, card_id, position, data) VALUES {values}"
    " ON CONFLICT (thread_id, card_id) DO UPDATE SET position = excluded.position,"
    " data = excluded.data"
)
_DELETE = "DELETE FROM board_cards WHERE thread_id = ? AND card_id IN ({ids})"
_DELETE_ALL = "DELETE FROM board_cards WHERE thread_id = ?"
BATCH = 200
"""Cards written or deleted per statement."""


def stored_whole(doc: Document) -> bool:
    """Whether a board's document holds its cards itself (see the module's docstring)."""
    return "cards" in doc.state


def board_of(tx: Transaction, doc: Document) -> Board:
    """The board a stored document describes, its cards read from their rows. Cards stored
    before cards had numbers get the next ones, in board order; sort keys that do not
    increase (not as a board stores them) are numbered again."""
    if stored_whole(doc):
        cards = [Card.from_dict(c) for c in doc.state.get("cards", ())]
    else:
        cards = [Card.from_dict(decode(r["data"])) for r in tx.query(_CARDS, (doc.key,))]
    if any(a.order >= b.order for a, b in itertools.pairwise(cards)):
        cards = [dataclasses.replace(c, order=i) for i, c in enumerate(cards)]
    number = int(doc.state.get("next_number", 1))
    if any(c.number is None for c in cards):
        number = max([number, *(c.number + 1 for c in cards if c.number)])
        for i, card in enumerate(cards):
            if card.number is None:
                cards[i] = dataclasses.replace(card, number=number)
                number += 1
    state = {**doc.state, "version": doc.version, "next_number": number}
    return Board.from_dict(state, cards)


def load(tx: Transaction, thread_id: str) -> tuple[Board, bool] | None:
    """The stored board of a thread and whether it is stored whole (``None``: never saved)."""
    doc = tx.load_doc(BOARD_KIND, thread_id)
    if doc is None:
        return None
    return board_of(tx, doc), stored_whole(doc)


def snapshot_state(tx: Transaction, doc: Document) -> dict[str, Any]:
    """The ``todo_state`` snapshot of a stored board document."""
    return view.snapshot(board_of(tx, doc))


def save(tx: Transaction, before: Board, after: Board, now: str, *, whole: bool = False) -> None:
    """Store ``after``, the next version of ``before``, and append its ``todo_change`` event.
    ``whole``: ``before`` was stored whole in its document, so every card is written."""
    changed, removed = ops.changes(before, after)
    event = view.change_event(after, changed, removed)
    if whole:
        tx.execute(_DELETE_ALL, (after.thread_id,))
        _write(tx, after.thread_id, after.cards)
    else:
        _write(tx, after.thread_id, changed)
        _delete(tx, after.thread_id, removed)
    state = {
        "thread_id": after.thread_id,
        "version": after.version,
        "updated_at": after.updated_at,
        "summary": event["summary"],
        "ready_count": event["ready_count"],
        **after.memory(),
    }
    tx.save_doc(BOARD_KIND, after.thread_id, after.version, state, now)
    tx.append_event(Event(TODO_CHANGE, after.thread_id, event, created_at=now))


def _write(tx: Transaction, thread_id: str, cards: Sequence[Card]) -> None:
    for start in range(0, len(cards), BATCH):
        chunk = cards[start : start + BATCH]
        params: list[Any] = []
        for card in chunk:
            params += (thread_id, card.id, card.order, encode(card.to_dict()))
        tx.execute(_UPSERT.format(values=", ".join(["(?, ?, ?, ?)"] * len(chunk))), params)


def _delete(tx: Transaction, thread_id: str, ids: Sequence[str]) -> None:
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        tx.execute(_DELETE.format(ids=", ".join(["?"] * len(chunk))), (thread_id, *chunk))
