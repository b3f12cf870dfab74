"""Pruning a backlog of events, a batch per write transaction, never locks other writers out
for longer than one batch: they get in between batches."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import taskloom
from taskloom.store.retention import RetentionPolicy, apply_all, set_policy


def test_pruning_a_backlog_lets_a_waiting_writer_in_between_batches(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    with taskloom.connect(url) as tl:
        set_policy(tl.store, tl.now(), keep=None)  # only the prune below deletes events
        tl.queue.max_active = 10_000
        tl.queue.add_many({"title": f"job {i}"} for i in range(4_000))
    writes: list[float] = []
    started, stop = threading.Event(), threading.Event()

    def writer() -> None:
        with taskloom.connect(url) as other:
            board = other.board("writer")
            card = board.add("toggled")["card"]["id"]
            while not stop.is_set():
                board.update_status(card, "in_progress" if len(writes) % 2 == 0 else "todo")
                writes.append(time.monotonic())
                started.set()
                time.sleep(0.002)

    thread = threading.Thread(target=writer)
    thread.start()
    seen: list[int] = []  # the writer's commits so far, after each batch
    try:
        assert started.wait(10)
        with taskloom.connect(url) as tl:
            deleted = apply_all(
                tl.store,
                tl.now,
                policy=RetentionPolicy(keep=1),
                batch=100,
                progress=lambda _: seen.append(len(writes)),
            )
    finally:
        stop.set()
        thread.join()
    assert deleted >= 4_000 and len(seen) >= 39
    got_in = sum(1 for before, after in itertools.pairwise(seen) if after > before)
    assert got_in >= len(seen) // 2, (got_in, len(seen))
