"""The work queue on every backend: claims, leases, fencing, dedup, caps, surfacing."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import socket
import subprocess
import sys
from typing import Any

import pytest

import taskloom
from taskloom._runtime import INIT_PID_NAMESPACE, Runtime, host_name
from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput, LeaseLost, NotFound
from taskloom.domain.events import TASK_STATE
from taskloom.domain.queue import (
    CHANGE_FIELDS,
    Task,
    iso_time,
    validate_new_task,
)
from taskloom.domain.surface import surface_block
from taskloom.queue import doctor as doctor_module
from taskloom.queue.handle import Queue
from taskloom.tools.registry import ToolContext
from tests.conftest import FakeClock


def queue_of(tl: Taskloom, **options: Any) -> Queue:
    """Another queue on ``tl``'s database, with its clock and ids."""
    return Queue(Runtime(tl.store, tl.now, tl.new_id), **options)


def test_validation_limits_and_secret_guard() -> None:
    with pytest.raises(InvalidInput, match="title must not be empty"):
        validate_new_task("  ", "", "task", None, 3)
    with pytest.raises(InvalidInput, match="longer than 200 bytes"):
        validate_new_task("é" * 101, "", "task", None, 3)
    with pytest.raises(InvalidInput, match="body is longer than 4096"):
        validate_new_task("t", "x" * 4097, "task", None, 3)
    with pytest.raises(InvalidInput, match="invalid task kind"):
        validate_new_task("t", "", "Bad Kind!", None, 3)
    with pytest.raises(InvalidInput, match=r"payload key 'config\.api_key' looks like a secret"):
        validate_new_task("t", "", "task", {"config": {"api_key": "sk-1"}}, 3)
    with pytest.raises(InvalidInput, match="larger than 8192"):
        validate_new_task("t", "", "task", {"blob": "x" * 9000}, 3)


def test_surface_block_escapes_and_frames() -> None:
    tasks = [Task(id=f"t{i}", title=f"<script>{i}</script>") for i in range(7)]
    block = surface_block("agent-1", tasks, 7)
    assert "&lt;script&gt;0&lt;/script&gt;" in block and "<script>" not in block
    assert "untrusted data" in block and "… and 2 more" in block
    assert block.count("<task ") == 5
    hostile = surface_block("agent-1", [Task(id="t", title="\x1b[2Jok \u202egnp.exe")], 1)
    assert "\x1b" not in hostile and "\u202e" not in hostile  # shown, not obeyed
    assert "\\x1b[2Jok \\u202egnp.exe" in hostile


