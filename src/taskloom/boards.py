"""Board operations made durable: load, apply a pure op, save with ``version + 1``, emit an event.

Every write runs in one store write transaction, so concurrent writers (threads, processes,
hosts) serialise on the database and never lose an update; it stores the cards the op changed
and one ``todo_change`` event (:mod:`taskloom.store.boards`). Every method returns a snapshot:
``thread_id``, ``version``, ``cards``, ``markdown``, ``summary``, ``ready_count`` (and
``card`` when the operation targets one card).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from taskloom._runtime import Runtime
from taskloom.domain import board as ops
from taskloom.domain import board_view as view
from taskloom.domain import whole_list
from taskloom.domain.approval import model_change
from taskloom.domain.board import Board
from taskloom.domain.card import Card, CardPatch, CardStatus, clean_id
from taskloom.domain.common import UNSET, Unset, iso
from taskloom.domain.errors import InvalidInput
from taskloom.domain.kinds import BOARD_KIND
from taskloom.domain.text import plural
from taskloom.domain.threads import check_thread_id
from taskloom.store import boards as stored
from taskloom.store.base import Transaction

Snapshot = dict[str, Any]
BoardOp = Callable[[Board, datetime], tuple[Board, Card | None]]
ListItems = Callable[[Board], Sequence[CardPatch]]
WholeListWrite = Callable[[Board, datetime, Sequence[Card], Sequence[CardPatch]], Board]


class BoardCache:
    """Parsed boards by thread, reused while the stored version is unchanged, each with
    whether it is stored whole in its document (:mod:`taskloom.store.boards`).

    Boards are immutable, so a cached one is safe to share across threads; the version check
    in the same transaction means another process's write is always seen.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._boards: dict[str, tuple[Board, bool]] = {}

    def load(self, tx: Transaction, thread_id: str) -> Board:
        return self.load_stored(tx, thread_id)[0]

    def load_stored(self, tx: Transaction, thread_id: str) -> tuple[Board, bool]:
        """The board and whether it is stored whole."""
        version = tx.doc_version(BOARD_KIND, thread_id)
        if version is None:
            return Board(thread_id=thread_id), False
        cached = self._boards.get(thread_id)
        if cached is not None and cached[0].version == version:
            return cached
        found = stored.load(tx, thread_id)
        assert found is not None
        self.put(*found)
        return found

    def put(self, board: Board, whole: bool = False) -> None:
        if len(self._boards) >= self.size:
            self._boards.pop(next(iter(self._boards)), None)
        self._boards[board.thread_id] = (board, whole)


