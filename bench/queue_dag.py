"""The claim throughput on a work graph (``bench/queue.py --dag``): a random DAG added in one
``add_many``, drained by W worker processes, beside the same number of tasks without
dependencies drained by the same loop.

The DAG: each task runs after up to three of the 200 tasks added before it (seven in ten
have any), and about a third of them belong to one of ``GROUPS`` mutual-exclusion groups.
A worker claims, then completes and claims the next in one call (``done_and_claim``); a
claim that finds nothing while work is still in progress elsewhere waits a millisecond and
looks again (that work may release more). Throughput is tasks over the time from the first
claim to the last completion, latency that of every claim that got a task.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import taskloom
from _drain import Setup, Systems, Worker, drain, measure, print_tables

GROUPS = 100
SEED = 37


def dag_tasks(n: int, *, groups: int = GROUPS, seed: int = SEED) -> list[dict[str, Any]]:
    """``n`` tasks as ``add_many`` takes them, forming a random DAG (see the module)."""
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        task: dict[str, Any] = {"title": f"job {i}", "ref": f"r{i}"}
        if i and rng.random() < 0.7:
            task["after"] = sorted({f"r{rng.randrange(max(0, i - 200), i)}" for _ in range(3)})
        if groups and rng.random() < 0.35:
            task["group_key"] = f"g{rng.randrange(groups)}"
        tasks.append(task)
    return tasks


def _setup(make: Callable[[int], list[dict[str, Any]]]) -> Setup:
    def setup(url: str, jobs: int) -> None:
        with taskloom.connect(url) as tl:
            tl.queue.max_active = max(tl.queue.max_active, 2 * jobs)
            tl.queue.add_many(make(jobs))

    return setup


def flat_tasks(n: int) -> list[dict[str, Any]]:
    return [{"title": f"job {i}"} for i in range(n)]


def worker(url: str, index: int, start: Any, results: Any) -> None:
    agent, ids, latencies = f"w{index}", [], []
    with taskloom.connect(url) as tl:
        q = tl.queue
        q.stats()  # open and migrate before the clock starts
        start.wait()
        first = time.time()
        held = None
        while True:
            if held is None:
                t0 = time.perf_counter()
                held = q.claim(agent, lease=300)
                if held is None:
                    left = q.stats()
                    if left["ready"] + left["in_progress"] + left["lease_expired"] == 0:
                        break
                    time.sleep(0.001)
                    continue
                latencies.append((time.perf_counter() - t0) * 1000)
            ids.append(held.id)
            t0 = time.perf_counter()
            token = held.lease_token or ""
            _, held = q.done_and_claim(held.id, token, agent, lease=300, held=held)
            if held is not None:
                latencies.append((time.perf_counter() - t0) * 1000)
    results.put((ids, first, time.time(), latencies))


FLAT = "taskloom, no dependencies"
DAG = f"taskloom, DAG + {GROUPS} groups"
DAG_ONLY = "taskloom, DAG, no groups"
SYSTEMS: Systems = {
    FLAT: (_setup(flat_tasks), worker),
    DAG_ONLY: (_setup(lambda n: dag_tasks(n, groups=0)), worker),
    DAG: (_setup(dag_tasks), worker),
}


def run(
    jobs: int,
    workers: list[int],
    repeat: int,
    target: Callable[[str], Any],
) -> None:
    """Every row at every worker count; ``target(tag)``: a context manager giving a fresh
    database URL."""

    def run_one(tag: str, name: str, setup: Setup, work: Worker, w: int) -> dict[str, Any]:
        with target(tag) as url:
            setup(url, jobs)
            return drain(url, work, w, jobs)

    table = measure(SYSTEMS, workers, repeat, run_one)
    print_tables(jobs, workers, table, {DAG: [FLAT], DAG_ONLY: [FLAT]}, repeat)
