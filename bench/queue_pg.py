"""PostgreSQL queue baselines for ``bench/queue.py --backend postgres``.

Every system drains the same pre-filled backlog with W worker *processes*; each worker notes
when it started its first claim and finished its last job, and throughput is
``jobs / (latest finish - earliest start)`` ("first to last"), the same clock for every system.
Every processed id is returned, so a job handed out twice shows up as ``dup``.

- ``raw``: psycopg 3, autocommit, a lease-aware claim
  ``UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED) RETURNING`` over an
  ``(available_at, id) WHERE status < 2`` index, then a fencing ``UPDATE … WHERE lease_owner``:
  the smallest correct lease queue, two statements per job.
- ``taskloom claim_batch(10)``: taskloom claiming ten tasks per transaction (the
  counterpart of pgqueuer's batch); ``bench/queue.py`` adds the one-at-a-time taskloom row.
- ``pgqueuer`` (when installed): ``QueueManager`` in drain mode with its default batch of 10.

Each system runs in its own fresh database ``<prefix>_<system>``, dropped afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

from taskloom.store.postgres import join_url

Worker = Callable[[str, int, Any, Any], None]
"""``worker(dsn, index, start_event, results_queue)``; puts ``(ids, first, last)``."""


def admin_dsn() -> str:
    return os.environ.get("TASKLOOM_BENCH_PG", "postgresql://postgres@/postgres")


def with_db(url: str, dbname: str) -> str:
    """``url`` pointing at another database (a URL, so ``taskloom.connect`` accepts it too)."""
    return join_url(urlsplit(url)._replace(path=f"/{dbname}"))


@contextlib.contextmanager
def fresh_database(name: str) -> Iterator[str]:
    admin = admin_dsn()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_db(admin, name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def drain(dsn: str, worker: Worker, workers: int, jobs: int) -> dict[str, Any]:
    """Run ``workers`` processes of ``worker`` against ``dsn``; jobs/s first-to-last, dups."""
    ctx = mp.get_context("fork")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(dsn, n, start, results)) for n in range(workers)]
    for p in procs:
        p.start()
    time.sleep(0.5)  # let every worker connect before the clock starts
    start.set()
    outs = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    ids = [i for out in outs for i in out[0]]
    firsts = [o[1] for o in outs if o[0]]
    lasts = [o[2] for o in outs if o[0]]
    span = max(lasts) - min(firsts) if firsts else float("nan")
    return {
        "jobs_per_s": len(set(ids)) / span if span else 0.0,
        "done": len(set(ids)),
        "dup": len(ids) - len(set(ids)),
        "split": [len(o[0]) for o in outs],
    }


# --- raw psycopg SKIP LOCKED lease baseline -----------------------------------------------

RAW_SCHEMA = """
CREATE TABLE jobs (
    id BIGSERIAL PRIMARY KEY,
    status SMALLINT NOT NULL DEFAULT 0,
    available_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    lease_owner TEXT,
    attempts INT NOT NULL DEFAULT 0,
    payload TEXT NOT NULL
);
CREATE INDEX jobs_claim ON jobs (available_at, id) WHERE status < 2;
"""
RAW_CLAIM = """
UPDATE jobs SET status = 1, lease_owner = %s, attempts = attempts + 1,
       available_at = now() + interval '30 seconds'
 WHERE id = (SELECT id FROM jobs WHERE status < 2 AND available_at <= now()
              ORDER BY available_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id, payload
"""
RAW_DONE = "UPDATE jobs SET status = 2 WHERE id = %s AND lease_owner = %s"


def raw_setup(dsn: str, jobs: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(RAW_SCHEMA)
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO jobs (payload) VALUES (%s)", [(f'{{"n": {i}}}',) for i in range(jobs)]
            )
        conn.execute("VACUUM ANALYZE jobs")


def raw_worker(dsn: str, index: int, start: Any, results: Any) -> None:
    owner = f"w{index}-{os.getpid()}"
    ids: list[int] = []
    first = last = 0.0
    with psycopg.connect(dsn, autocommit=True) as conn:
        start.wait()
        first = time.time()
        while True:
            row = conn.execute(RAW_CLAIM, (owner,)).fetchone()
            if row is None:
                break
            conn.execute(RAW_DONE, (row[0], owner))
            ids.append(row[0])
            last = time.time()
    results.put((ids, first, last))


# --- pgqueuer -----------------------------------------------------------------------------


def pgqueuer_available() -> str | None:
    """``None`` if pgqueuer imports, else why not (printed as a note)."""
    try:
        import pgqueuer  # noqa: F401
    except ImportError as exc:
        return f"pgqueuer not installed ({exc}); pip install pgqueuer to include it"
    return None


def pgqueuer_setup(dsn: str, jobs: int) -> None:
    from pgqueuer.db import PsycopgDriver
    from pgqueuer.queries import Queries

    async def main() -> None:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        queries = Queries(PsycopgDriver(conn))
        await queries.install()
        for start in range(0, jobs, 1000):
            n = min(1000, jobs - start)
            payloads: list[bytes | None] = [str(i).encode() for i in range(start, start + n)]
            await queries.enqueue(
                ["job"] * n, payloads, [0] * n, [None] * n, [None] * n, [None] * n
            )
        await conn.close()

    asyncio.run(main())


def pgqueuer_worker(dsn: str, index: int, start: Any, results: Any) -> None:
    from pgqueuer.db import PsycopgDriver
    from pgqueuer.qm import QueueManager
    from pgqueuer.queries import Queries
    from pgqueuer.types import QueueExecutionMode

    ids: list[int] = []
    stamps: list[float] = []

    async def main() -> None:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        qm = QueueManager(Queries(PsycopgDriver(conn)))

        @qm.entrypoint("job")
        async def job(j: Any) -> None:
            if not stamps:
                stamps.append(time.time())
            ids.append(int(j.payload))
            stamps[1:] = [time.time()]

        start.wait()
        await qm.run(mode=QueueExecutionMode.drain, dequeue_timeout=timedelta(seconds=1))
        await conn.close()

    asyncio.run(main())
    results.put((ids, stamps[0] if stamps else 0.0, stamps[-1] if stamps else 0.0))


# --- taskloom on PostgreSQL ---------------------------------------------------------------


def taskloom_setup(dsn: str, jobs: int) -> None:
    import taskloom

    with taskloom.connect(dsn) as tl, tl.store.write() as tx:
        for i in range(jobs):
            tx.execute(
                "INSERT INTO tasks (id, title, created_at) VALUES (?, ?, ?)",
                (f"task-{i:06d}", f"job {i}", 1.0 + i),
            )
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE tasks")


def taskloom_worker_batch(batch: int) -> Worker:
    """A taskloom worker that claims ``batch`` tasks per claim transaction."""

    def work(dsn: str, index: int, start: Any, results: Any) -> None:
        import taskloom

        agent = f"w{index}"
        ids: list[str] = []
        first = last = 0.0
        with taskloom.connect(dsn) as tl:
            tl.queue.stats()  # connect and migrate before the clock starts
            start.wait()
            first = time.time()
            while tasks := tl.queue.claim_batch(agent, batch, lease=120):
                for task in tasks:
                    tl.queue.done(task.id, task.lease_token or "")
                    ids.append(task.id)
                last = time.time()
        results.put((ids, first, last))

    return work


def taskloom_worker_10(dsn: str, index: int, start: Any, results: Any) -> None:
    taskloom_worker_batch(10)(dsn, index, start, results)


# --- the table ----------------------------------------------------------------------------

System = tuple[Callable[[str, int], None], Worker]
RAW = "raw psycopg SKIP LOCKED lease"
PGQUEUER = "pgqueuer 1.6 (batch 10)"


def systems(extra: dict[str, System] | None = None) -> tuple[dict[str, System], list[str]]:
    """The systems that can run here, and a note for each that cannot."""
    found: dict[str, System] = dict(extra or {})
    found["taskloom claim_batch(10)"] = (taskloom_setup, taskloom_worker_10)
    found[RAW] = (raw_setup, raw_worker)
    notes = []
    missing = pgqueuer_available()
    if missing is None:
        found[PGQUEUER] = (pgqueuer_setup, pgqueuer_worker)
    else:
        notes.append(missing)
    return found, notes


def run_table(
    jobs: int, workers: list[int], extra: dict[str, System] | None = None
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Every system at every worker count, each in a fresh database; prints as it goes."""
    found, notes = systems(extra)
    for note in notes:
        print(f"note: {note}")
    print(f"{jobs:,} jobs, claim+complete, jobs/s first-to-last (dup = handed out twice)")
    print(f"| system | {' | '.join(f'W={w}' for w in workers)} |")
    print(f"|---|{'---|' * len(workers)}")
    table = []
    for name, (setup, worker) in found.items():
        cells = []
        for w in workers:
            with fresh_database(f"tl_bench_{len(table)}_{w}") as dsn:
                setup(dsn, jobs)
                cells.append(drain(dsn, worker, w, jobs))
        text = " | ".join(
            f"{c['jobs_per_s']:,.0f}"
            + (f" dup {c['dup']}" if c["dup"] else "")
            + ("" if c["done"] == jobs else f" (done {c['done']})")
            for c in cells
        )
        print(f"| {name} | {text} |", flush=True)
        table.append((name, cells))
    rates = {name: [c["jobs_per_s"] for c in cells] for name, cells in table}
    for name in [n for n in rates if n.startswith("taskloom")]:
        for base in (RAW, PGQUEUER):
            if base in rates:
                pairs = zip(rates[name], rates[base], strict=True)
                ratios = " | ".join(f"{t / b:.2f}x" for t, b in pairs)
                print(f"| {name} / {base.split(' (')[0]} | {ratios} |")
    return table
