"""The queue under real concurrency: OS processes racing, and a worker killed mid-lease."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import pytest

import taskloom
from taskloom.domain.errors import LeaseLost
from tests.conftest import run_together

TASKS = 10_000
WORKERS = 4


def _worker(url: str, name: str, start: mp.synchronize.Event, out: mp.Queue) -> None:  # type: ignore[type-arg,name-defined]
    """Half the workers claim in batches and complete one by one; the other half complete
    each task and claim the next in one call (``done_and_claim``)."""
    done: list[str] = []
    with taskloom.connect(url) as tl:
        start.wait()
        if int(name[1:]) % 2:
            task = tl.queue.claim(name, lease=120)
            while task is not None:
                done.append(task.id)
                _, task = tl.queue.done_and_claim(task.id, task.lease_token or "", name, lease=120)
        while batch := tl.queue.claim_batch(name, 25, lease=120):
            for task in batch:
                tl.queue.done(task.id, task.lease_token or "", name)
                done.append(task.id)
    out.put(done)


@pytest.mark.slow
def test_four_processes_complete_every_task_exactly_once(db_url: str) -> None:
    # Bulk-load through the store in one transaction (add() per task is tested elsewhere).
    with taskloom.connect(db_url) as tl, tl.store.write() as tx:
        for i in range(TASKS):
            tx.execute(
                "INSERT INTO tasks (id, title, created_at) VALUES (?, ?, ?)",
                (f"task-{i:05d}", f"t{i}", 1.0 + i),
            )
    results = run_together(_worker, [(db_url, f"w{n}") for n in range(WORKERS)], 300)
    claimed = [tid for r in results for tid in r]
    assert len(claimed) == TASKS and len(set(claimed)) == TASKS
    with taskloom.connect(db_url) as tl:
        stats = tl.queue.stats()
        assert stats["completed"] == TASKS and stats["ready"] == 0
        with tl.store.read() as tx:
            row = tx.query_one("SELECT count(*) AS n FROM tasks WHERE attempts != 1")
        assert row is not None and int(row["n"]) == 0


LEASE_S = 1.5


def _hold_leases(url: str, bind: bool, ready: mp.synchronize.Event) -> None:  # type: ignore[name-defined]
    with taskloom.connect(url) as tl:
        tl.queue.claim_batch("doomed", 3, lease=LEASE_S, bind_process=bind)
        ready.set()
        time.sleep(600)


def _killed_holder(url: str, *, bind: bool) -> dict[str, str]:
    """Three tasks claimed by a process then SIGKILLed; their ids and its lease tokens."""
    with taskloom.connect(url) as tl:
        for i in range(3):
            tl.queue.add(f"job {i}")
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_hold_leases, args=(url, bind, ready))
    proc.start()
    assert ready.wait(60)
    os.kill(proc.pid or 0, signal.SIGKILL)
    proc.join(10)
    with taskloom.connect(url) as tl:
        assert len(tl.queue.list(status="in_progress")) == 3
        with tl.store.read() as tx:
            return {
                r["id"]: r["lease_token"] for r in tx.query("SELECT id, lease_token FROM tasks")
            }


def _finish_as_survivor(
    tl: taskloom.Taskloom, again: list[taskloom.Task], old: dict[str, str]
) -> None:
    """The killed worker's late ``done`` (its old tokens) is refused; the new holder's counts."""
    assert {t.id for t in again} == set(old)
    for task_id, token in old.items():
        with pytest.raises(LeaseLost):
            tl.queue.done(task_id, token, "too late")
    for task in again:
        tl.queue.done(task.id, task.lease_token or "")
    assert tl.queue.stats()["completed"] == 3


@pytest.mark.slow
def test_sigkilled_worker_leases_are_reclaimed_and_its_late_done_rejected(db_url: str) -> None:
    tokens = _killed_holder(db_url, bind=True)
    with taskloom.connect(db_url) as tl:
        # Dead PID on this host: reclaim() returns the tasks at once, before the lease ends.
        reclaimed = tl.queue.reclaim()
        assert {t.id for t in reclaimed} == set(tokens)
        assert all(t.last_error == "worker process died" for t in reclaimed)
        _finish_as_survivor(tl, tl.queue.claim_batch("survivor", 3, lease=60), tokens)


@pytest.mark.slow
def test_sigkilled_unbound_claims_come_back_only_when_their_lease_ends(db_url: str) -> None:
    """Claims not bound to their process (``tasks next``: the agent outlives the command)
    are freed by their lease alone: nothing to take while it runs, all of it once it ends."""
    tokens = _killed_holder(db_url, bind=False)
    with taskloom.connect(db_url) as tl:
        assert tl.queue.reclaim() == []
        assert tl.queue.claim_batch("survivor", 3, lease=60) == []
        time.sleep(LEASE_S + 0.2)
        _finish_as_survivor(tl, tl.queue.claim_batch("survivor", 3, lease=60), tokens)
