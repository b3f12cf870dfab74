"""Benchmark: where one SQLite claim+complete's time goes, in one process.

    .venv/bin/python bench/queue_cost.py [--jobs 5000] [--repeat 5]

Six loops drain the same number of jobs, one worker, alternated run by run so that the
machine's drift hits each alike. Two transactions per job:

- ``raw``: the raw lease baseline of ``bench/queue.py`` (``queue_sqlite.RAW_CLAIM``);
- ``raw + event row``: the same, with an event row appended by a trigger on every change;
- ``taskloom SQL``: taskloom's own claim and fenced completion statements on a database
  ``taskloom.connect`` made (its schema, indexes and event triggers), driven by a bare
  ``sqlite3`` loop, each statement its own transaction: the
  database's share of a job;
- ``taskloom``: ``tl.queue.claim`` then ``tl.queue.done``, the API a worker calls.

One transaction per job, the path :class:`taskloom.Worker` takes:

- ``taskloom SQL, chained``: the completion and the next claim in one ``BEGIN IMMEDIATE``
  transaction, from a bare ``sqlite3`` loop;
- ``taskloom done_and_claim``: ``tl.queue.done_and_claim`` with the task held, the call
  behind it.

The difference between a SQL loop and its API loop is the Python API's share; between the
second and third loops, what taskloom's wider task row and richer event cost over a minimal
one. Per job, best and median of ``--repeat`` runs, and each row's rate as a multiple of
``raw``'s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# As in queue.py: keep bench/queue.py from shadowing the standard library's ``queue``.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != _HERE] + [_HERE]

import queue_sqlite  # noqa: E402
import taskloom  # noqa: E402
from taskloom._runtime import new_token  # noqa: E402
from taskloom.store.queue_sql import DONE_SQL, claim_sql  # noqa: E402

Drain = Callable[[Path], int]


def raw_drain(path: Path) -> int:
    conn, me, n = queue_sqlite.raw_conn(str(path)), "w0", 0
    while True:
        conn.execute("BEGIN IMMEDIATE")
        now = time.time()
        row = conn.execute(queue_sqlite.RAW_CLAIM, (me, now + 30, now)).fetchone()
        conn.execute("COMMIT")
        if row is None:
            return n
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(queue_sqlite.RAW_DONE, (row[0], me))
        conn.execute("COMMIT")
        n += 1


def claim_params(pid: int, now: float, token: str) -> list[object]:
    """The parameters of ``claim_sql("sqlite", 0, 1)`` for agent ``w0``, a 30 s lease."""
    return ["w0", pid, "host", now, now + 30, token, now, "w0", now, now]


def taskloom_sql_drain(path: Path) -> int:
    claim = claim_sql("sqlite", 0, 1)
    conn, pid, n = queue_sqlite.raw_conn(str(path)), os.getpid(), 0
    while True:  # each statement its own transaction
        now, token = time.time(), new_token()
        rows = conn.execute(claim, claim_params(pid, now, token)).fetchall()
        if not rows:
            return n
        task_id = rows[0][0]  # RETURNING *: the id first
        if not conn.execute(DONE_SQL, [now, now, None, task_id, token]).fetchall():
            raise SystemExit(f"taskloom SQL: the completion of {task_id} matched nothing")
        n += 1


def taskloom_sql_chained_drain(path: Path) -> int:
    claim = claim_sql("sqlite", 0, 1)
    conn, pid, n = queue_sqlite.raw_conn(str(path)), os.getpid(), 0
    now, token = time.time(), new_token()
    task = conn.execute(claim, claim_params(pid, now, token)).fetchall()
    while task:
        now, done_token, token = time.time(), token, new_token()
        conn.execute("BEGIN IMMEDIATE")
        if not conn.execute(DONE_SQL, [now, now, None, task[0][0], done_token]).fetchall():
            raise SystemExit(f"taskloom SQL: the completion of {task[0][0]} matched nothing")
        task = conn.execute(claim, claim_params(pid, now, token)).fetchall()
        conn.execute("COMMIT")
        n += 1
    return n


def taskloom_drain(path: Path) -> int:
    with taskloom.connect(f"sqlite:///{path}") as tl:
        tl.queue.stats()
        n = 0
        while (task := tl.queue.claim("w0", lease=30)) is not None:
            tl.queue.done(task.id, task.lease_token or "")
            n += 1
        return n


def taskloom_chained_drain(path: Path) -> int:
    with taskloom.connect(f"sqlite:///{path}") as tl:
        task, n = tl.queue.claim("w0", lease=30), 0
        while task is not None:
            token = task.lease_token or ""
            _, task = tl.queue.done_and_claim(task.id, token, "w0", lease=30, held=task)
            n += 1
        return n


def seeded(folder: Path, jobs: int) -> dict[str, Path]:
    """One database per loop, each holding ``jobs`` ready jobs; copied before every run."""
    paths = {name: folder / f"{name}.db" for name in ("raw", "events", "taskloom")}
    queue_sqlite.raw_setup(str(paths["raw"]), jobs)
    queue_sqlite.events_setup(str(paths["events"]), jobs)
    with taskloom.connect(f"sqlite:///{paths['taskloom']}") as tl:
        tl.queue.add_many([{"title": f"job {i}"} for i in range(jobs)])
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=5000, help="jobs drained per run")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each loop")
    args = parser.parse_args()
    if args.jobs < 1 or args.repeat < 1:
        parser.error("--jobs and --repeat are whole numbers of at least 1")
    loops: dict[str, tuple[str, Drain]] = {
        "raw": ("raw", raw_drain),
        "raw + event row": ("events", raw_drain),
        "taskloom SQL (no Python API)": ("taskloom", taskloom_sql_drain),
        "taskloom (claim, then done)": ("taskloom", taskloom_drain),
        "taskloom SQL, chained": ("taskloom", taskloom_sql_chained_drain),
        "taskloom done_and_claim": ("taskloom", taskloom_chained_drain),
    }
    per_job: dict[str, list[float]] = {name: [] for name in loops}
    with tempfile.TemporaryDirectory() as tmp:
        seeds = seeded(Path(tmp), args.jobs)
        for run in range(args.repeat):
            for name, (seed, drain) in loops.items():
                path = Path(tmp) / f"run-{run}.db"
                shutil.copy(seeds[seed], path)
                start = time.perf_counter()
                drained = drain(path)
                elapsed = time.perf_counter() - start
                if drained != args.jobs:
                    raise SystemExit(f"{name}: drained {drained} of {args.jobs} jobs")
                per_job[name].append(elapsed / drained * 1e6)
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
            print(f"run {run + 1}/{args.repeat} done", flush=True)
    base = statistics.median(per_job["raw"])
    print(f"\n{args.jobs} jobs, one worker, sqlite {sqlite3.sqlite_version}")
    print(f"{'loop':<30} {'best µs/job':>12} {'median':>8} {'jobs/s':>8} {'vs raw':>7}")
    for name, values in per_job.items():
        median = statistics.median(values)
        print(
            f"{name:<30} {min(values):>12.1f} {median:>8.1f} {1e6 / median:>8,.0f}"
            f" {base / median:>6.2f}x"
        )


if __name__ == "__main__":
    main()
