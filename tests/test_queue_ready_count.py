"""The queue's cap counts the ready tasks as they stand after every kind of change: claims,
failures, cancels, blocked dependents, requeues, expiry, pruning and evictions. On SQLite the
database's triggers keep a bound (``ready_bound``) that a claim never writes: it must never
be below a count of the rows, and an add counts the rows once it passes the cap."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import taskloom
from taskloom.cli import main
from taskloom.client import Taskloom
from tests.conftest import FakeClock


def _ready(tl: Taskloom) -> int:
    return tl.queue.stats()["ready"]


def _bound(tl: Taskloom) -> int:
    with sqlite3.connect(tl.url.removeprefix("sqlite:///")) as conn:
        (bound,) = conn.execute("SELECT n FROM ready_bound").fetchone()
    return int(bound)


def _kept_count_matches(tl: Taskloom) -> None:
    """On SQLite, the bound the triggers keep is at least the rows' own count."""
    if tl.url.startswith("sqlite:///"):
        assert _bound(tl) >= _ready(tl)


def test_the_cap_counts_ready_tasks_through_every_change(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    tl, q = tl_fixed, tl_fixed.queue
    q.max_active = 4
    answers = q.add_many(
        [
            {"title": "build", "ref": "build", "priority": 1},
            {"title": "test", "after": ["build"], "priority": 2},
            {"title": "deploy", "after": ["build"], "priority": 3},
            {"title": "expiring", "ttl_s": 5, "priority": 4},
        ]
    )
    build = answers[0][0]
    assert _ready(tl) == 4
    _kept_count_matches(tl)

    claimed = q.claim("w1")  # build: ready -> in progress
    assert claimed is not None and claimed.id == build.id
    assert _ready(tl) == 3
    q.add("one more", priority=5)  # 4 ready: at the cap, nothing evicted
    assert all(t.status.value == "ready" for t in q.list(status="ready"))
    _kept_count_matches(tl)

    q.fail(build.id, claimed.lease_token or "", "flaky")  # back to ready, over the cap
    assert _ready(tl) == 5  # (only an add or a requeue makes room)
    _kept_count_matches(tl)

    q.cancel(build.id)  # canceled, and its two dependents blocked
    assert _ready(tl) == 2
    _kept_count_matches(tl)

    q.requeue(build.id)  # it and its dependents ready again; the least urgent evicted
    assert _ready(tl) == 4
    assert [t.title for t in q.list(status="canceled")] == ["one more"]
    _kept_count_matches(tl)

    clock.advance(10)  # the task with a TTL expires before this claim takes build
    assert [t.title for t in q.claim_batch("w2", 5)] == ["build"]
    assert _ready(tl) == 2
    _kept_count_matches(tl)

    for t in q.list(status="ready"):
        q.cancel(t.id)
    clock.advance(30 * 86400)
    q.prune(older_than_s=86400)
    _kept_count_matches(tl)
    for n in range(6):  # a fresh start: the cap holds again, by the count kept
        q.add(f"again {n}", priority=n)
    assert _ready(tl) == 4
    _kept_count_matches(tl)


def test_a_copied_database_counts_what_it_holds(backend: str, db_url: str, tmp_path: Path) -> None:
    """``migrate-db`` leaves the count out of the copy; the destination counts what it gets,
    from either backend."""
    with taskloom.connect(db_url) as tl:
        tl.queue.add_many([{"title": f"t{n}"} for n in range(5)])
        tl.queue.claim("w1")
    target = f"sqlite:///{tmp_path / 'copy.db'}"
    assert main(["migrate-db", "--from", db_url, "--to", target]) == 0
    with taskloom.connect(target) as copied:
        assert _ready(copied) == 4
        _kept_count_matches(copied)


def test_claims_leave_the_bound_alone_and_an_add_past_the_cap_counts(sqlite_url: str) -> None:
    with taskloom.connect(sqlite_url) as tl:
        q = tl.queue
        q.max_active = 5
        q.add_many([{"title": f"t{n}", "priority": n} for n in range(5)])
        assert _bound(tl) == 5
        for _ in range(3):
            task = q.claim("w1")
            assert task is not None
            q.done(task.id, task.lease_token or "")
        assert (_ready(tl), _bound(tl)) == (2, 5)
        q.add("sixth", priority=9)  # past the bound's cap: counted, 3 ready, nothing evicted
        assert (_ready(tl), _bound(tl)) == (3, 3)
        assert q.list(status="canceled") == []
        q.add_many([{"title": f"u{n}", "priority": 20 + n} for n in range(3)])
        assert (_ready(tl), _bound(tl)) == (5, 5)  # one over: the least urgent evicted
        assert [t.title for t in q.list(status="canceled")] == ["u2"]
