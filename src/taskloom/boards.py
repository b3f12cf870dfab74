"""Board operations made durable: load, apply a pure op, save with ``version + 1``, emit an event.

Every write runs in one store write transaction, so concurrent writers (threads, processes,
hosts) serialise on the database and never lose an update. Every method returns a snapshot:
``thread_id``, ``version``, ``cards``, ``markdown``, ``summary`` (and ``card`` when the
operation targets one card).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

from taskloom._runtime import Runtime
from taskloom.domain import board as ops
from taskloom.domain.approval import model_change
from taskloom.domain.board import BOARD_KIND, Board
from taskloom.domain.card import Card, CardPatch, CardStatus
from taskloom.domain.common import UNSET, Unset, iso
from taskloom.domain.errors import InvalidInput
from taskloom.domain.events import TODO_STATE
from taskloom.domain.threads import check_thread_id
from taskloom.store.base import Transaction

Snapshot = dict[str, Any]
BoardOp = Callable[[Board, datetime], tuple[Board, Card | None]]


class BoardCache:
    """Parsed boards by thread, reused while the stored version is unchanged.

    Boards are immutable, so a cached one is safe to share across threads; the version check
    in the same transaction means another process's write is always seen.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._boards: dict[str, Board] = {}

    def load(self, tx: Transaction, thread_id: str) -> Board:
        version = tx.doc_version(BOARD_KIND, thread_id)
        if version is None:
            return Board(thread_id=thread_id)
        cached = self._boards.get(thread_id)
        if cached is not None and cached.version == version:
            return cached
        doc = tx.load_doc(BOARD_KIND, thread_id)
        assert doc is not None
        board = dataclasses.replace(Board.from_dict(doc.state), version=doc.version)
        self.put(board)
        return board

    def put(self, board: Board) -> None:
        if len(self._boards) >= self.size:
            self._boards.pop(next(iter(self._boards)), None)
        self._boards[board.thread_id] = board


def _memory(board: Board) -> dict[str, list[str]]:
    """The board's memory of removed gated plans, as :meth:`Board.to_dict` stores it (without
    encoding every card a second time on each write)."""
    kept = {"retired_ids": board.retired_ids, "retired_titles": board.retired_titles}
    return {key: list(values) for key, values in kept.items() if values}


def _snapshot(board: Board, card: Card | None = None) -> Snapshot:
    snap = ops.snapshot(board)
    if card is not None:
        snap["card"] = card.to_dict()
    return snap


