"""The work graph under real concurrency: four OS processes drain a random DAG with
mutual-exclusion groups, checked afterwards from the event log alone."""

from __future__ import annotations

import multiprocessing as mp
import random
import time
from collections import defaultdict
from typing import Any

import pytest

import taskloom
from taskloom.domain.events import TASK_STATE
from tests.conftest import run_together

TASKS = 2_000
GROUPS = 12
WORKERS = 4


def random_dag(seed: int) -> list[dict[str, Any]]:
    """``TASKS`` tasks in random order of urgency, each after up to three earlier ones (so no
    cycle), about a third of them in one of ``GROUPS`` groups."""
    rng = random.Random(seed)
    tasks = []
    for i in range(TASKS):
        task: dict[str, Any] = {"title": f"t{i}", "ref": f"r{i}", "priority": rng.randrange(5)}
        if i and rng.random() < 0.7:
            task["after"] = sorted({f"r{rng.randrange(max(0, i - 200), i)}" for _ in range(3)})
        if rng.random() < 0.35:
            task["group_key"] = f"g{rng.randrange(GROUPS)}"
        tasks.append(task)
    rng.shuffle(tasks)  # forward references too
    return tasks


def _drain(url: str, name: str, start: mp.synchronize.Event, out: mp.Queue) -> None:  # type: ignore[type-arg,name-defined]
    """Claim and complete until nothing is left to do: half the workers one at a time with
    ``done_and_claim``, half in batches. An empty claim while work is still in progress
    elsewhere waits a moment: that work may release more."""
    done: list[str] = []
    batched = int(name[1:]) % 2 == 1
    with taskloom.connect(url) as tl:
        q = tl.queue
        start.wait()
        task = None
        while True:
            if batched:
                batch = q.claim_batch(name, 5, lease=300)
                if batch:
                    finished, lost = q.done_many([(t.id, t.lease_token or "") for t in batch])
                    assert not lost
                    done += [t.id for t in finished]
                    continue
            else:
                task = task or q.claim(name, lease=300)
                if task is not None:
                    done.append(task.id)
                    _, task = q.done_and_claim(task.id, task.lease_token or "", name, lease=300)
                    continue
            stats = q.stats()
            if stats["ready"] + stats["in_progress"] + stats["lease_expired"] == 0:
                break
            time.sleep(0.005)
    out.put(done)


@pytest.mark.slow
def test_four_processes_drain_a_random_dag_in_order_and_one_per_group(db_url: str) -> None:
    with taskloom.connect(db_url) as tl:
        answers = tl.queue.add_many(random_dag(seed=37))
        ids = {t.title: t.id for t, _ in answers}
        deps = {t.id: set(t.depends_on) for t, _ in answers}
        group = {t.id: t.group_key for t, _ in answers}
    results = run_together(_drain, [(db_url, f"w{n}") for n in range(WORKERS)], 600)
    claimed = [tid for r in results for tid in r]
    assert len(claimed) == TASKS and set(claimed) == set(ids.values())

    with taskloom.connect(db_url) as tl:
        assert tl.queue.stats()["completed"] == TASKS
        events, after = [], 0
        with tl.store.read() as tx:
            while batch := tx.events_after(after, limit=5000):
                events += [e for e in batch if e.type == TASK_STATE]
                after = batch[-1].id or 0
    completed_at: dict[str, int] = {}
    running: dict[str, str] = {}  # group -> the task of it in progress
    status: dict[str, str] = {}
    for event in events:  # in id order, the order the changes were made in
        task_id, now = event.data["id"], event.data["status"]
        before = status.get(task_id)
        status[task_id] = now
        g = group[task_id]
        if now == "in_progress" and before != "in_progress":
            for dep in deps[task_id]:  # none before its dependencies
                assert dep in completed_at, f"{task_id} claimed before its dependency {dep}"
            if g is not None:
                assert g not in running, f"{task_id} and {running[g]} of {g} at once"
                running[g] = task_id
        elif before == "in_progress" and now != "in_progress" and g is not None:
            assert running.pop(g) == task_id
        if now == "completed":
            assert task_id not in completed_at, f"{task_id} completed twice"
            completed_at[task_id] = event.id or 0
    assert len(completed_at) == TASKS and not running
    counts: defaultdict[str, int] = defaultdict(int)
    for event in events:
        counts[event.data["status"]] += 1
    assert counts["in_progress"] == TASKS  # each claimed once: no retries, no lost leases