def test_a_task_read_from_a_row_is_the_task_built_from_its_fields() -> None:
    """``Task.from_row`` fills the slots itself (it is on every claim's path); the result
    must be indistinguishable from the dataclass built the ordinary way."""
    from taskloom.domain.queue import Task, TaskStatus

    full = Task(
        id="t1", title="fix", body="b", kind="k", priority=5, status=TaskStatus.IN_PROGRESS,
        payload={"a": [1]}, created_at=1.5, claimed_by="w", pid=7, lease_token="tok",
        attempts=2, changed_at=2.5,
    )  # fmt: skip
    row = {**full.to_dict(with_token=True), "payload": '{"a": [1]}', "status": "in_progress"}
    row.update({name: getattr(full, name) for name in ("created_at", "changed_at")})
    row.update(not_before=None, expires_at=None, claimed_at=None, lease_expires_at=None)
    row["completed_at"] = None
    rebuilt = Task.from_row(row)
    assert rebuilt == full and rebuilt.status is TaskStatus.IN_PROGRESS
    assert hash(rebuilt.id) == hash(full.id) and rebuilt.payload == {"a": [1]}
    sparse = Task.from_row({"id": "t2", "title": "x", "status": "ready", "payload": "{}"})
    assert sparse == Task(id="t2", title="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        sparse.title = "y"  # type: ignore[misc]


def test_claim_order_priority_then_age(tl_fixed: Taskloom, clock) -> None:  # type: ignore[no-untyped-def]
    q = tl_fixed.queue
    q.add("low", priority=200)
    clock.advance(1)
    q.add("urgent old", priority=1)
    clock.advance(1)
    q.add("urgent new", priority=1)
    got = [q.claim("a").title for _ in range(3)]  # type: ignore[union-attr]
    assert got == ["urgent old", "urgent new", "low"]
    assert q.claim("a") is None


def test_claim_honours_target_not_before_expiry_and_kinds(tl_fixed: Taskloom, clock) -> None:  # type: ignore[no-untyped-def]
    q = tl_fixed.queue
    q.add("for b", target_agent="b")
    q.add("later", delay_s=60)
    q.add("expires", ttl_s=10)
    q.add("review", kind="review")
    clock.advance(11)
    assert q.claim("a", kinds=["build"]) is None
    assert q.claim("a", kinds=["review"]).title == "review"  # type: ignore[union-attr]
    assert q.claim("a") is None  # "for b" is targeted, "later" not yet, "expires" expired
    assert q.claim("b").title == "for b"  # type: ignore[union-attr]
    clock.advance(60)
    assert q.claim("a").title == "later"  # type: ignore[union-attr]


def test_lease_token_fences_done_fail_release_extend(tl_fixed: Taskloom, clock) -> None:  # type: ignore[no-untyped-def]
    q = tl_fixed.queue
    task, added = q.add("job")
    assert added
    first = q.claim("w1", lease=30)
    assert first is not None and first.attempts == 1 and first.lease_token
    clock.advance(31)
    second = q.claim("w2", lease=30)  # the expired lease is reclaimed and re-issued
    assert second is not None and second.id == task.id and second.attempts == 2
    for action in (
        lambda: q.done(task.id, first.lease_token or "", "late"),
        lambda: q.fail(task.id, first.lease_token or "", "late"),
        lambda: q.release(task.id, first.lease_token or ""),
        lambda: q.extend(task.id, first.lease_token or ""),
    ):
        with pytest.raises(LeaseLost, match="no longer yours"):
            action()
    assert q.get(task.id).claimed_by == "w2"
    done = q.done(task.id, second.lease_token or "", "ok")
    assert done.status == "completed" and done.result == "ok"
    with pytest.raises(NotFound):
        q.done("nope", "x")


def test_done_and_claim_completes_then_takes_the_next_eligible(tl_fixed: Taskloom, clock) -> None:  # type: ignore[no-untyped-def]
    q = tl_fixed.queue
    q.add("first", priority=1)
    clock.advance(1)
    q.add("for b", priority=1, target_agent="b")
    q.add("review", priority=2, kind="review")
    q.add("build", priority=3, kind="build")
    first = q.claim("a")
    assert first is not None and first.title == "first"
    done, nxt = q.done_and_claim(first.id, first.lease_token or "", "a", result="ok", lease=60)
    assert (done.id, done.status, done.result, done.lease_token) == (
        first.id,
        "completed",
        "ok",
        None,
    )
    assert nxt is not None and nxt.title == "review" and nxt.claimed_by == "a"
    assert nxt.lease_token and nxt.attempts == 1
    assert nxt.lease_expires_at == pytest.approx(clock().timestamp() + 60)
    _, last = q.done_and_claim(nxt.id, nxt.lease_token, "a", kinds=["build"])
    assert last is not None and last.title == "build"
    assert q.done_and_claim(last.id, last.lease_token or "", "a")[1] is None  # only "for b"
    assert q.stats()["completed"] == 3 and q.stats()["ready"] == 1


def test_done_and_claim_with_a_lost_lease_claims_nothing(tl_fixed: Taskloom, clock) -> None:  # type: ignore[no-untyped-def]
    q = tl_fixed.queue
    task, _ = q.add("job")
    q.add("other")
    first = q.claim("w1", lease=30)
    assert first is not None and first.id == task.id
    clock.advance(31)
    second = q.claim("w2", lease=30)  # the expired lease went back to ready and to w2
    assert second is not None and second.id == task.id
    with pytest.raises(LeaseLost, match="no longer yours"):
        q.done_and_claim(task.id, first.lease_token or "", "w1")
    assert q.get(task.id).claimed_by == "w2"
    assert q.stats()["ready"] == 1  # "other" was not claimed by the failed call
    with pytest.raises(InvalidInput):
        q.done_and_claim(task.id, second.lease_token or "", " ")
    assert q.get(task.id).status == "in_progress"  # a bad agent id changes nothing


def test_done_and_claim_from_the_held_task_returns_the_row_as_stored(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    q.add("job", body="b", payload={"k": [1, 2]}, priority=7, group_key="g", ttl_s=600)
    q.add("next")
    held = q.claim("w1", lease=30)
    assert held is not None
    clock.advance(10)
    q.extend(held.id, held.lease_token or "", lease=60)  # the held copy's lease end is stale
    clock.advance(5)
    done, nxt = q.done_and_claim(held.id, held.lease_token or "", "w1", result="ok", held=held)
    assert done == q.get(held.id)
    assert (done.status, done.result, done.lease_token, done.claimed_by) == (
        "completed",
        "ok",
        None,
        "w1",
    )
    assert nxt is not None and nxt.title == "next"


def test_done_and_claim_from_a_held_task_with_a_lost_lease_claims_nothing(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    task, _ = q.add("job")
    q.add("other")
    first = q.claim("w1", lease=30)
    assert first is not None
    clock.advance(31)
    assert q.claim("w2", lease=30) is not None
    with pytest.raises(LeaseLost):
        q.done_and_claim(task.id, first.lease_token or "", "w1", held=first)
    assert (q.get(task.id).claimed_by, q.stats()["ready"]) == ("w2", 1)


def test_done_and_claim_refuses_a_held_task_that_is_not_the_one_completed(tl: Taskloom) -> None:
    q = tl.queue
    q.add("a")
    q.add("b")
    a, b = q.claim_batch("w1", 2, lease=30)
    for held in (b, dataclasses.replace(a, lease_token="other"), "a task"):
        with pytest.raises(InvalidInput, match="held is the task being completed"):
            q.done_and_claim(a.id, a.lease_token or "", "w1", held=held)  # type: ignore[arg-type]
    assert q.get(a.id).status == "in_progress"  # refused before anything changed


def test_done_and_claim_takes_an_expired_lease(tl_fixed: Taskloom, clock: FakeClock) -> None:
    q = tl_fixed.queue
    stale, _ = q.add("stale")
    live, _ = q.add("live")
    assert q.claim("w1", lease=5) is not None
    mine = q.claim("w2", lease=300)
    assert mine is not None and mine.id == live.id
    clock.advance(6)
    _, nxt = q.done_and_claim(mine.id, mine.lease_token or "", "w2")
    assert nxt is not None and nxt.id == stale.id and nxt.attempts == 2


def test_done_many_completes_each_under_its_own_lease(tl_fixed: Taskloom, clock: FakeClock) -> None:
    q = tl_fixed.queue
    for i in range(4):
        q.add(f"job {i}")
    a, b, c = q.claim_batch("w1", 3, lease=30)
    stale = b.lease_token or ""
    for held in (a, c):
        q.extend(held.id, held.lease_token or "", 300)
    clock.advance(31)
    b2 = q.claim("w2", lease=30)  # b's lease expired and went to w2
    assert b2 is not None and b2.id == b.id
    done, lost = q.done_many(
        [(c.id, c.lease_token or "", "c ok"), (a.id, a.lease_token or ""), (b.id, stale, "x")]
    )
    assert [(t.id, t.status, t.result, t.lease_token) for t in done] == [
        (c.id, "completed", "c ok", None),
        (a.id, "completed", None, None),
    ]
    assert lost == [b.id]
    assert q.get(b.id).status == "in_progress" and q.get(b.id).claimed_by == "w2"
    with tl_fixed.store.read() as tx:
        completed = [e.data["id"] for e in tx.events_after(0) if e.data["status"] == "completed"]
    assert sorted(completed) == sorted([a.id, c.id])  # one event per completed task
    assert q.done_many([]) == ([], [])
    with pytest.raises(InvalidInput, match="task_id, lease_token"):
        q.done_many([(b.id,)])  # type: ignore[list-item]


def test_done_many_from_the_held_tasks_returns_the_rows_as_stored(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    q.add("a", body="b", payload={"k": [1, 2]}, priority=7, group_key="g", ttl_s=600)
    for i in range(3):
        q.add(f"job {i}")
    a, b, c = q.claim_batch("w1", 3, lease=30)
    q.extend(a.id, a.lease_token or "", lease=300)  # the held copy's lease end is stale
    q.extend(c.id, c.lease_token or "", lease=300)
    clock.advance(31)
    b2 = q.claim("w2", lease=30)  # b's lease ran out and went to w2
    assert b2 is not None and b2.id == b.id
    clock.advance(1)
    done, lost = q.done_many(
        [
            (c.id, c.lease_token or "", "c ok"),
            (a.id, a.lease_token or ""),
            (b.id, b.lease_token or ""),
        ],
        held=[a, b, c],
    )
    assert [t.id for t in done] == [c.id, a.id] and lost == [b.id]
    assert done == [q.get(c.id), q.get(a.id)]
    assert (done[0].status, done[0].result, done[0].lease_token) == ("completed", "c ok", None)
    assert q.get(b.id).claimed_by == "w2"


def test_done_many_refuses_held_tasks_that_are_not_the_ones_completed(tl: Taskloom) -> None:
    q = tl.queue
    for name in "abc":
        q.add(name)
    a, b, c = q.claim_batch("w1", 3, lease=30)
    items = [(a.id, a.lease_token or ""), (b.id, b.lease_token or "")]
    for held in ([a], [a, c], [a, b, b], [a, dataclasses.replace(b, lease_token="x")], a, [a, "b"]):
        with pytest.raises(InvalidInput, match="held is the tasks being completed"):
            q.done_many(items, held=held)  # type: ignore[arg-type]
    assert q.stats()["in_progress"] == 3  # refused before anything changed
    assert q.done_many([], held=[]) == ([], [])


def test_done_many_beyond_one_statement(tl: Taskloom) -> None:
    q = tl.queue
    with tl.store.write() as tx:
        for i in range(450):
            tx.execute(
                "INSERT INTO tasks (id, title, created_at) VALUES (?, ?, ?)", (f"t{i}", "job", i)
            )
    claimed = q.claim_batch("w", 450)
    done, lost = q.done_many([(t.id, t.lease_token or "") for t in claimed] * 2)  # dups collapse
    assert len(done) == 450 and lost == []
    assert q.stats()["completed"] == 450


def test_fail_retries_then_dead_letter(tl: Taskloom) -> None:
    q = tl.queue
    task, _ = q.add("flaky", max_attempts=2)
    for expected in ("ready", "dead"):
        claimed = q.claim("w")
        assert claimed is not None
        failed = q.fail(task.id, claimed.lease_token or "", "boom")
        assert failed.status == expected and failed.last_error == "boom"
    assert q.claim("w") is None
    other, _ = q.add("no retry")
    c = q.claim("w")
    assert c is not None
    assert q.fail(other.id, c.lease_token or "", "fatal", retry=False).status == "dead"


def _dead(q: Queue, title: str, **fields: Any) -> Task:
    task, _ = q.add(title, max_attempts=1, **fields)
    claimed = q.claim("w")
    assert claimed is not None and claimed.id == task.id
    dead = q.fail(task.id, claimed.lease_token or "", "upstream down")
    assert dead.status == "dead"
    return dead


def test_a_dead_task_is_requeued_with_its_attempts_reset(tl: Taskloom) -> None:
    q = tl.queue
    dead = _dead(q, "flaky", dedup_key="nightly")
    back = q.requeue(dead.id)
    assert back.status == "ready" and back.attempts == 0 and back.max_attempts == 1
    assert back.last_error == "upstream down"  # for the next worker to read
    assert back.completed_at is None and back.claimed_by is None and back.not_before is None
    assert q.get(dead.id) == back
    with tl.store.read() as tx:
        last = [e.data for e in tx.events_after(0) if e.type == TASK_STATE][-1]
    assert last["id"] == dead.id and last["status"] == "ready" and last["attempts"] == 0
    again = q.claim("w")
    assert again is not None and again.id == dead.id and again.attempts == 1
    # It holds its dedup key again, as any live task does.
    assert q.add("flaky again", dedup_key="nightly") == (again, False)

    with pytest.raises(InvalidInput, match="is in_progress: only a dead task is requeued"):
        q.requeue(again.id)
    assert q.get(again.id) == again
    with pytest.raises(NotFound):
        q.requeue("no-such-task")


def test_a_requeue_is_refused_while_another_task_holds_its_dedup_key(tl: Taskloom) -> None:
    q = tl.queue
    dead = _dead(q, "sync", dedup_key="sync")
    newer, added = q.add("sync, added again", dedup_key="sync")
    assert added  # a dead task holds no key
    with pytest.raises(InvalidInput, match=f"task '{newer.id}' now holds the dedup key 'sync'"):
        q.requeue(dead.id)
    assert q.get(dead.id) == dead


def test_an_expired_dead_task_is_not_requeued(tl_fixed: Taskloom, clock: FakeClock) -> None:
    q = tl_fixed.queue
    dead = _dead(q, "report", ttl_s=60)
    clock.advance(120)
    with pytest.raises(InvalidInput, match=r"expired at .*: add it again"):
        q.requeue(dead.id)
    assert q.get(dead.id) == dead


def test_a_requeue_keeps_to_the_cap(tl: Taskloom) -> None:
    q = tl.queue
    dead = _dead(q, "least urgent", priority=500)
    q.max_active = 1
    urgent, _ = q.add("urgent", priority=1)
    back = q.requeue(dead.id)  # over the cap, and the least urgent ready task
    assert back.status == "canceled" and back.result == "evicted: queue is at its cap"
    assert q.get(urgent.id).status == "ready" and q.get(dead.id) == back


def test_release_does_not_count_an_attempt(tl: Taskloom) -> None:
    q = tl.queue
    task, _ = q.add("x")
    c = q.claim("w")
    assert c is not None
    released = q.release(task.id, c.lease_token or "")
    assert released.status == "ready" and released.attempts == 0


def test_expired_leases_go_dead_after_max_attempts(tl_fixed: Taskloom, clock) -> None:  # type: ignore[no-untyped-def]
    q = tl_fixed.queue
    task, _ = q.add("x", max_attempts=1)
    assert q.claim("w", lease=5) is not None
    clock.advance(6)
    reclaimed = q.reclaim()
    assert [(t.id, t.status) for t in reclaimed] == [(task.id, "dead")]
    assert reclaimed[0].last_error == "lease expired"


def test_dedup_returns_live_task(tl: Taskloom) -> None:
    q = tl.queue
    first, added = q.add("a", dedup_key="k")
    again, added_again = q.add("b", dedup_key="k")
    assert added and not added_again and again.id == first.id
    c = q.claim("w")
    assert c is not None
    q.done(first.id, c.lease_token or "")
    third, added_third = q.add("c", dedup_key="k")
    assert added_third and third.id != first.id


def test_cap_evicts_least_urgent_oldest_ready_never_in_progress(tl: Taskloom) -> None:
    q = queue_of(tl, max_active=2)
    keep, _ = q.add("urgent", priority=1)
    q.add("running", priority=500)
    assert q.claim("w", kinds=None) is not None  # takes "urgent"
    q.add("low", priority=900)
    q.add("mid", priority=50)  # cap 2 ready: evicts "low"
    statuses = {t.title: t.status.value for t in q.list(limit=10)}
    assert statuses["urgent"] == "in_progress"
    assert statuses["low"] == "canceled"
    assert statuses["running"] == "ready" and statuses["mid"] == "ready"
    assert keep.id


def test_cap_holds_over_many_adds_and_other_producers(tl_fixed: Taskloom) -> None:
    """The cap holds exactly after every add, whichever producer adds, and a new cap
    applies at the next add."""
    a, b = queue_of(tl_fixed, max_active=20), queue_of(tl_fixed, max_active=20)
    for i in range(35):
        a.add(f"a{i}")
    assert a.stats()["ready"] == 20 and a.stats()["canceled"] == 15
    with tl_fixed.store.write() as tx:
        tx.execute("DELETE FROM tasks")
    for i in range(17):
        a.add(f"a{i}")
        b.add(f"b{i}")
        assert a.stats()["ready"] == min(2 * i + 2, 20)
    a.max_active = 5
    a.add("after")
    assert a.stats()["ready"] == 5


def test_every_add_appends_its_event(tl: Taskloom) -> None:
    """Each task added, one at a time or many at once, gets its event, as ``get`` shows it."""
    q = tl.queue
    q.add("first")
    with tl.store.read() as tx:
        head = tx.event_head()
    added = [q.add(f"t{i}", payload={"i": i})[0] for i in range(3)]
    added += [task for task, _ in q.add_many([{"title": "m1"}, {"title": "m2"}])]
    with tl.store.read() as tx:
        events = [e for e in tx.events_after(head) if e.type == "task_state"]
    assert [e.data["id"] for e in events] == [t.id for t in added]
    assert all(e.data == q.get(e.data["id"]).to_dict() for e in events)
    assert [t.title for t in added] == ["t0", "t1", "t2", "m1", "m2"]


def test_cancel_prune_stats(tl_fixed: Taskloom, clock) -> None:  # type: ignore[no-untyped-def]
    q = tl_fixed.queue
    task, _ = q.add("x")
    q.cancel(task.id, "not needed")
    with pytest.raises(InvalidInput, match="already canceled"):
        q.cancel(task.id)
    assert q.stats()["canceled"] == 1
    clock.advance(8 * 86400)
    assert q.prune() == 1
    assert q.stats()["total"] == 0


def test_prune_deletes_the_tasks_events_but_never_the_newest_event(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue

    def events_of(*tasks: Any) -> list[int]:
        with tl_fixed.store.read() as tx:
            return [
                len(tx.query("SELECT id FROM events WHERE task_id = ?", (t.id,))) for t in tasks
            ]

    gone, _ = q.add("gone")
    q.cancel(gone.id)
    kept, _ = q.add("kept")
    last, _ = q.add("last")
    q.cancel(last.id)  # the newest event of all
    clock.advance(8 * 86400)
    assert events_of(gone, kept, last) == [2, 1, 2]
    assert q.prune() == 2
    assert events_of(gone, kept, last) == [0, 1, 1]
    with tl_fixed.store.read() as tx:
        newest = tx.event_head()
    q.add("next")
    with tl_fixed.store.read() as tx:
        assert tx.event_head() > newest  # ids go on: no cursor sees an id twice


def test_every_change_emits_task_state(tl: Taskloom) -> None:
    q = tl.queue
    task, _ = q.add("x")
    c = q.claim("w")
    assert c is not None
    q.done(task.id, c.lease_token or "")
    with tl.store.read() as tx:
        events = tx.events_after(0)
    assert [e.data["status"] for e in events if e.type == "task_state"] == [
        "ready",
        "in_progress",
        "completed",
    ]
    assert all(e.data["lease_token"] is None for e in events)


def test_event_is_the_task_as_the_api_shows_it(tl_fixed: Taskloom, clock: FakeClock) -> None:
    """The database's trigger writes each event; it must say exactly what ``get`` says, times
    included (milliseconds rounded the same way), for every kind of change."""
    q = tl_fixed.queue

    def latest_event_matches(task_id: str) -> None:
        with tl_fixed.store.read() as tx:
            event = [e for e in tx.events_after(0) if e.data["id"] == task_id][-1]
        shown = q.get(task_id).to_dict()
        assert event.data == shown
        assert event.created_at == shown["changed_at"]
        clock.advance(1.0004)  # sub-millisecond parts exercise the rounding

    clock.advance(0.0125)
    task, _ = q.add("t", body="b", payload={"n": [1, "two"]}, target_agent="w", ttl_s=60)
    latest_event_matches(task.id)
    for step in ("extend and release", "fail", "done"):
        held = q.claim("w", lease=30)
        assert held is not None
        latest_event_matches(task.id)
        token = held.lease_token or ""
        if step == "extend and release":
            q.extend(task.id, token, 45)
            latest_event_matches(task.id)
            q.release(task.id, token)
        elif step == "fail":
            q.fail(task.id, token, "boom")
        else:
            q.done(task.id, token, "ok")
        latest_event_matches(task.id)
    other, _ = q.add("other")
    q.cancel(other.id, "not needed")
    latest_event_matches(other.id)
    assert q.get(task.id).status == "completed"


@pytest.mark.parametrize("known", [True, False], ids=["claimed here", "claimed elsewhere"])
def test_done_and_claim_appends_each_task_s_event_as_get_shows_it(
    tl_fixed: Taskloom, clock: FakeClock, db_url: str, known: bool
) -> None:
    """One call, two changes: the completion's event and the claim's, each the task as
    ``get`` shows it, and nothing else; the task completed is not the one claimed."""
    q = tl_fixed.queue
    first, _ = q.add("first", payload={"n": 1})
    second, _ = q.add("second", body="b")
    with taskloom.connect(db_url, clock=clock) as elsewhere:
        # Claimed elsewhere, the completing queue reads the completed task back.
        held = (q if known else elsewhere.queue).claim("w", lease=30)
    assert held is not None and held.id == first.id
    clock.advance(2.0004)
    with tl_fixed.store.read() as tx:
        head = tx.event_head()
    done, nxt = q.done_and_claim(first.id, held.lease_token or "", "w", result="ok", lease=60)
    assert nxt is not None and nxt.id == second.id and nxt.lease_token
    assert done.to_dict() == q.get(first.id).to_dict()
    assert done.status == "completed" and done.result == "ok" and done.lease_token is None
    assert nxt.to_dict(with_token=True) == q.get(second.id).to_dict(with_token=True)
    assert (nxt.attempts, done.attempts) == (1, 1)
    with tl_fixed.store.read() as tx:
        events = {e.data["id"]: e for e in tx.events_after(head)}
    assert sorted(events) == sorted([first.id, second.id])
    for task_id, event in events.items():
        assert event.type == "task_state"
        assert event.data == q.get(task_id).to_dict()


def _stored_changes(tl: Taskloom) -> list[dict[str, Any]]:
    """Each task event's change as stored: in columns of the event, times in seconds, and
    ``data`` a JSON null."""
    columns = ", ".join(CHANGE_FIELDS[1:])
    with tl.store.read() as tx:
        rows = tx.query(
            f"SELECT task_id AS id, {columns}, data FROM events WHERE type = 'task_state'"
            " ORDER BY id"
        )
    assert all(r.pop("data") in ("null", None) for r in rows)
    return rows


def test_a_task_event_stores_times_as_the_row_has_them(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """A task's event stores its times as the task row has them (unix seconds); readers see
    RFC 3339 text, as ``get`` shows the task."""
    clock.advance(0.0125)
    task, _ = tl_fixed.queue.add("t")
    (stored,) = _stored_changes(tl_fixed)
    assert stored["changed_at"] == task.changed_at
    with tl_fixed.store.read() as tx:
        (shown,) = [e.data for e in tx.events_after(0) if e.type == TASK_STATE]
    assert shown == tl_fixed.queue.get(task.id).to_dict()
    assert shown["changed_at"] == iso_time(task.changed_at)


def test_a_change_is_stored_compactly_and_read_whole(tl_fixed: Taskloom, clock: FakeClock) -> None:
    """A change's event stores only what a change can alter; readers join the fixed fields
    back from the task. The events of a task deleted since are left out."""
    q = tl_fixed.queue
    clock.advance(0.0125)
    task, _ = q.add("t", body="b", payload={"n": 1}, source="cli")
    held = q.claim("w", lease=30)
    assert held is not None
    with tl_fixed.store.read() as tx:
        shown = [e.data for e in tx.events_after(0) if e.type == TASK_STATE]
    stored = _stored_changes(tl_fixed)[-1]
    assert stored.keys() == set(CHANGE_FIELDS)
    assert stored["status"] == "in_progress" and stored["claimed_by"] == "w"
    assert stored["lease_expires_at"] == held.lease_expires_at
    assert shown == [task.to_dict(), held.to_dict()]  # read whole, without the lease token
    with tl_fixed.store.write() as tx:
        tx.execute("DELETE FROM tasks WHERE id = ?", (task.id,))
    with tl_fixed.store.read() as tx:
        events = [e.data for e in tx.events_after(0) if e.type == TASK_STATE]
    assert events == []  # a deleted task's events cannot be shown whole: left out


def test_a_completion_answers_the_task_as_stored(tl_fixed: Taskloom, clock: FakeClock) -> None:
    """Each way of completing answers the task exactly as the row now holds it, whether the
    queue that finishes it claimed it or not."""
    q = tl_fixed.queue
    stranger = queue_of(tl_fixed)  # the same database, another queue
    for finisher in (q, stranger):
        for how in ("done", "done_and_claim", "done_many"):
            task, _ = q.add("t", body="b", payload={"n": [1]}, target_agent="w", ttl_s=600)
            first = q.claim("w", lease=30)
            assert first is not None
            q.fail(task.id, first.lease_token or "", "flaky")  # attempts and last_error stay
            clock.advance(0.0125)
            held = q.claim("w", lease=30)
            assert held is not None and held.attempts == 2
            clock.advance(1.0004)
            token = held.lease_token or ""
            if how == "done_and_claim":
                done, _ = finisher.done_and_claim(task.id, token, "w", result="ok")
            elif how == "done_many":
                (done,), lost = finisher.done_many([(task.id, token, "ok")])
                assert lost == []
            else:
                done = finisher.done(task.id, token, "ok")
            assert done == q.get(task.id)
            assert done.last_error == "flaky" and done.completed_at == clock().timestamp()
            assert (done.claimed_by, done.lease_token, done.pid) == ("w", None, None)
        with pytest.raises(LeaseLost):  # a finished lease stays finished
            finisher.done(task.id, held.lease_token or "", "again")


def test_a_claim_answers_the_task_as_stored(tl_fixed: Taskloom, clock: FakeClock) -> None:
    """Each way of claiming answers the task exactly as the row now holds it: its lease,
    token and times, and a retried task's attempts and last error."""
    q = tl_fixed.queue
    for how in ("claim", "claim_batch", "done_and_claim"):
        q.add("spare", priority=0)
        spare = q.claim("w", lease=30)
        assert spare is not None
        task, _ = q.add(how, body="b", payload={"n": [1]}, target_agent="w", ttl_s=600)
        first = q.claim("w", lease=30)
        assert first is not None and first.id == task.id
        q.fail(task.id, first.lease_token or "", "flaky")
        clock.advance(0.0125)
        if how == "claim":
            got = q.claim("w", lease=30)
        elif how == "claim_batch":
            (got,) = q.claim_batch("w", 2, lease=30)
        else:
            _, got = q.done_and_claim(spare.id, spare.lease_token or "", "w", lease=30)
        assert got is not None and got == q.get(task.id), how
        assert (got.attempts, got.last_error, got.status) == (2, "flaky", "in_progress")
        assert got.lease_token and got.claimed_at == clock().timestamp()
        q.done(task.id, got.lease_token)
        if how != "done_and_claim":
            q.done(spare.id, spare.lease_token or "")


def test_a_lease_taken_over_elsewhere_is_lost(tl_fixed: Taskloom, clock: FakeClock) -> None:
    """The database decides whose lease it is: once another worker has taken the expired
    lease, the first one's done or done_and_claim fails and changes nothing."""
    q, other = tl_fixed.queue, queue_of(tl_fixed)
    finishes = {
        "done": lambda t: q.done(t.id, t.lease_token or ""),
        "done_and_claim": lambda t: q.done_and_claim(t.id, t.lease_token or "", "w1"),
    }
    for finish in finishes.values():
        task, _ = q.add("job")
        mine = q.claim("w1", lease=5)
        assert mine is not None and mine.id == task.id
        spare, _ = q.add("spare")
        clock.advance(6)
        theirs = other.claim("w2", lease=300)
        assert theirs is not None and theirs.id == task.id
        with pytest.raises(LeaseLost):
            finish(mine)
        assert q.get(task.id).claimed_by == "w2" and q.get(spare.id).status == "ready"
        other.done(task.id, theirs.lease_token or "")
        q.cancel(spare.id)


def test_what_a_worker_does_to_its_task_does_not_leak_into_answers(tl: Taskloom) -> None:
    """The task a claim hands out is the caller's: changing its payload changes nothing the
    queue answers later; payload integers of any size come back exactly; a result must be
    text, whichever way the completion goes."""
    q = tl.queue
    task, _ = q.add("t", payload={"big": 2**70, "n": 1})
    held = q.claim("w")
    assert held is not None and held.payload == {"big": 2**70, "n": 1} == q.get(task.id).payload
    held.payload["n"] = 99
    with pytest.raises(InvalidInput, match="text"):
        q.done(task.id, held.lease_token or "", 5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="text"):
        q.done_and_claim(task.id, held.lease_token or "", "w", result=5)  # type: ignore[arg-type]
    assert q.get(task.id).status == "in_progress"
    extended = q.extend(task.id, held.lease_token or "", 600)  # extend keeps it remembered
    done = q.done(task.id, extended.lease_token or "", "ok")
    assert done == q.get(task.id) and done.payload == {"big": 2**70, "n": 1}


def test_add_many_in_one_transaction_with_dedup_and_checks(tl: Taskloom) -> None:
    """A batch is answered in order like ``add``; a live or repeated dedup key answers the
    live (or first) task; one bad task adds none and is named by position."""
    q = tl.queue
    live, _ = q.add("already here", dedup_key="k1")
    batch = [
        {"title": "a", "priority": 5, "payload": {"n": 1}},
        {"title": "dup of live", "dedup_key": "k1"},
        {"title": "b", "dedup_key": "k2", "kind": "review", "target_agent": "w"},
        {"title": "dup in batch", "dedup_key": "k2"},
        {"title": "c", "delay_s": 60, "ttl_s": 600, "max_attempts": 5},
    ]
    answers = q.add_many(batch)
    assert [added for _, added in answers] == [True, False, True, False, True]
    a, dup_live, b, dup_batch, c = (task for task, _ in answers)
    assert dup_live == live and dup_batch == b
    assert (a.title, a.priority, a.payload) == ("a", 5, {"n": 1})
    assert (b.kind, b.target_agent, b.dedup_key) == ("review", "w", "k2")
    assert c.not_before == c.created_at + 60 and c.max_attempts == 5
    assert all(task == q.get(task.id) for task, _ in answers)
    with tl.store.read() as tx:
        inserted = [e.data["id"] for e in tx.events_after(0) if e.type == TASK_STATE]
    assert sorted(inserted) == sorted([live.id, a.id, b.id, c.id])  # one event per new task
    before = q.stats()["total"]
    for bad, message in (
        ({"title": "x", "priority": "high"}, "task 2: 'priority' must be a whole number"),
        ({"title": "x", "colour": "red"}, "task 2: unknown field 'colour'"),
        ({"body": "no title"}, "task 2: a task needs a title"),
        ({"title": "x", "payload": {"api_key": "s"}}, "task 2: payload key 'api_key'"),
    ):
        with pytest.raises(InvalidInput, match=re.escape(message)):
            q.add_many([{"title": "fine"}, bad])
    assert q.stats()["total"] == before  # nothing from a rejected batch
    assert q.add_many([]) == []


def test_add_many_makes_room_under_the_cap(tl: Taskloom) -> None:
    q = queue_of(tl, max_active=10)
    q.add_many([{"title": f"old {i}", "priority": 200} for i in range(8)])
    urgent = q.add_many([{"title": f"new {i}", "priority": 1} for i in range(5)])
    assert q.stats()["ready"] == 10 and q.stats()["canceled"] == 3
    assert all(q.get(t.id).status == "ready" for t, _ in urgent)
    with pytest.raises(InvalidInput, match="more than the queue's cap of 10"):
        q.add_many([{"title": "x"}] * 11)


def test_add_many_beyond_one_statement(tl: Taskloom) -> None:
    answers = tl.queue.add_many(
        [{"title": f"t{i}", "dedup_key": f"k{i % 300}"} for i in range(450)]
    )
    assert sum(added for _, added in answers) == 300 and tl.queue.stats()["ready"] == 300
    assert answers[449][0] == answers[149][0]


def test_surface_only_when_ready_set_changes(tl: Taskloom) -> None:
    q = tl.queue
    assert q.surface("a") is None
    q.add("<b>first</b>")
    block = q.surface("a")
    assert block is not None and "&lt;b&gt;first&lt;/b&gt;" in block
    assert q.surface("a") is None  # unchanged
    assert q.surface("other") is not None  # cursors are per agent
    q.add("second")
    assert "second" in (q.surface("a") or "")


def test_doctor_reports_and_fixes_without_touching_live_work(tl_fixed: Taskloom, clock) -> None:  # type: ignore[no-untyped-def]
    q = tl_fixed.queue
    stuck, _ = q.add("stuck")
    assert q.claim("w", lease=10) is not None
    live, _ = q.add("live")
    assert q.claim("w2", lease=99999) is not None
    clock.advance(7200)
    report = q.doctor()
    assert report["stuck"] == [stuck.id] and report["fixed"] == []
    fixed = q.doctor(fix=True)
    assert stuck.id in fixed["fixed"]
    assert q.get(live.id).status == "in_progress"


def test_sqlite_queue_statements_read_one_work_index(sqlite_url: str) -> None:
    """The claim walks ``tasks_work`` in its own order (no sort of the ready set) and goes
    from there to the row by its rowid, the sweep reads leases from it, and fenced finishes
    (one or a batch) go straight to the primary key."""
    import taskloom
    from taskloom.store.queue_sql import DONE_SQL, claim_sql, done_many_sql, expire_sql, sweep_sql

    def plan(tx: Any, sql: str, params: list[Any]) -> str:
        return " | ".join(str(r["detail"]) for r in tx.query("EXPLAIN QUERY PLAN " + sql, params))

    now = 2e9
    with taskloom.connect(sqlite_url) as tl:
        for i in range(50):
            tl.queue.add(f"t{i}")
        with tl.store.read() as tx:
            for n in (1, 10):
                params = ["a", 1, "h", now, now, "k", now, "a", now, now]
                claim = plan(tx, claim_sql("sqlite", 0, n), params + ["a", now, now] * (n > 1))
                assert "USING INDEX tasks_work (status=? AND lease_expires_at=?)" in claim, claim
                assert "TEMP B-TREE" not in claim, claim
                assert "USING INTEGER PRIMARY KEY (rowid=?)" in claim, claim
                # The row, not the id index too (a dependency is found by its id).
                assert "autoindex" not in claim.split(" | CORRELATED")[0], claim
                # A task's dependencies and group are each one index probe.
                assert "SEARCH d USING PRIMARY KEY (task_id=?)" in claim, claim
                assert "SEARCH g USING INDEX tasks_group_running (group_key=?)" in claim, claim
                if n > 1:
                    assert "SEARCH o USING INDEX tasks_group_ready (group_key=?" in claim, claim
            sweep = plan(tx, sweep_sql("sqlite"), [now] * 6)
            assert "INDEX tasks_work (status=? AND lease_expires_at<?)" in sweep, sweep
            done = plan(tx, DONE_SQL, [now, now, None, "t", "k"])
            assert "sqlite_autoindex_tasks_1 (id=?)" in done, done
            many = plan(tx, done_many_sql("sqlite"), ['[["t", "k", null]]', now, now])
            assert "SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 (id=?)" in many, many
            expire = plan(tx, expire_sql("sqlite"), [now, now, now])
            assert "INDEX tasks_expiry (expires_at<?)" in expire, expire


BAD_ADDS: list[tuple[dict[str, Any], str]] = [
    ({"title": "a\x00b"}, "NUL"),
    ({"title": "bad\udcffbyte"}, "not valid UTF-8"),
    ({"title": "t", "body": "\udcfe"}, "not valid UTF-8"),
    ({"title": "t", "priority": 2**31}, "'priority' must be between"),
    ({"title": "t", "priority": 10**20}, "'priority' must be between"),
    ({"title": "t", "max_attempts": 3_000_000_000}, "'max_attempts' must be between"),
    ({"title": "t", "delay_s": math.inf}, "'delay_s' must be a finite number"),
    ({"title": "t", "delay_s": math.nan}, "'delay_s' must be a finite number"),
    ({"title": "t", "delay_s": 1e300}, "'delay_s' must be at most"),
    ({"title": "t", "ttl_s": -1}, "'ttl_s' must be at least 0"),
    ({"title": "t", "delay_s": 10, "ttl_s": 5}, "'ttl_s' .* must be longer than 'delay_s'"),
    ({"title": "t", "payload": {"x": math.nan}}, "not JSON-serialisable"),
    ({"title": "t", "payload": {"x": "\udcff"}}, "payload is not valid UTF-8"),
    ({"title": "t", "target_agent": " "}, "'target_agent'"),
    ({"title": "t", "dedup_key": "k\x00"}, "NUL"),
]


@pytest.mark.parametrize(("fields", "message"), BAD_ADDS)
def test_a_task_one_backend_cannot_store_is_refused_on_every_backend(
    tl: Taskloom, fields: dict[str, Any], message: str
) -> None:
    """The same input is refused the same way on SQLite and PostgreSQL, before anything is
    written (a lease of ``inf`` used to be stored on SQLite and then break every listing)."""
    with pytest.raises(InvalidInput, match=message):
        tl.queue.add(**fields)
    with pytest.raises(InvalidInput, match=message):
        tl.queue.add_many([{"title": "fine"}, fields])
    assert tl.queue.stats()["total"] == 0


@pytest.mark.parametrize("blank", ["", "  ", "\t\n"])
def test_a_blank_dedup_key_is_refused_and_none_means_no_dedup(tl: Taskloom, blank: str) -> None:
    """An unset ``$KEY`` (``dedup_key=""``) is a mistake, not a request for no dedup: it is
    refused naming the field, in ``add`` and ``add_many``; ``None`` or no field is no dedup."""
    with pytest.raises(InvalidInput, match=r"^'dedup_key', when given, must not be blank"):
        tl.queue.add("t", dedup_key=blank)
    with pytest.raises(InvalidInput, match=r"^task 2: 'dedup_key', when given, must not be blank"):
        tl.queue.add_many([{"title": "fine"}, {"title": "t", "dedup_key": blank}])
    assert tl.queue.stats()["total"] == 0
    assert tl.queue.add("a", dedup_key=None)[1] and tl.queue.add("a", dedup_key=None)[1]
    answers = tl.queue.add_many([{"title": "b"}, {"title": "b", "dedup_key": None}])
    assert [added for _, added in answers] == [True, True]
    assert tl.queue.stats()["total"] == 4


@pytest.mark.parametrize("agent", ["\x1b[2J\x1b[31mroot\x1b[0m", "ag\u202eX", "a\u200bb", "a\nb"])
def test_an_agent_id_with_characters_one_cannot_see_is_refused(tl: Taskloom, agent: str) -> None:
    """Any HTTP /mcp client names its agent: an escape in the id cleared the screen of whoever
    listed the queue, and a bidi override made a look-alike of another agent's id."""
    q = tl.queue
    task, _ = q.add("t")
    with pytest.raises(InvalidInput, match="an agent id to claim for must not contain control"):
        q.claim(agent, lease=30)
    with pytest.raises(InvalidInput, match="'target_agent', when given, must not contain"):
        q.add("for someone", target_agent=agent)
    r = tl.tools.dispatch("task_next", {}, ToolContext(thread_id="t", agent_id=agent))
    assert r.is_error and "must not contain control characters" in r.content, r.content
    assert q.get(task.id).status == "ready" and q.stats()["total"] == 1
    assert q.claim("agent-\u200d\U0001f600", lease=30) is not None  # a joiner (emoji) stays


def test_bad_leases_ids_and_texts_are_refused_and_change_nothing(tl: Taskloom) -> None:
    q = tl.queue
    task, _ = q.add("t")
    for lease in (math.inf, math.nan, 0, -100, 1e300):
        with pytest.raises(InvalidInput, match="lease"):
            q.claim("w", lease=lease)
    for agent in (None, "", "   ", 5):
        with pytest.raises(InvalidInput, match="agent id"):
            q.claim(agent, lease=30)  # type: ignore[arg-type]
    assert q.get(task.id).status == "ready"
    claimed = q.claim("w", lease=30)
    assert claimed is not None and claimed.lease_token
    token = claimed.lease_token
    for lease in (0, -100, math.inf, math.nan):
        with pytest.raises(InvalidInput, match="lease"):
            q.extend(task.id, token, lease)
    with pytest.raises(InvalidInput, match="error must be text"):
        q.fail(task.id, token, None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="result is longer than"):
        q.done(task.id, token, "x" * 20_000)
    with pytest.raises(InvalidInput, match="result must not contain NUL"):
        q.done(task.id, token, "a\x00")
    with pytest.raises(InvalidInput, match="task ids and lease tokens are text"):
        q.get(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="task ids and lease tokens are text"):
        q.done(task.id, None)  # type: ignore[arg-type]
    after = q.get(task.id)
    assert after.status == "in_progress" and after.lease_expires_at == claimed.lease_expires_at
    with pytest.raises(InvalidInput, match="cancel reason is longer than"):
        q.cancel(task.id, "r" * 20_000)
    assert q.done(task.id, token, "ok").status == "completed"


def test_listing_and_pruning_refuse_what_they_cannot_mean(tl: Taskloom) -> None:
    q = tl.queue
    q.add("t")
    with pytest.raises(InvalidInput, match="unknown status 'bogus' \\(one of: ready, in_progress"):
        q.list(status="bogus")
    assert [t.title for t in q.list(status=" ready ")] == ["t"]  # as typed, spaces around
    with pytest.raises(InvalidInput, match="limit"):
        q.list(limit=-1)
    for window in (math.nan, -1.0, math.inf):
        with pytest.raises(InvalidInput, match="retention window"):
            q.prune(window)
    assert [t.title for t in q.list(status="ready")] == ["t"]


def test_list_takes_the_kinds_a_claim_takes(tl: Taskloom) -> None:
    q = tl.queue
    for title, kind in (("r1", "review"), ("i1", "index"), ("d1", "deploy"), ("r2", "review")):
        q.add(title, kind=kind)
    assert [t.title for t in q.list(kinds="review")] == ["r1", "r2"]
    assert [t.title for t in q.list(kinds=["review", "deploy"], limit=2)] == ["r1", "d1"]
    assert [t.title for t in q.list(kinds=("index",), status="completed")] == []
    with pytest.raises(InvalidInput, match="invalid task kind 'Bad Kind'"):
        q.list(kinds=["Bad Kind"])


def test_kinds_given_as_one_string_is_one_kind_and_agents_are_trimmed(tl: Taskloom) -> None:
    q = tl.queue
    review, _ = q.add("r", kind="review", target_agent=" coder-1 ")
    assert review.target_agent == "coder-1"
    assert q.claim("other", kinds="review") is None
    claimed = q.claim(" coder-1 ", kinds="review")
    assert claimed is not None and claimed.id == review.id and claimed.claimed_by == "coder-1"


def test_secret_guard_reads_key_words_not_substrings(tl: Taskloom) -> None:
    for key in ("max_tokens", "author", "tokenizer", "passes"):
        task, _ = tl.queue.add(f"with {key}", payload={key: 1})
        assert task.payload == {key: 1}
    for key in ("apiKey", "X-Api-Key", "AUTH_TOKEN", "refresh_token", "db_pass", "sessionId"):
        with pytest.raises(InvalidInput, match=f"payload key '{key}' looks like a secret"):
            tl.queue.add("t", payload={key: "v"})


def test_a_full_queue_evicts_the_new_task_when_it_is_the_least_urgent(tl: Taskloom) -> None:
    """Eviction weighs the task being added too: adding priorities 0 to 4 under a cap of 3
    keeps 0, 1 and 2, and the add answers the evicted task as canceled."""
    q = queue_of(tl, max_active=3)
    answers = [q.add(f"p{p}", priority=p)[0] for p in range(5)]
    assert [t.status.value for t in answers] == ["ready"] * 3 + ["canceled"] * 2
    assert answers[4].result == "evicted: queue is at its cap"
    assert sorted(t.title for t in q.list(status="ready")) == ["p0", "p1", "p2"]
    assert all(q.get(t.id).status == t.status for t in answers)


def test_a_claim_not_bound_to_its_process_is_left_to_its_lease(tl: Taskloom) -> None:
    """``taskloom tasks next`` exits right after claiming: its pid says nothing about the
    agent still working, so doctor --fix must not treat the claim as a dead worker's."""
    q = tl.queue
    task, _ = q.add("t")
    claimed = q.claim("coder-1", lease=600, bind_process=False)
    assert claimed is not None and claimed.pid is None
    assert q.doctor(fix=True)["fixed"] == []
    assert q.done(task.id, claimed.lease_token or "").status == "completed"


def test_doctor_lists_and_fixes_claims_of_dead_processes_seen_from_their_namespace(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    q = tl.queue
    task, _ = q.add("orphan")
    assert q.claim("w", lease=3600) is not None
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with tl.store.write() as tx:  # the claim's worker has died
        tx.execute("UPDATE tasks SET pid = ? WHERE id = ?", (gone.pid, task.id))
    with monkeypatch.context() as m:  # a sandbox with pids of its own, under the same name
        m.setattr(doctor_module, "HOST", f"{socket.gethostname()} (pid:[4026532999])")
        assert q.doctor(fix=True)["orphaned"] == [] and q.get(task.id).status == "in_progress"
    report = q.doctor()
    assert report["orphaned"] == [task.id] and report["fixed"] == []
    assert q.doctor(fix=True)["fixed"] == [task.id]
    assert q.get(task.id).status == "ready" and q.get(task.id).last_error == "worker process died"


def test_doctor_counts_a_dead_workers_expired_lease_as_stuck_not_orphaned(tl: Taskloom) -> None:
    """Orphaned means the lease still runs; once it is over the task is stuck (or simply due
    back), and listing it under both counted one problem twice."""
    q = tl.queue
    task, _ = q.add("long gone")
    assert q.claim("w", lease=60) is not None
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with tl.store.write() as tx:  # its worker died, and its lease ended two hours ago
        tx.execute(
            "UPDATE tasks SET pid = ?, lease_expires_at = lease_expires_at - 7200 WHERE id = ?",
            (gone.pid, task.id),
        )
    report = q.doctor()
    assert report["stuck"] == [task.id] and report["orphaned"] == []
    assert q.doctor(fix=True)["fixed"] == [task.id] and q.get(task.id).status == "ready"


def test_a_claim_records_the_pid_namespace_when_it_is_not_the_machines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "readlink", lambda path: "pid:[4026532999]")
    assert host_name() == f"{socket.gethostname()} (pid:[4026532999])"
    monkeypatch.setattr(os, "readlink", lambda path: INIT_PID_NAMESPACE)
    assert host_name() == socket.gethostname()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"source": "s" * 201}, "'source' is longer than 200 bytes"),
        ({"dedup_key": "k" * 513}, "'dedup_key' is longer than 512 bytes"),
        ({"target_agent": "a" * 201}, "longer than 200 bytes"),
    ],
)
def test_names_and_keys_are_bounded_alike_on_both_backends(
    tl: Taskloom, fields: dict[str, str], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        tl.queue.add("x", **fields)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="longer than 200 bytes"):
        tl.queue.claim("a" * 201)
    task, added = tl.queue.add("x", dedup_key="k" * 512, source="s" * 200)
    assert added and task.dedup_key == "k" * 512


def test_a_completed_task_keeps_who_claimed_it(tl: Taskloom) -> None:
    q = tl.queue
    for title in ("kept", "retried"):
        q.add(title)
    kept, retried = q.claim("coder-1"), q.claim("coder-1")
    assert kept is not None and retried is not None
    q.done(kept.id, kept.lease_token or "", "ok")
    back = q.fail(retried.id, retried.lease_token or "", "flaky")
    assert (back.status, back.claimed_by, back.claimed_at) == ("ready", None, None)
    finished = q.list(agent="coder-1", status="completed")
    assert [(t.id, t.claimed_at) for t in finished] == [(kept.id, kept.claimed_at)]


def test_a_failure_must_say_what_failed(tl: Taskloom) -> None:
    q = tl.queue
    q.add("x")
    claimed = q.claim("w")
    assert claimed is not None
    for blank in ("", "  \n"):
        with pytest.raises(InvalidInput, match="must say something"):
            q.fail(claimed.id, claimed.lease_token or "", blank)
    assert q.get(claimed.id).status == "in_progress"


def _failed_five_times(q: Queue) -> Task:
    """A ready task that failed five of its ten attempts: poisoned, to ``doctor``."""
    task, _ = q.add("poison", max_attempts=10)
    for _ in range(5):
        c = q.claim("w")
        assert c is not None
        q.fail(task.id, c.lease_token or "", "crash")
    return task


def test_doctor_cancels_a_poisoned_task_only_while_it_is_still_ready(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    q = tl.queue
    task = _failed_five_times(q)
    other = queue_of(tl)
    cancel = tl.store.tasks.cancel

    def cancel_after_a_worker_claims(*args: Any, **options: Any) -> Any:
        assert other.claim("w2") is not None  # between the report and the fix
        return cancel(*args, **options)

    monkeypatch.setattr(tl.store.tasks, "cancel", cancel_after_a_worker_claims)
    report = q.doctor(fix=True)
    assert report["poisoned"] == [task.id] and task.id not in report["fixed"]
    assert q.get(task.id).status == "in_progress"


def test_an_expired_lease_is_the_last_error_of_the_task_it_kills(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    task, _ = q.add("x", max_attempts=2)
    first = q.claim("w", lease=5)
    assert first is not None
    q.fail(task.id, first.lease_token or "", "tests fail")
    assert q.claim("w", lease=5) is not None
    clock.advance(6)
    (dead,) = q.reclaim()
    assert dead.status == "dead" and dead.last_error == "lease expired"


def test_ready_count_is_what_the_agent_could_claim(tl_fixed: Taskloom, clock: FakeClock) -> None:
    q = tl_fixed.queue
    q.add("now")
    q.add("mine", target_agent="a")
    q.add("theirs", target_agent="b")
    q.add("later", delay_s=3600)
    q.add("expiring", ttl_s=1)
    clock.advance(2)
    assert q.ready_count("a") == 2
    block = q.surface("a")
    assert block is not None and 'ready="2"' in block


def test_a_wrong_token_on_a_held_task_says_so(tl: Taskloom) -> None:
    task, _ = tl.queue.add("t")
    assert tl.queue.claim("w") is not None
    with pytest.raises(LeaseLost, match="held under another lease token"):
        tl.queue.done(task.id, "not-the-token")


def test_the_agent_id_is_escaped_wherever_the_block_shows_it() -> None:
    block = surface_block('x"><evil>', [], 0)
    assert "<evil>" not in block and "&lt;evil&gt;" in block


def test_an_expired_task_is_canceled_frees_its_key_and_can_be_pruned(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    short, _ = q.add("short-lived", ttl_s=10, dedup_key="nightly")
    kept, _ = q.add("no ttl")
    clock.advance(11)
    again, added = q.add("tonight's run", dedup_key="nightly")  # the key is free again
    assert added and again.id != short.id
    gone = q.get(short.id)
    assert gone.status == "canceled" and gone.result is not None
    assert gone.result.startswith("expired")
    retried, _ = q.add("failed late", ttl_s=5, priority=1)
    claimed = q.claim("w", lease=60)
    assert claimed is not None and claimed.id == retried.id
    clock.advance(6)
    q.fail(claimed.id, claimed.lease_token or "", "boom")  # back to ready, but expired
    assert q.get(retried.id).status == "ready"
    clock.advance(2)
    q.reclaim()  # the sweep every claim runs (at most once a second)
    assert q.get(retried.id).status == "canceled"
    assert q.get(kept.id).status == "ready"
    clock.advance(100)
    assert q.prune(50) == 2 and q.stats()["canceled"] == 0


def test_tasks_added_together_are_claimed_in_the_order_given(tl: Taskloom) -> None:
    q = tl.queue
    q.add_many([{"title": f"step {i}"} for i in range(30)])
    got = [q.claim("w").title for _ in range(30)]  # type: ignore[union-attr]
    assert got == [f"step {i}" for i in range(30)]


def test_done_and_claim_takes_kinds_as_claim_does(tl: Taskloom) -> None:
    q = tl.queue
    q.add("a", kind="review")
    q.add("b", kind="review")
    q.add("c", kind="r")
    first = q.claim("w", kinds="review")
    assert first is not None
    _, nxt = q.done_and_claim(first.id, first.lease_token or "", "w", kinds="review")
    assert nxt is not None and nxt.title == "b"


def test_a_long_failure_is_cut_not_refused(tl: Taskloom) -> None:
    q = tl.queue
    q.add("t", max_attempts=1)
    task = q.claim("w")
    assert task is not None
    dead = q.fail(
        task.id, task.lease_token or "", "Traceback (most recent call last):\n" + "x" * 20_000
    )
    assert dead.status == "dead" and dead.last_error is not None
    assert dead.last_error.startswith("Traceback") and len(dead.last_error.encode()) <= 4096


def test_a_failures_credentials_stay_out_of_the_task_and_its_events(tl: Taskloom) -> None:
    q = tl.queue
    key = "sk-" + "a1B2" * 10
    q.add("t", max_attempts=1)
    task = q.claim("w")
    assert task is not None
    error = f"HTTPError 401 from https://bot:hunter2pass@api.example/v1 with key {key}"
    dead = q.fail(task.id, task.lease_token or "", error)
    stored = q.get(dead.id).last_error or ""
    assert stored.startswith("HTTPError 401 from https://bot:") and "[redacted]" in stored
    assert key not in stored and "hunter2pass" not in stored
    with tl.store.read() as tx:
        logged = repr([e.data for e in tx.events_after(0)])
    assert "last_error" in logged and key not in logged and "hunter2pass" not in logged


def test_a_results_credentials_stay_out_of_the_task_and_its_events(tl: Taskloom) -> None:
    """A failure's error was redacted, a result was stored as sent: a worker command that
    printed its environment left the key in the task, its events, the panel and the
    waiting model's context. Every way to complete a task redacts it now."""
    q = tl.queue
    key = "sk-" + "a1B2" * 10
    said = f"deployed with OPENAI_API_KEY={key} from https://bot:hunter2pass@git.example/r"
    for title in ("one", "many", "and-claim", "next"):
        q.add(title)
    one = q.claim("w")
    assert one is not None
    q.done(one.id, one.lease_token or "", said)
    many = q.claim("w")
    assert many is not None
    q.done_many([(many.id, many.lease_token or "", said)], held=[many])
    third = q.claim("w")
    assert third is not None
    done, _ = q.done_and_claim(third.id, third.lease_token or "", "w", result=said, held=third)
    assert done.result is not None and key not in done.result
    stored = [q.get(t.id).result or "" for t in (one, many, third)]
    assert all(r.startswith("deployed with OPENAI_API_KEY=[redacted]") for r in stored), stored
    assert not any(key in r or "hunter2pass" in r for r in stored)
    with tl.store.read() as tx:
        logged = repr([e.data for e in tx.events_after(0)])
    assert "deployed with" in logged and key not in logged and "hunter2pass" not in logged


def test_done_many_refuses_what_is_not_a_completion(tl: Taskloom) -> None:
    q = tl.queue
    q.add("t")
    task = q.claim("w")
    assert task is not None
    token = task.lease_token or ""
    for bad in ([task], ["abc"], [(task.id,)], [(task.id, token), (task.id, "wrong")]):
        with pytest.raises(InvalidInput):
            q.done_many(bad)  # type: ignore[arg-type]
    assert q.get(task.id).status == "in_progress"
    done, lost = q.done_many([(task.id, token), (task.id, token)])  # the same twice is once
    assert [t.id for t in done] == [task.id] and lost == []


def test_a_lease_that_runs_out_past_the_tasks_expiry_cancels_it(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """The same on both backends: PostgreSQL's one-statement sweep must not leave it ready."""
    q = tl_fixed.queue
    task, _ = q.add("short", ttl_s=10, dedup_key="k")
    assert q.claim("w", lease=5) is not None
    clock.advance(12)
    assert q.claim("w2") is None
    gone = q.get(task.id)
    assert gone.status == "canceled" and gone.result is not None
    assert gone.result.startswith("expired") and gone.last_error == "lease expired"
    assert q.add("again", dedup_key="k")[1]


def test_limits_name_the_limit_they_checked(tl: Taskloom) -> None:
    """The same field over its limit gets the same message, whatever its size, on both
    backends; a batch beyond any sensible size is an input error, not a database error."""
    for size in (5000, 20_000):
        with pytest.raises(InvalidInput, match="'body' is longer than 4096 bytes"):
            tl.queue.add_many([{"title": "t", "body": "x" * size}])
    with pytest.raises(InvalidInput, match="'target_agent' is longer than 200 bytes"):
        tl.queue.add_many([{"title": "t", "target_agent": "a" * 20_000}])
    for n in (2**63, 1001, 0):
        with pytest.raises(InvalidInput, match="from 1 to 1000"):
            tl.queue.claim_batch("w", n)
    assert tl.queue.stats()["total"] == 0


def test_hooks_count_and_show_a_lease_run_out_as_a_claim_would_take_it(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """A lease that ran out and no sweep has returned yet is claimable (a claim sweeps
    first), so the hooks, which only read, count and show it too; not one a sweep would
    kill (attempts used up), cancel (expired) or keep from this agent (targeted)."""
    q = tl_fixed.queue
    short, _ = q.add("short")
    q.add("last try", max_attempts=1)
    q.add("expiring", ttl_s=1.2)
    q.add("theirs", target_agent="c")
    for agent in ("a", "a", "a", "c"):
        assert q.claim(agent, lease=1) is not None
    clock.advance(1.5)
    assert q.ready_count("b") == 1 and q.ready_count("c") == 2
    block = q.surface("b")
    assert block is not None and 'ready="1"' in block and short.id in block
    assert q.ready_count("b") == len(q.claim_batch("b", 10))


def test_one_doctor_fix_cancels_a_task_its_reclaim_leaves_poisoned(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    task = _failed_five_times(q)
    assert q.claim("w", lease=10) is not None  # the sixth attempt, abandoned
    live, _ = q.add("live", max_attempts=10)
    assert q.claim("w2", lease=99999) is not None
    clock.advance(7200)
    report = q.doctor(fix=True)
    assert report["stuck"] == [task.id] and report["poisoned"] == [task.id]
    assert report["fixed"] == [task.id]
    gone = q.get(task.id)
    assert gone.status == "canceled" and gone.result == "doctor: poisoned after 6 attempts"
    assert q.get(live.id).status == "in_progress"
    assert q.doctor(fix=True) == {
        "lease_expired": [], "stuck": [], "orphaned": [], "poisoned": [], "dead": [],
        "blocked": [], "fixed": []
    }  # fmt: skip


def test_doctor_lists_tasks_in_id_order_on_every_backend(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """The lists came in whatever order the backend read them: PostgreSQL's differed."""
    q = tl_fixed.queue
    for i in range(6):
        q.add(f"t{i}", max_attempts=1, priority=10 - i)
    claimed = q.claim_batch("w", 6, lease=10)
    for task in claimed[::2]:
        q.fail(task.id, task.lease_token or "", "boom")  # its last attempt: dead
    clock.advance(7200)
    report = q.doctor(fix=True)
    assert report["dead"] == sorted(report["dead"]) and len(report["dead"]) == 6  # reclaimed
    assert report["stuck"] == sorted(report["stuck"]) and len(report["stuck"]) == 3
    assert report["fixed"] == sorted(report["fixed"])


def test_doctor_refuses_arguments_it_cannot_mean(tl: Taskloom) -> None:
    for kwargs in ({"stuck_after_s": "1h"}, {"poisoned_at": "5"}, {"poisoned_at": 0}):
        with pytest.raises(InvalidInput):
            tl.queue.doctor(**kwargs)  # type: ignore[arg-type]


def _nested(depth: int) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    for _ in range(depth):
        payload = {"x": payload}
    return payload


def test_wrong_types_in_the_python_api_are_invalid_input(tl: Taskloom) -> None:
    """Whatever a caller passes, the answer is InvalidInput naming the problem, never a
    RecursionError, TypeError or OverflowError, and never a silent conversion."""
    q = tl.queue
    looped: dict[str, Any] = {}
    looped["self"] = looped
    for payload, message in (
        (_nested(5000), "nested too deeply"),
        (looped, "nested too deeply"),
        ({1: "a"}, "payload key '1' is int, not text"),
        ({"a": [{None: 1}]}, r"payload key 'a\[0\]\.None' is NoneType, not text"),
        ({"a": ({"api_key": "k"},)}, r"payload key 'a\[0\]\.api_key' looks like a secret"),
    ):
        with pytest.raises(InvalidInput, match=message):
            q.add("x", payload=payload)
    assert q.add("deep enough", payload=_nested(100))[0].payload == _nested(100)
    for limit in (2**63, -1, 1.5):
        with pytest.raises(InvalidInput, match="limit must be a whole number"):
            q.list(limit=limit)  # type: ignore[arg-type]
    assert len(q.list(limit=2**63 - 1)) == 1
    for kinds in (5, {"k": 1}, {"k"}, b"k", [5]):
        with pytest.raises(InvalidInput, match="kind"):
            q.claim("a", kinds=kinds)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="kind"):
            q.claim_batch("a", 2, kinds=kinds)  # type: ignore[arg-type]
    for tasks in (5, None, "title", {"title": "t"}):
        with pytest.raises(InvalidInput, match="add_many takes a list of tasks"):
            q.add_many(tasks)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="done_many takes"):
        q.done_many(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="claim must be text"):
        q.surface("a", claim=5)  # type: ignore[arg-type]
    assert q.stats()["total"] == 1 and q.stats()["in_progress"] == 0
    assert q.claim("a", kinds=("task",)) is not None


SECRET_KEYS = [
    "apiKey", "X-Api-Key", "AUTH_TOKEN", "refresh_token", "db_pass", "sessionId", "token",
    "api_keys", "apikeys", "apitoken", "api_tokens", "PGPASSWORD", "ssh_key", "session_key",
    "signing_key", "privkey", "jwt", "access_tokens", "client_secret", "dbPassword",
    "refresh_tokens", "github_tokens", "DBPASS", "mysqlpwd", "secretkeys", "sshkeys",
    "privatekeys", "passphrases", "deploy_key", "consumer_key", "master_key", "session_id",
    # capitals run into a word ("AP" + "Ikey", "PAS" + "Sword" were read), and oauth as OAuth
    "APIkey", "PASSword", "SSHkey", "DBpass", "GITHUBtoken", "PRIVATEkey", "oauth", "IDtoken",
]  # fmt: skip
HARMLESS_KEYS = [
    "max_tokens", "author", "tokenizer", "passes", "token_count", "tokens_used",
    "token_budget", "tokenCount", "num_tokens", "token_limit", "keys", "session", "compass",
    "next_page_token", "nextPageToken", "continuation_token",
    "persist-credentials", "always-auth", "token_format", "access_token_lifetime",
    "secret_scanning", "secret_type", "PaginationToken", "since_token", "secret_name",
    "secret_arn", "credentials_path", "private_key_path", "PASSWORD_FILE", "pass_rate",
    "auth_method", "token_url", "signing_key_id", "has_password", "password_policy",
    "cookie_consent", "XMLauthor", "TOTALtokens", "HTTPSproxy", "URLpath", "MAXtokens",
]  # fmt: skip


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_a_payload_key_naming_a_secret_is_refused(key: str) -> None:
    with pytest.raises(InvalidInput, match=f"payload key '{key}' looks like a secret"):
        validate_new_task("t", "", "task", {key: "v"}, 3)


@pytest.mark.parametrize("key", HARMLESS_KEYS)
def test_a_payload_key_that_only_looks_near_a_secret_passes(key: str) -> None:
    validate_new_task("t", "", "task", {key: 1}, 3)


@pytest.mark.parametrize("cap", [-1, 0, True, 1.5, "5"])
def test_a_cap_that_is_not_a_positive_whole_number_is_refused(tl: Taskloom, cap: object) -> None:
    """``max_active = -1`` cancelled every ready task on the next add."""
    task, _ = tl.queue.add("keep me")
    with pytest.raises(InvalidInput, match="max_active"):
        tl.queue.max_active = cap  # type: ignore[assignment]
    tl.queue.add("another")
    assert tl.queue.get(task.id).status == "ready"


def test_an_empty_kinds_list_and_a_non_bool_binding_are_refused(tl: Taskloom) -> None:
    """``kinds=[]`` claimed a task of any kind; ``bind_process="no"`` bound the process."""
    tl.queue.add("x", kind="build")
    with pytest.raises(InvalidInput, match="leave it out"):
        tl.queue.claim("a", kinds=[])
    with pytest.raises(InvalidInput, match="bind_process"):
        tl.queue.claim("a", bind_process="no")  # type: ignore[arg-type]
    assert tl.queue.stats()["ready"] == 1


def test_remembered_claim_arguments_are_checked_as_given_every_time(tl: Taskloom) -> None:
    """A claim's checked arguments are remembered, so a worker does not check them again on
    every claim: an argument equal to a good one but of another type (``1`` for ``True``,
    ``300`` for ``300.0``, a mapping of the good kinds) is still judged as itself."""
    q = tl.queue
    q.add("x", kind="build")
    q.add("y", kind="build")
    first = q.claim("a", kinds=["build"], bind_process=True)
    assert first is not None and first.pid is not None
    with pytest.raises(InvalidInput, match="bind_process"):
        q.claim("a", kinds=["build"], bind_process=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="kinds must be"):
        q.claim("a", kinds={"build": 1})  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="kind"):
        q.claim("a", kinds=[["build"]])  # type: ignore[list-item]
    second = q.claim("a", kinds=("build",), lease=300)  # the same kinds, as a tuple
    assert second is not None and second.kind == "build"
    assert q.stats()["in_progress"] == 2


def test_a_failure_can_hold_its_retry_back(tl_fixed: Taskloom, clock) -> None:  # type: ignore[no-untyped-def]
    """``retry_delay`` sets the retried task's ``not_before``: no claim takes it until then,
    so an outage does not use up its attempts within moments. A task failing into dead, or
    failed without a delay, keeps the not_before it had."""
    q = tl_fixed.queue
    task, _ = q.add("calls the API", max_attempts=2)
    claimed = q.claim("w", lease=60)
    assert claimed is not None
    failed = q.fail(task.id, claimed.lease_token or "", "503", retry_delay=60)
    assert failed.status == "ready" and failed.not_before == claimed.claimed_at + 60
    assert q.claim("w", lease=60) is None
    clock.advance(61)
    again = q.claim("w", lease=60)
    assert again is not None and again.id == task.id and again.attempts == 2
    dead = q.fail(task.id, again.lease_token or "", "503 again", retry_delay=60)
    assert dead.status == "dead" and dead.not_before == failed.not_before
    other, _ = q.add("fails fast")
    claimed = q.claim("w", lease=60)
    assert claimed is not None and claimed.id == other.id
    assert q.fail(other.id, claimed.lease_token or "", "x").not_before is None
    with pytest.raises(InvalidInput, match="retry_delay"):
        q.fail(other.id, "t" * 32, "x", retry_delay=-1)


def test_wait_returns_the_task_another_thread_finishes(tl: Taskloom) -> None:
    """The producer's side of the queue: add work, then block until a worker elsewhere
    (here a thread with its own connection) has finished it, and read its result."""
    import threading
    import time

    task, _ = tl.queue.add("Summarize the log")
    claimed = tl.queue.claim("worker", lease=30)
    assert claimed is not None and claimed.id == task.id

    def finish() -> None:
        time.sleep(0.3)  # the waiter is looking by then
        with taskloom.connect(tl.store.url) as other:
            other.queue.done(claimed.id, claimed.lease_token or "", "3 errors, all in auth")

    worker = threading.Thread(target=finish)
    worker.start()
    try:
        ended = tl.queue.wait(task.id, timeout=30)
    finally:
        worker.join(10)
    assert ended.status.value == "completed" and ended.result == "3 errors, all in auth"


def test_wait_gives_up_at_its_timeout_and_answers_every_ending(tl: Taskloom) -> None:
    from taskloom.errors import WaitTimeout

    running, _ = tl.queue.add("Runs for ever")
    claimed = tl.queue.claim("worker", lease=30)
    assert claimed is not None
    with pytest.raises(WaitTimeout, match=rf"task {running.id} is still in_progress after 0.2 s"):
        tl.queue.wait(running.id, timeout=0.2)
    with pytest.raises(TimeoutError):  # also what asyncio and concurrent code catch
        tl.queue.wait(running.id, timeout=0)
    doomed, _ = tl.queue.add("Fails", max_attempts=1)
    got = tl.queue.claim("worker", lease=30)
    assert got is not None and got.id == doomed.id
    tl.queue.fail(got.id, got.lease_token or "", "disk full")
    dead = tl.queue.wait(doomed.id, timeout=0)
    assert dead.status.value == "dead" and dead.last_error == "disk full"
    dropped, _ = tl.queue.add("Not needed")
    tl.queue.cancel(dropped.id, "superseded")
    canceled = tl.queue.wait(dropped.id)
    assert canceled.status.value == "canceled" and canceled.result == "superseded"
    with pytest.raises(NotFound, match="task 'nope' not found"):
        tl.queue.wait("nope", timeout=1)
    with pytest.raises(InvalidInput, match="timeout must be at least 0 seconds"):
        tl.queue.wait(dropped.id, timeout=-1)


def test_async_waits_hold_no_thread_while_their_tasks_run(tl: Taskloom) -> None:
    """``tl.aio.queue.wait`` awaits between looks: run on a worker thread, as the other
    ``tl.aio`` calls are, each wait held its thread until the task ended, and a few of them
    stopped every other call of the process (here two threads, eight waits)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    added = [tl.queue.add(f"job {i}")[0] for i in range(8)]

    async def main() -> tuple[dict[str, int], list[Task]]:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=2))
        aq = tl.aio.queue
        waits = [asyncio.create_task(aq.wait(t.id, timeout=30)) for t in added]
        await asyncio.sleep(0.2)  # every wait has looked once and is pausing
        stats = await asyncio.wait_for(aq.stats(), 10)
        while claimed := await aq.claim("worker", lease=30):
            await aq.done(claimed.id, claimed.lease_token, f"did {claimed.title}")
        ended = await asyncio.gather(*waits)
        forgotten, _ = await aq.add("Never done")
        with pytest.raises(TimeoutError):  # cancelled by wait_for: it stops at once
            await asyncio.wait_for(aq.wait(forgotten.id), 0.3)
        return stats, ended

    stats, ended = asyncio.run(main())
    assert stats["ready"] == 8
    assert [(t.id, t.status.value, t.result) for t in ended] == [
        (t.id, "completed", f"did {t.title}") for t in added
    ]
