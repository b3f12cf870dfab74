"""What a board shows: its markdown, the snapshot every operation returns, the event each
change stores, and what can start now."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskloom.domain import graph
from taskloom.domain.board import Board
from taskloom.domain.card import Card


def render_markdown(board: Board) -> str:
    """The board as a markdown checklist, one card per item, details indented under it."""
    if not board.cards:
        return "_No todos yet._"
    return "\n".join(board.index.items).rstrip()


def snapshot(board: Board) -> dict[str, Any]:
    """What every board operation returns and what a ``todo_state`` event carries: the whole
    board. ``ready_count``: how many cards can start now (:mod:`taskloom.domain.graph`)."""
    return {
        "thread_id": board.thread_id,
        "version": board.version,
        "updated_at": board.updated_at,
        "cards": list(board.index.dicts),
        "markdown": render_markdown(board),
        "summary": board.summary(),
        "ready_count": board.index.ready,
    }


def change_event(after: Board, changed: Sequence[Card], removed: Sequence[str]) -> dict[str, Any]:
    """What a ``todo_change`` event carries: a change (:func:`changes`: the cards it made or
    changed, whole, and the ids it removed) with the board's version, counts and ready count
    after it. Applied in version order to the board at ``version - 1`` it gives the board at
    ``version``: cards by id, shown by ``order``."""
    return {
        "thread_id": after.thread_id,
        "version": after.version,
        "updated_at": after.updated_at,
        "cards": [c.to_dict() for c in changed],
        "removed": list(removed),
        "summary": after.summary(),
        "ready_count": after.index.ready,
    }


def ready(board: Board, *, explain: bool = False) -> dict[str, Any]:
    """The board's ready view (:func:`taskloom.domain.graph.ready_view`)."""
    return graph.ready_view(
        board.thread_id, board.version, board.cards, board.find, explain=explain
    )