class BoardHandle:
    """One thread's todo board. Get it with ``tl.board(thread_id)``; ``cache`` (the
    facade's, shared by its handles) keeps parsed boards between calls."""

    def __init__(
        self,
        runtime: Runtime,
        thread_id: str,
        *,
        cache: BoardCache | None = None,
        by_model: bool = False,
    ) -> None:
        self._runtime = runtime
        self._cache = cache if cache is not None else BoardCache()
        self.thread_id = check_thread_id(thread_id)
        self.by_model = by_model

    def as_model(self) -> BoardHandle:
        """This board as the model's tools see it: writes that would approve a plan, start a
        card waiting for approval or drop its approval requirement are refused (a person's act).
        """
        return BoardHandle(self._runtime, self.thread_id, cache=self._cache, by_model=True)

    def _mutate(self, op: BoardOp) -> Snapshot:
        now = self._runtime.now()
        cache = self._cache
        with self._runtime.store.write() as tx:
            board = cache.load(tx, self.thread_id)
            new, card = op(board, now)
            if self.by_model:  # only a model's change is gated and remembered
                new = model_change(board, new)
            if new is board:
                return _snapshot(board, card)
            new = dataclasses.replace(new, version=board.version + 1)
            snap = _snapshot(new)
            # Stored with the memory of the gated plans a model removed (the snapshot shown
            # leaves it out), so that another process, a restart or an evicted cache still
            # refuses a removed plan brought back done under its title or its id.
            stored = {**snap, **_memory(new)}
            tx.save_with_event(
                BOARD_KIND, self.thread_id, new.version, stored, TODO_STATE, iso(now)
            )
        cache.put(new)
        if card is not None:
            snap = {**snap, "card": new.get(card.id).to_dict()}
        return snap

    def list(self) -> Snapshot:
        return _snapshot(self.get())

    def get(self) -> Board:
        """The board as a domain object (for hosts that want typed access)."""
        with self._runtime.store.read() as tx:
            return self._cache.load(tx, self.thread_id)

    def add(self, title: str, **fields: Any) -> Snapshot:
        """Append a card. ``fields`` are any :class:`CardPatch` fields (status, plan, notes…)."""
        patch = _patch(fields)
        return self._mutate(
            lambda b, now: ops.add(b, title, patch, now=now, new_id=self._runtime.new_id)
        )

    def edit(self, card_id: str, **fields: Any) -> Snapshot:
        patch = _patch(fields)
        return self._mutate(lambda b, now: (ops.edit(b, card_id, patch, now=now), b.get(card_id)))

    def update_status(
        self, card_id: str, status: str | CardStatus, *, blocker: str | Unset | None = UNSET
    ) -> Snapshot:
        return self._mutate(
            lambda b, now: (
                ops.update_status(b, card_id, status, now=now, blocker=blocker),
                b.get(card_id),
            )
        )

    def decide_plan(self, card_id: str, approve: bool, *, seen: str | None = None) -> Snapshot:
        """A person's decision (``seen``: the card's ``updated_at`` they were shown, see
        :func:`taskloom.domain.board.decide_plan`)."""
        return self._mutate(
            lambda b, now: (
                ops.decide_plan(b, card_id, approve, now=now, seen=seen),
                b.get(card_id),
            )
        )

    def revise_plan(self) -> Snapshot:
        return self._mutate(lambda b, now: (ops.revise_plan(b, now=now), None))

    def remove(self, card_id: str) -> Snapshot:
        return self._mutate(lambda b, now: (ops.remove(b, card_id, now=now), None))

    def replace(self, cards: Sequence[CardPatch | dict[str, Any]]) -> Snapshot:
        items = [c if isinstance(c, CardPatch) else _patch(c) for c in cards]
        return self._mutate(
            lambda b, now: (ops.replace(b, items, now=now, new_id=self._runtime.new_id), None)
        )

    def upsert(self, cards: Sequence[CardPatch], *, prune: bool) -> Snapshot:
        return self._mutate(
            lambda b, now: (
                ops.upsert(b, cards, prune=prune, now=now, new_id=self._runtime.new_id),
                None,
            )
        )

    def clear(self) -> Snapshot:
        """Remove every card; a host's clear also forgets the removed plans a model may not
        bring back (a model's clear keeps that memory)."""
        forget = not self.by_model
        return self._mutate(lambda b, now: (ops.clear(b, now=now, forget_removed=forget), None))

    def claim_card(
        self,
        card_id: str,
        expected: Collection[str | CardStatus] | str | CardStatus,
        target: str | CardStatus = CardStatus.IN_PROGRESS,
    ) -> Snapshot:
        """Compare-and-set a card's status (``expected``: one status or several); the
        snapshot's ``card`` is the claimed card."""
        return self._mutate(lambda b, now: ops.claim_card(b, card_id, expected, target, now=now))

    def set_session_thread(self, card_id: str, session_thread_id: str | None) -> Snapshot:
        return self._mutate(
            lambda b, now: (
                ops.set_session_thread(b, card_id, session_thread_id, now=now),
                b.get(card_id),
            )
        )


_PATCH_FIELDS = {f.name for f in dataclasses.fields(CardPatch)}


def _patch(fields: dict[str, Any]) -> CardPatch:
    data = dict(fields)
    if "content" in data and "title" not in data:
        data["title"] = data.pop("content")
    unknown = sorted(set(data) - _PATCH_FIELDS)
    if unknown:
        raise InvalidInput(f"unknown card field(s): {', '.join(unknown)}")
    return CardPatch(**data)
