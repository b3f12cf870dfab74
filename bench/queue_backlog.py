"""Benchmark: what each queue operation costs at a small backlog (the baseline) and at a large
one, in one invocation: operations whose work grows with the backlog stand out.

Both queues hold ready tasks only (the cap raised above them), added in batches. Each
operation runs ``--repeat`` times on each; the table gives the median in milliseconds and the
large backlog's time over the small one's. An operation that answers from an index reads the
same rows at any backlog; one that counts or sorts the backlog grows with it.

    python bench/queue_backlog.py [--backend sqlite|postgres] [--small N] [--large N]
                                  [--repeat N]

PostgreSQL runs in two scratch schemas of the server ``TASKLOOM_BENCH_PG`` names (default
``postgresql://postgres@/postgres``), dropped afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import taskloom
from taskloom.queue.handle import Queue

Op = Callable[[Queue, Iterator[str]], object]
"""An operation: the queue and, for one that acts on a ready task, a supply of their ids."""


def _claim_then(q: Queue, end: Callable[[Queue, taskloom.Task], object]) -> None:
    task = q.claim("bench", kinds="job")
    assert task is not None and task.lease_token is not None
    end(q, task)


def _surface(q: Queue) -> str | None:
    q.unsee("bench")  # as if the block had not been shown: it is worked out in full
    return q.surface("bench")


OPERATIONS: dict[str, Op] = {
    "add": lambda q, ids: q.add("one more", kind="job"),
    "claim + done": lambda q, ids: _claim_then(q, lambda q, t: q.done(t.id, str(t.lease_token))),
    "claim + fail (dead)": lambda q, ids: _claim_then(
        q, lambda q, t: q.fail(t.id, str(t.lease_token), "boom", retry=False)
    ),
    "cancel": lambda q, ids: q.cancel(next(ids)),
    "list 100": lambda q, ids: q.list(limit=100),
    "stats": lambda q, ids: q.stats(),
    "ready 20": lambda q, ids: q.ready(limit=20),
    "ready_count": lambda q, ids: q.ready_count("bench"),
    "surface (prompt hook)": lambda q, ids: _surface(q),
}


def fill(q: Queue, n: int) -> None:
    q.max_active = n + 10_000
    for start in range(0, n, 5_000):
        batch = range(start, min(n, start + 5_000))
        q.add_many({"title": f"job {i}", "kind": "job"} for i in batch)


def timed(q: Queue, op: Op, repeat: int) -> float:
    ids = iter([t.id for t in q.list(status="ready", limit=repeat)])
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        op(q, ids)
        runs.append((time.perf_counter() - t0) * 1000)
    return statistics.median(runs)


@contextlib.contextmanager
def database(backend: str, folder: Path, name: str) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{folder / name}.db"
        return
    import psycopg

    server = os.environ.get("TASKLOOM_BENCH_PG", "postgresql://postgres@/postgres")
    schema = f"tl_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in server else "?"
    try:
        yield f"{server}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def measure(backend: str, n: int, repeat: int, folder: Path) -> dict[str, float]:
    with database(backend, folder, f"backlog-{n}") as url, taskloom.connect(url) as tl:
        t0 = time.perf_counter()
        fill(tl.queue, n)
        print(f"  {n:,} ready tasks added in {time.perf_counter() - t0:.1f} s", flush=True)
        return {name: timed(tl.queue, op, repeat) for name, op in OPERATIONS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--small", type=int, default=1_000, help="the baseline's backlog")
    parser.add_argument("--large", type=int, default=100_000, help="the large backlog")
    parser.add_argument("--repeat", type=int, default=15, help="runs of each operation")
    args = parser.parse_args()
    for flag in ("small", "large", "repeat"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag} must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        small = measure(args.backend, args.small, args.repeat, Path(tmp))
        large = measure(args.backend, args.large, args.repeat, Path(tmp))
    print(f"\n{args.backend}, ms per operation, median of {args.repeat}")
    print(f"| operation | {args.small:,} ready | {args.large:,} ready | ratio |")
    print("|---|---|---|---|")
    for name in OPERATIONS:
        ratio = large[name] / small[name] if small[name] else float("inf")
        print(f"| {name} | {small[name]:.2f} | {large[name]:.2f} | {ratio:.1f}x |")


if __name__ == "__main__":
    main()
