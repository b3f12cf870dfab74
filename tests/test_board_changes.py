"""What a board change stores: the cards it changed as rows and one ``todo_change`` event, of a
size that follows the change and not the board; replayed in version order, the events give the
board. The index a board keeps reads the same as one built from its cards."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import taskloom
from taskloom.client import Taskloom
from taskloom.domain import board as ops
from taskloom.domain import index
from taskloom.domain.board import Board
from taskloom.domain.card import CardPatch
from taskloom.domain.errors import TaskloomError
from taskloom.domain.events import TODO_CHANGE
from taskloom.domain.kinds import BOARD_KIND
from taskloom.store.base import encode


def replay(changes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The cards by id after applying ``changes`` in order to an empty board."""
    cards: dict[str, dict[str, Any]] = {}
    for version, change in enumerate(changes, start=1):
        assert change["version"] == version
        for card_id in change["removed"]:
            del cards[card_id]
        cards.update((c["id"], c) for c in change["cards"])
    return cards


def shown(cards: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(cards.values(), key=lambda c: c["order"])


def random_ops(tl: Taskloom, seed: int, steps: int) -> list[dict[str, Any]]:
    """``steps`` random changes of thread ``t``'s board (some refused); the snapshots of
    those made."""
    rng = random.Random(seed)
    board = tl.board("t")
    snaps = []
    for step in range(steps):
        cards = board.list()["cards"]
        ids = [c["id"] for c in cards]
        pick = rng.choice(ids) if ids else None
        choice = rng.randrange(9)
        try:
            if choice < 3 or pick is None:
                after = rng.sample(ids, min(len(ids), rng.randrange(3)))
                snap = board.add(f"card {step}", blocked_by=after)
            elif choice == 3:
                snap = board.update_status(pick, rng.choice(["todo", "done", "in_progress"]))
            elif choice == 4:
                snap = board.edit(pick, add_blocked_by=rng.sample(ids, 1), notes=f"n{step}")
            elif choice == 5:
                snap = board.remove(pick, force=rng.random() < 0.5)
            elif choice == 6:
                kept = rng.sample(cards, max(0, len(cards) - 1))
                snap = board.replace(
                    [{"id": c["id"], "title": c["title"], "status": c["status"]} for c in kept]
                )
            elif choice == 7:
                snap = board.edit(pick, title=f"renamed {step}", approval_mode="required")
            else:
                snap = board.as_model().edit(pick, remove_blocked_by=ids[:2], notes="")
        except TaskloomError:
            continue
        snaps.append(snap)
    return snaps


def test_the_change_events_replayed_in_order_give_the_board(tl: Taskloom) -> None:
    snaps = random_ops(tl, seed=7, steps=120)
    with tl.store.read() as tx:
        events = tx.events_after(0, thread_id="t", limit=1000)
    assert {e.type for e in events} == {TODO_CHANGE}
    changes = [e.data for e in events]
    by_version = {s["version"]: s for s in snaps}
    for upto in range(1, len(changes) + 1):
        if upto in by_version:  # every version an op returned, replayed to it
            assert shown(replay(changes[:upto])) == by_version[upto]["cards"]
    final = tl.board("t").list()
    assert shown(replay(changes)) == final["cards"]
    assert changes[-1]["summary"] == final["summary"]
    assert changes[-1]["ready_count"] == final["ready_count"]


def test_a_change_stores_the_same_whatever_the_size_of_the_board(tl: Taskloom) -> None:
    sizes = []
    for thread, cards in (("small", 10), ("large", 1000)):
        board = tl.board(thread)
        board.replace([{"title": f"card {i:04d}"} for i in range(cards)])
        card_id = board.list()["cards"][cards // 2]["id"]
        board.update_status(card_id, "done")
        with tl.store.read() as tx:
            event = tx.events_after(0, thread_id=thread, limit=10)[-1]
            doc = tx.load_doc(BOARD_KIND, thread)
        assert doc is not None and "cards" not in doc.state  # the cards are rows of their own
        assert [c["id"] for c in event.data["cards"]] == [card_id]
        sizes.append(len(encode(event.data)) + len(encode(doc.state)))
    assert sizes[1] - sizes[0] < 32  # longer numbers (counts, order, number): nothing per card


def test_a_board_stored_whole_moves_to_rows_on_its_next_change(tl: Taskloom) -> None:
    """A database made before cards had rows (or copied from one) holds each board whole in
    its document: it reads the same, and its next change stores it as rows."""
    new_ids = iter(f"c{i}" for i in range(1, 10))
    now = datetime(2026, 1, 1, tzinfo=UTC)
    board = Board("old")
    for title in ("first", "second"):
        board, _ = ops.add(board, title, now=now, new_id=lambda: next(new_ids))
    whole = board.to_dict()
    for card in whole["cards"]:  # as the earlier builds stored them
        for later in ("blocked_by", "metadata", "number"):
            del card[later]
    whole.pop("next_number")
    with tl.store.write() as tx:
        tx.save_doc(BOARD_KIND, "old", 2, whole, "2026-01-01T00:00:00.000Z")
    before = tl.board("old").list()
    assert [(c["id"], c["number"]) for c in before["cards"]] == [("c1", 1), ("c2", 2)]
    after = tl.board("old").add("third")
    assert after["cards"][:2] == before["cards"] and after["card"]["number"] == 3
    with tl.store.read() as tx:
        doc = tx.load_doc(BOARD_KIND, "old")
    assert doc is not None and "cards" not in doc.state
    with taskloom.connect(tl.url) as fresh:  # read from the store, not a cache
        assert fresh.board("old").list()["cards"] == after["cards"]


def _same(built: index.BoardIndex, kept: index.BoardIndex) -> None:
    assert dict(kept.counts) == dict(built.counts)
    assert kept.text == built.text
    assert set(kept.working) == set(built.working)
    assert dict(kept.waiters) == dict(built.waiters)
    assert kept.ready == built.ready
    assert dict(kept.gated) == dict(built.gated)
    assert list(kept.dicts) == list(built.dicts)
    assert list(kept.items) == list(built.items)


@pytest.mark.parametrize("seed", range(5))
def test_the_index_kept_from_each_change_reads_as_one_built_again(seed: int) -> None:
    rng = random.Random(seed)
    counter = iter(range(10_000))
    now = datetime(2026, 1, 1, tzinfo=UTC)
    board = Board("t")
    for step in range(200):
        now += timedelta(seconds=1)
        ids = [c.id for c in board.cards]
        pick = rng.choice(ids) if ids else ""
        try:
            choice = rng.randrange(6) if ids else 0
            if choice < 2:
                after = rng.sample(ids, min(len(ids), rng.randrange(3)))
                patch = CardPatch(blocked_by=after, approval_mode=rng.choice([None, "required"]))
                board, _ = ops.add(
                    board, f"t{step % 7}", patch, now=now, new_id=lambda: f"c{next(counter)}"
                )
            elif choice == 2:
                status = rng.choice(["todo", "done", "in_progress", "blocked", "ready"])
                board = ops.update_status(board, pick, status, now=now)
            elif choice == 3:
                board = ops.remove(board, pick, now=now, force=rng.random() < 0.7)
            elif choice == 4:
                board = ops.edit_many(
                    board,
                    {pick: CardPatch(add_blocked_by=rng.sample(ids, 1), title=f"t{step % 5}")},
                    now=now,
                )
            else:
                decided = [c.id for c in board.cards if c.status.value == "awaiting_approval"]
                if decided:
                    board = ops.decide_plan(board, decided[0], rng.random() < 0.5, now=now)
        except TaskloomError:
            continue
        _same(index.build(board.cards, board.find), board.index)


def test_a_board_built_by_hand_without_sort_keys_still_finds_its_cards() -> None:
    from taskloom.domain.card import Card

    now = datetime(2026, 1, 1, tzinfo=UTC)
    board = Board("t", cards=tuple(Card(id=f"c{i}", title=f"card {i}") for i in range(4)))
    assert [board.place(f"c{i}") for i in range(4)] == [0, 1, 2, 3]
    board = ops.update_status(board, "c2", "done", now=now)
    board = ops.remove(board, "c1", now=now)
    board, _ = ops.add(board, "card 4", now=now, new_id=lambda: "c4")
    assert [(c.id, c.status.value) for c in board.cards] == [
        ("c0", "todo"),
        ("c2", "done"),
        ("c3", "todo"),
        ("c4", "todo"),
    ]
    _same(index.build(board.cards, board.find), board.index)