def _snapshot(board: Board, card: Card | None = None) -> Snapshot:
    snap = view.snapshot(board)
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
        agent: str | None = None,
    ) -> None:
        self._runtime = runtime
        self._cache = cache if cache is not None else BoardCache()
        self.thread_id = check_thread_id(thread_id)
        self.by_model = by_model
        self.agent = agent

    def as_model(self, agent: str | None = None) -> BoardHandle:
        """This board as the model's tools see it: writes that would approve a plan, start a
        card waiting for approval or drop its approval requirement are refused (a person's act).
        ``agent``: which model, when several write to one thread (``ToolContext.agent_id``):
        each one's whole-list write keeps the cards the others made or changed since its last
        write.
        """
        return BoardHandle(
            self._runtime, self.thread_id, cache=self._cache, by_model=True, agent=agent
        )

    def _mutate(self, op: BoardOp) -> Snapshot:
        now = self._runtime.now()
        cache = self._cache
        with self._runtime.store.write() as tx:
            board, whole = cache.load_stored(tx, self.thread_id)
            new, card = op(board, now)
            if self.by_model:  # only a model's change is gated and remembered
                new = model_change(board, new)
            # A model's write shows it the whole board, so it records the mark even when it
            # changes no card: a card kept as unseen is then seen, and goes when left out.
            unmarked = self.by_model and new.shown_to(self.agent) != new.marks_now()
            if new is board and not unmarked:
                return _snapshot(board, card)
            new = new.evolve(version=board.version + 1)
            if self.by_model:
                new = new.mark_shown(self.agent)
            stored.save(tx, board, new, iso(now), whole=whole)
        cache.put(new)
        snap = _snapshot(new)
        if card is not None:
            snap["card"] = new.get(card.id).to_dict()
        return snap

    def _whole_list(self, write: WholeListWrite, items: ListItems) -> Snapshot:
        """A whole-list write of ``items`` (made from the board in the write's transaction):
        a model's keeps the cards it has not been shown and ``items`` do not name
        (:mod:`taskloom.domain.whole_list`); its snapshot's ``kept`` lists them, and
        ``kept_finished`` those it names but keeps finished."""
        kept: list[Card] = []
        finished: list[Card] = []

        def op(board: Board, now: datetime) -> tuple[Board, None]:
            unshown = whole_list.unshown(board, self.agent) if self.by_model else []
            given = items(board)
            new = write(board, now, unshown, given)
            named = {clean_id(item.id) for item in given}
            kept[:] = [c for c in unshown if c.id not in named]
            finished[:] = whole_list.reopened_unseen(unshown, given)
            return new, None

        snap = self._mutate(op)
        if kept:
            snap["kept"] = [{"id": c.id, "title": c.title} for c in kept]
        if finished:
            snap["kept_finished"] = [
                {"id": c.id, "title": c.title, "status": c.status.value} for c in finished
            ]
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
        self,
        card_id: str,
        status: str | CardStatus,
        *,
        blocker: str | Unset | None = UNSET,
        refuse_awaiting: bool = False,
        seen: str | None = None,
    ) -> Snapshot:
        """Move a card. ``refuse_awaiting``: not a card awaiting approval (``Conflict``),
        checked in the move's own transaction: its plan takes :meth:`decide_plan`.
        ``seen``: the card's ``updated_at`` as shown; a card changed since is not moved."""
        return self._mutate(
            lambda b, now: (
                ops.update_status(
                    b,
                    card_id,
                    status,
                    now=now,
                    blocker=blocker,
                    refuse_awaiting=refuse_awaiting,
                    seen=seen,
                ),
                b.get(card_id),
            )
        )

    def decide_plan(self, card_id: str, approve: bool, *, seen: str | None = None) -> Snapshot:
        """A person's decision (``seen``: the card's ``updated_at`` they were shown, see
        :func:`taskloom.domain.board.decide_plan`)."""
        _flag("approve", approve)
        return self._mutate(
            lambda b, now: (
                ops.decide_plan(b, card_id, approve, now=now, seen=seen),
                b.get(card_id),
            )
        )

    def edit_many(self, patches: Mapping[str, CardPatch | dict[str, Any]]) -> Snapshot:
        """Change several cards in one change: ``patches`` maps card ids to their fields."""
        if not isinstance(patches, Mapping):
            raise InvalidInput(
                f"edit_many takes a dict of card ids to their fields, not {type(patches).__name__}"
            )
        items = {i: p if isinstance(p, CardPatch) else _patch(p) for i, p in patches.items()}
        return self._mutate(lambda b, now: (ops.edit_many(b, items, now=now), None))

    def ready(self, *, explain: bool = False) -> dict[str, Any]:
        """What can start now, and with ``explain`` why each other unfinished card cannot
        (:func:`taskloom.domain.graph.ready_view`)."""
        _flag("explain", explain)
        return view.ready(self.get(), explain=explain)

    def revise_plan(self) -> Snapshot:
        return self._mutate(lambda b, now: (ops.revise_plan(b, now=now), None))

    def remove(self, card_id: str, *, force: bool = False) -> Snapshot:
        """Remove a card; one that others wait on only with ``force``, which drops their
        edges to it."""
        _flag("force", force)
        return self._mutate(lambda b, now: (ops.remove(b, card_id, now=now, force=force), None))

    def replace(self, cards: Sequence[CardPatch | dict[str, Any]]) -> Snapshot:
        """Make the board ``cards``; a model's write keeps the cards it has not been shown."""
        items = _patches(cards, "replace")
        new_id = self._runtime.new_id
        return self._whole_list(
            lambda b, now, keep, given: whole_list.replace(
                b, given, now=now, new_id=new_id, keep=keep
            ),
            lambda b: items,
        )

    def upsert(
        self,
        cards: Sequence[CardPatch | dict[str, Any]] | Callable[[Board], Sequence[CardPatch]],
        *,
        prune: bool,
    ) -> Snapshot:
        """Patch the cards ``cards`` name and add the others; with ``prune``, a whole-list
        write (see :meth:`replace`). ``cards`` may be a function of the board that makes them,
        called in the write's own transaction: a list that names cards by what the board
        holds (a title, a status) names them as they are, not as an earlier read saw them."""
        if callable(cards):
            make = cards

            def items(board: Board) -> list[CardPatch]:
                return _patches(make(board), "upsert")
        else:
            fixed = _patches(cards, "upsert")

            def items(board: Board) -> list[CardPatch]:
                return fixed

        new_id = self._runtime.new_id
        if not prune:
            return self._mutate(
                lambda b, now: (
                    whole_list.upsert(b, items(b), prune=False, now=now, new_id=new_id),
                    None,
                )
            )
        return self._whole_list(
            lambda b, now, keep, given: whole_list.upsert(
                b, given, prune=True, now=now, new_id=new_id, keep=keep
            ),
            items,
        )

    def clear(self) -> Snapshot:
        """Remove every card; a host's clear also forgets the removed plans a model may not
        bring back (a model's clear keeps that memory, and the cards it has not been shown)."""
        forget = not self.by_model
        return self._whole_list(
            lambda b, now, keep, given: whole_list.clear(
                b, now=now, forget_removed=forget, keep=keep
            ),
            lambda b: (),
        )

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


def _flag(name: str, value: object) -> None:
    """Refuse a flag that is not ``True`` or ``False``: the text "no" is true to Python, and
    would approve a plan or force a removal."""
    if type(value) is not bool:
        raise InvalidInput(f"{name} is true or false, not {value!r}")


def _patches(cards: object, op: str) -> list[CardPatch]:
    """``cards`` as patches: a list (or any iterable) of :class:`CardPatch` or dicts of
    their fields; one text or one dict is refused, not read as a list of characters or keys."""
    if isinstance(cards, str | bytes | Mapping) or not isinstance(cards, Iterable):
        raise InvalidInput(f"{op} takes a list of cards, not {type(cards).__name__}")
    return [c if isinstance(c, CardPatch) else _patch(c) for c in cards]


def _patch(fields: object) -> CardPatch:
    if not isinstance(fields, Mapping):
        raise InvalidInput(
            f"a card is a CardPatch or a dict of its fields, not {type(fields).__name__}"
        )
    data = dict(fields)
    if "content" in data and "title" not in data:
        data["title"] = data.pop("content")
    unknown = sorted(set(data) - _PATCH_FIELDS)
    if unknown:
        raise InvalidInput(f"unknown card {plural(len(unknown), 'field')}: {', '.join(unknown)}")
    return CardPatch(**data)
