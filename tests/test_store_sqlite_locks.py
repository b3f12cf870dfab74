"""Waiting for a lock another process holds. SQLite itself waits only a short slice
(``BUSY_SLICE_MS``) before taskloom asks again, so a waiter looks often; these check that
the waiting still lasts up to the busy timeout for every kind of statement that takes a
lock: a write transaction, the queue's one-statement claim, its chained completion, a read."""

from __future__ import annotations

import gc
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import taskloom
from taskloom import Taskloom
from taskloom.store import sqlite as sqlite_store

HOLD_S = 0.4  # forty of SQLite's own waits


class Hold:
    """Let go of a lock after :data:`HOLD_S`, from another thread. ``letting_go`` is set
    just before: a wait that ended with it set lasted the whole hold (set after, a waiter
    could get in and look before the releasing thread had set it)."""

    def __init__(self, release: Callable[[], None]) -> None:
        self.letting_go = threading.Event()
        self._timer = threading.Timer(HOLD_S, self._release, (release,))
        self._timer.start()

    def _release(self, release: Callable[[], None]) -> None:
        self.letting_go.set()
        release()

    def join(self) -> None:
        self._timer.join(10)


def add(tl: Taskloom) -> object:
    return tl.queue.add("added while locked")


def claim(tl: Taskloom) -> object:
    return tl.queue.claim("w1")


def done_and_claim(tl: Taskloom) -> object:
    task = tl.queue.get(tl.queue.list(status="in_progress")[0].id)
    return tl.queue.done_and_claim(task.id, task.lease_token or "", "w1")


@pytest.mark.parametrize("write", [add, claim, done_and_claim])
def test_a_write_waits_out_another_processes_write_lock(
    sqlite_url: str, write: Callable[[Taskloom], object]
) -> None:
    with taskloom.connect(sqlite_url) as tl:
        for title in ("a", "b", "c"):
            tl.queue.add(title)
        tl.queue.claim("w1")
        blocker = sqlite3.connect(
            sqlite_url.removeprefix("sqlite:///"), isolation_level=None, check_same_thread=False
        )
        blocker.execute("BEGIN IMMEDIATE")
        held = Hold(lambda: blocker.execute("COMMIT"))
        try:
            assert write(tl)
            assert held.letting_go.is_set()  # it waited the whole hold, not one slice
        finally:
            held.join()
            blocker.close()


def test_a_read_waits_out_a_lock_held_while_none_of_its_connections_is_open(
    tmp_path: Path,
) -> None:
    """Another process can hold the whole file for a while when none of ours is open: the
    last connection to close checkpoints under an exclusive lock. Here a connection in
    exclusive locking mode stands in for it."""
    path = tmp_path / "q.db"
    tl = taskloom.connect(f"sqlite:///{path}")
    opener = threading.Thread(target=lambda: tl.queue.add("there"))
    opener.start()
    opener.join()  # the store is ready
    gc.collect()  # and the thread's connection, dropped with the thread, is closed
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("SELECT count(*) FROM tasks").fetchone()  # takes the file's lock, keeps it
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        sqlite3.connect(path, timeout=0).execute("SELECT 1 FROM tasks").fetchone()
    held = Hold(holder.close)
    try:
        titles = [t.title for t in tl.queue.list()]
        assert titles == ["there"] and held.letting_go.is_set()
    finally:
        held.join()
        tl.close()


def test_the_wait_still_ends_in_store_busy(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT_MS", 200)
    with taskloom.connect(sqlite_url) as tl:
        tl.queue.add("a")
        blocker = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(taskloom.StoreBusy, match="locked"):
                tl.queue.claim("w1")
            assert tl.queue.stats()["ready"] == 1  # refused whole: nothing was claimed
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
