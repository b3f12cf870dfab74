"""Benchmark: the work queue against a raw lease-aware baseline, in one invocation.

    .venv/bin/python bench/queue.py [--jobs 4000] [--workers 1 2 4] [--backend sqlite|postgres]

SQLite: enqueue rate (one process) and claim+complete throughput at 1, 2 and 4 worker
processes for taskloom (events included) and a raw ``sqlite3`` baseline (WAL,
synchronous=NORMAL, BEGIN IMMEDIATE, UPDATE … RETURNING, fenced complete). Every processed id
is collected, so a job handed out twice shows as ``dup``. PostgreSQL: see ``queue_pg.py``.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# This file is named queue.py, as the issue asks; keep it from shadowing the standard
# library's ``queue`` (multiprocessing imports it) by moving bench/ to the end of the path.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != _HERE] + [_HERE]

import taskloom  # noqa: E402
from queue_pg import drain, run_table  # noqa: E402

RAW_SCHEMA = """
CREATE TABLE jobs (id INTEGER PRIMARY KEY, status INTEGER NOT NULL DEFAULT 0,
                   lease_owner TEXT, lease_until REAL, payload TEXT NOT NULL);
CREATE INDEX jobs_ready ON jobs (id) WHERE status = 0;
"""


def _raw_conn(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def raw_setup(path: str, jobs: int) -> None:
    conn = _raw_conn(path)
    conn.executescript(RAW_SCHEMA)
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO jobs (payload) VALUES (?)", [(f"job {i}",) for i in range(jobs)])
    conn.execute("COMMIT")


def raw_worker(path: str, index: int, start: Any, results: Any) -> None:
    conn = _raw_conn(path)
    me, ids, first = f"w{index}", [], 0.0
    start.wait()
    first = time.time()
    while True:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute(
            "UPDATE jobs SET status = 1, lease_owner = ?, lease_until = ? WHERE id = "
            "(SELECT id FROM jobs WHERE status = 0 ORDER BY id LIMIT 1) RETURNING id",
            (me, time.time() + 30),
        ).fetchone()
        conn.execute("COMMIT")
        if row is None:
            break
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE jobs SET status = 2 WHERE id = ? AND lease_owner = ?", (row[0], me))
        conn.execute("COMMIT")
        ids.append(row[0])
    results.put((ids, first, time.time()))


def _url(dsn: str) -> str:
    """The PostgreSQL harness hands out libpq conninfo strings; taskloom takes URLs."""
    if "://" in dsn or "=" not in dsn:
        return dsn
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(dsn)
    host = parts.get("host", "")
    host = "" if str(host).startswith("/") else host
    return f"postgresql://{parts.get('user', 'postgres')}@{host}/{parts.get('dbname', '')}"


def taskloom_setup(url: str, jobs: int) -> None:
    with taskloom.connect(_url(url)) as tl:
        for i in range(jobs):
            tl.queue.add(f"job {i}")


def taskloom_worker(url: str, index: int, start: Any, results: Any) -> None:
    ids: list[str] = []
    with taskloom.connect(_url(url)) as tl:
        tl.queue.stats()  # open and migrate before the clock starts
        start.wait()
        first = time.time()
        while (task := tl.queue.claim(f"w{index}", lease=30)) is not None:
            tl.queue.done(task.id, task.lease_token or "")
            ids.append(task.id)
    results.put((ids, first, time.time()))


def enqueue_rates(tmp: Path, jobs: int) -> tuple[float, float]:
    t0 = time.perf_counter()
    raw = _raw_conn(str(tmp / "enqueue-raw.db"))
    raw.executescript(RAW_SCHEMA)
    for i in range(jobs):
        raw.execute("BEGIN IMMEDIATE")
        raw.execute("INSERT INTO jobs (payload) VALUES (?)", (f"job {i}",))
        raw.execute("COMMIT")
    raw_rate = jobs / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    taskloom_setup(f"sqlite:///{tmp / 'enqueue-tl.db'}", jobs)
    return raw_rate, jobs / (time.perf_counter() - t0)


def sqlite_table(jobs: int, workers: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        raw_rate, tl_rate = enqueue_rates(tmp, jobs)
        print(
            f"enqueue, 1 process, one transaction per job: raw {raw_rate:,.0f}/s, "
            f"taskloom {tl_rate:,.0f}/s ({tl_rate / raw_rate:.2f}x)"
        )
        print(f"\n{jobs:,} jobs, claim+complete, jobs/s first-to-last (dup = handed out twice)")
        print(f"| system | {' | '.join(f'W={w}' for w in workers)} |")
        print(f"|---|{'---|' * len(workers)}")
        rows: dict[str, list[dict[str, Any]]] = {"raw sqlite3 lease": [], "taskloom": []}
        for w in workers:
            raw_path = str(tmp / f"raw-{w}.db")
            raw_setup(raw_path, jobs)
            rows["raw sqlite3 lease"].append(drain(raw_path, raw_worker, w, jobs))
            url = f"sqlite:///{tmp / f'tl-{w}.db'}"
            taskloom_setup(url, jobs)
            rows["taskloom"].append(drain(url, taskloom_worker, w, jobs))
        for name, cells in rows.items():
            text = " | ".join(
                f"{c['jobs_per_s']:,.0f}"
                + (f" dup {c['dup']}" if c["dup"] else "")
                + ("" if c["done"] == jobs else f" (done {c['done']})")
                for c in cells
            )
            print(f"| {name} | {text} |")
        ratios = " | ".join(
            f"{t['jobs_per_s'] / r['jobs_per_s']:.2f}x"
            for t, r in zip(rows["taskloom"], rows["raw sqlite3 lease"], strict=True)
        )
        print(f"| taskloom / raw | {ratios} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    if args.backend == "sqlite":
        sqlite_table(args.jobs, args.workers)
    else:
        run_table(args.jobs, args.workers, {"taskloom": (taskloom_setup, taskloom_worker)})


if __name__ == "__main__":
    main()
