"""Benchmark: the work queue against raw lease-aware baselines and peers, in one invocation.

    .venv/bin/python bench/queue.py [--jobs 4000] [--workers 1 2 4] [--backend sqlite|postgres]
                                    [--only TEXT ...] [--dag]

SQLite: enqueue rate (one process, one transaction per job), then claim+complete throughput
and claim latency at 1, 2 and 4 worker processes for taskloom (events included), a raw
``sqlite3`` lease baseline and the peers that install (``queue_sqlite.py``). PostgreSQL
(``--backend postgres``, server from ``TASKLOOM_BENCH_PG``): taskloom, a raw psycopg
``SKIP LOCKED`` baseline, pgqueuer and procrastinate (``queue_pg.py``). ``make bench``
installs the peers. Every processed id is collected, so a job handed out twice shows as
``dup``. ``--dag``: the claim throughput on a random DAG of ``--jobs`` tasks with
mutual-exclusion groups, beside the same tasks without dependencies (``queue_dag.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Hashable
from pathlib import Path
from typing import Any

# This file is named queue.py, as the issue asks; keep it from shadowing the standard
# library's ``queue`` (multiprocessing imports it) by moving bench/ to the end of the path.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != _HERE] + [_HERE]

import queue_dag  # noqa: E402
import queue_pg  # noqa: E402
import queue_sqlite  # noqa: E402
import taskloom  # noqa: E402
from _drain import Setup, Systems, Worker, drain, measure, print_tables, work, work_batched  # noqa: E402
from queue_sqlite import BATCH  # noqa: E402


def taskloom_setup(url: str, jobs: int) -> None:
    with taskloom.connect(url) as tl:
        # A backlog over the queue's default cap of ready tasks would be cut to the cap.
        tl.queue.max_active = max(tl.queue.max_active, 2 * jobs)
        for i in range(jobs):
            tl.queue.add(f"job {i}")


def taskloom_worker(url: str, index: int, start: Any, results: Any) -> None:
    with taskloom.connect(url) as tl:
        tl.queue.stats()  # open and migrate before the clock starts

        def complete(task: taskloom.Task) -> str:
            tl.queue.done(task.id, task.lease_token or "")
            return task.id

        work(start, results, lambda: tl.queue.claim(f"w{index}", lease=30), complete)


def taskloom_chained_worker(url: str, index: int, start: Any, results: Any) -> None:
    """``done_and_claim``: one transaction per job. Its claim latency is the combined call's,
    the time a worker waits between finishing one task and holding the next."""
    agent = f"w{index}"
    held: list[taskloom.Task] = []  # the next task, claimed with the last completion
    with taskloom.connect(url) as tl:
        tl.queue.stats()

        def claim() -> taskloom.Task | None:
            return held.pop() if held else tl.queue.claim(agent, lease=30)

        def complete(task: taskloom.Task) -> str:
            token = task.lease_token or ""
            _, nxt = tl.queue.done_and_claim(task.id, token, agent, lease=30, held=task)
            held.extend([nxt] if nxt else [])
            return task.id

        work(start, results, claim, complete, timed="complete")


def taskloom_worker_loop(url: str, index: int, start: Any, results: Any, *, batch: int = 1) -> None:
    """:class:`taskloom.Worker`, the loop taskloom ships: ``done_and_claim`` per job (or
    ``batch`` tasks claimed at a time and acknowledged together), the leases renewed by a
    thread while the handler runs (here it does nothing). Its latency is the gap between one
    handler call's end and the next one's start."""
    ids: list[Hashable] = []
    latencies: list[float] = []
    ended: list[float] = []

    def handle(task: taskloom.Task) -> None:
        now = time.perf_counter()
        if ended:
            latencies.append((now - ended.pop()) * 1000)
        ids.append(task.id)
        ended.append(time.perf_counter())

    with taskloom.connect(url) as tl:
        tl.queue.stats()
        worker = taskloom.Worker(tl.queue, f"w{index}", handle, lease=30, batch=batch)
        start.wait()
        first = time.time()
        worker.run(until_empty=True)
        results.put((ids, first, time.time(), latencies))


def taskloom_batch_worker_loop(url: str, index: int, start: Any, results: Any) -> None:
    taskloom_worker_loop(url, index, start, results, batch=BATCH)


def taskloom_batch_worker(url: str, index: int, start: Any, results: Any) -> None:
    """``claim_batch(10)`` and ``done_many`` (given the held tasks): two transactions per
    ten jobs."""
    agent = f"w{index}"
    with taskloom.connect(url) as tl:
        tl.queue.stats()

        def complete_many(tasks: list[taskloom.Task]) -> list[Hashable]:
            items = [(t.id, t.lease_token or "") for t in tasks]
            done, lost = tl.queue.done_many(items, held=tasks)
            assert not lost, f"leases lost: {lost}"
            return [t.id for t in done]

        work_batched(
            start, results, lambda: tl.queue.claim_batch(agent, BATCH, lease=30), complete_many
        )


ONE_AT_A_TIME = {
    "taskloom": taskloom_worker,
    "taskloom done_and_claim": taskloom_chained_worker,
    "taskloom Worker": taskloom_worker_loop,
}
BATCHED = {
    f"taskloom claim_batch({BATCH}) + done_many": taskloom_batch_worker,
    f"taskloom Worker batch({BATCH})": taskloom_batch_worker_loop,
}
TASKLOOM_ROWS = {**ONE_AT_A_TIME, **BATCHED}


def ratios(raw: str, raw_events: str, batched: list[str]) -> dict[str, list[str]]:
    """Which baselines each taskloom row is divided by: the one-at-a-time rows by the raw
    queue (the target's baseline) and by raw plus an event row; the batch rows by the raw
    queue and ``batched`` (the batch baselines and peers)."""
    return {
        **{name: [raw, raw_events] for name in ONE_AT_A_TIME},
        **{name: [raw, *batched] for name in BATCHED},
    }


ENQUEUE_BATCH = 100


def enqueue_rates(tmp: Path, jobs: int) -> None:
    """Print the enqueue rates, one process: one transaction per job, then batches of
    :data:`ENQUEUE_BATCH` (taskloom ``add_many``; raw ``executemany`` in one transaction)."""
    raw = queue_sqlite.raw_conn(str(tmp / "enqueue-raw.db"))
    raw.executescript(queue_sqlite.RAW_SCHEMA)
    t0 = time.perf_counter()
    for i in range(jobs):
        queue_sqlite.raw_enqueue_one(raw, i)
    raw_one = jobs / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for first in range(0, jobs, ENQUEUE_BATCH):
        queue_sqlite.raw_enqueue_many(raw, range(first, min(jobs, first + ENQUEUE_BATCH)))
    raw_many = jobs / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    taskloom_setup(f"sqlite:///{tmp / 'enqueue-tl.db'}", jobs)
    tl_one = jobs / (time.perf_counter() - t0)
    with taskloom.connect(f"sqlite:///{tmp / 'enqueue-tl-many.db'}") as tl:
        tl.queue.stats()
        t0 = time.perf_counter()
        for first in range(0, jobs, ENQUEUE_BATCH):
            tl.queue.add_many(
                {"title": f"job {i}"} for i in range(first, min(jobs, first + ENQUEUE_BATCH))
            )
        tl_many = jobs / (time.perf_counter() - t0)
    for what, r, t in (
        ("one transaction per job", raw_one, tl_one),
        (f"batches of {ENQUEUE_BATCH}", raw_many, tl_many),
    ):
        print(f"enqueue, 1 process, {what}: raw {r:,.0f}/s, taskloom {t:,.0f}/s ({t / r:.2f}x)")


def sqlite_tables(jobs: int, workers: list[int], only: list[str], repeat: int) -> None:
    found, notes = queue_sqlite.systems()
    found = {**{name: (taskloom_setup, w) for name, w in TASKLOOM_ROWS.items()}, **found}
    found = select(found, only, queue_sqlite.RAW)
    for note in notes:
        print(f"note: {note}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        enqueue_rates(tmp, jobs)

        def run_one(tag: str, name: str, setup: Setup, worker: Worker, w: int) -> dict[str, Any]:
            path = str(tmp / f"{tag}.db")
            target = f"sqlite:///{path}" if name.startswith("taskloom") else path
            setup(target, jobs)
            return drain(target, worker, w, jobs)

        table = measure(found, workers, repeat, run_one)
    pairs = ratios(queue_sqlite.RAW, queue_sqlite.RAW_EVENTS, [queue_sqlite.RAW_BATCH])
    print_tables(jobs, workers, table, pairs, repeat)


def select(found: dict[str, Any], only: list[str], baseline: str) -> dict[str, Any]:
    """The systems whose name contains one of ``only`` (all of them when it is empty), and
    ``baseline`` always, since every row is shown beside it. An ``--only`` that names no
    system is a usage error (exit status 2) listing the names."""
    chosen = {k: v for k, v in found.items() if not only or any(o in k for o in only)}
    if not chosen:
        names = "; ".join(found)
        print(
            f"queue.py: error: --only {' '.join(only)!r} names no system; the systems: {names}",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return {k: v for k, v in found.items() if k == baseline or k in chosen}


def dag(jobs: int, workers: list[int], repeat: int, backend: str) -> None:
    """``--dag``: every row of ``queue_dag`` in a fresh database of ``backend``."""
    with tempfile.TemporaryDirectory() as tmp:

        @contextlib.contextmanager
        def sqlite_file(tag: str) -> Any:
            yield f"sqlite:///{tmp}/dag-{tag}.db"

        def postgres(tag: str) -> Any:
            return queue_pg.fresh_database(f"tl_bench_dag_{tag}")

        queue_dag.run(jobs, workers, repeat, sqlite_file if backend == "sqlite" else postgres)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run every cell N times, systems taking turns, and show the median run",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TEXT",
        help="run only the systems whose name contains TEXT (repeatable), e.g. --only raw",
    )
    parser.add_argument(
        "--dag",
        action="store_true",
        help="claim throughput on a random DAG with groups, beside the same tasks without",
    )
    args = parser.parse_args()
    if args.jobs < 1 or args.repeat < 1 or any(w < 1 for w in args.workers):
        parser.error("--jobs, --repeat and --workers must be positive")
    if args.dag:
        dag(args.jobs, args.workers, args.repeat, args.backend)
    elif args.backend == "sqlite":
        sqlite_tables(args.jobs, args.workers, args.only, args.repeat)
    else:
        rows: Systems = {name: (queue_pg.taskloom_setup, w) for name, w in TASKLOOM_ROWS.items()}
        found, notes = queue_pg.systems(rows)
        for note in notes:
            print(f"note: {note}")
        found = select(found, args.only, queue_pg.RAW)
        pairs = ratios(queue_pg.RAW, queue_pg.RAW_EVENTS, [queue_pg.RAW_BATCH, *queue_pg.PEERS])
        queue_pg.run_table(args.jobs, args.workers, found, pairs, args.repeat)


if __name__ == "__main__":
    main()
