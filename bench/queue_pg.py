"""PostgreSQL queue baselines for ``bench/queue.py --backend postgres``.

Every system drains the same pre-filled backlog with W worker processes (see ``_drain.py``).

- ``raw``: psycopg 3, autocommit, a lease-aware claim
  ``UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED) RETURNING`` over an
  ``(available_at, id) WHERE status < 2`` index, then a fencing ``UPDATE … WHERE lease_owner``:
  the smallest correct lease queue, two statements per job.
- ``raw …, batch(10)``: the same claiming ten jobs per statement and completing them in one
  (the like-for-like baseline for taskloom's ``claim_batch`` + ``done_many`` row, which
  ``bench/queue.py`` adds with its other taskloom rows).
- ``raw … + event row``: the raw baseline whose claim and completion each also append an
  event row (the job's changed fields as a JSON array, and a timestamp) from a data-modifying
  CTE of the same statement, as taskloom's trigger does. Not the target's baseline; it shows
  how much of the gap to raw is the event itself.
- ``pgqueuer`` (when installed): ``QueueManager`` in drain mode with its default batch of 10.
- ``procrastinate`` (when installed): one worker (concurrency 1) per process that exits when
  the queue is empty; its claim is a stored procedure with ``SKIP LOCKED``.

Each system runs in its own fresh database ``<prefix>_<system>``, dropped afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Hashable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

from _drain import (
    Setup,
    Systems,
    Worker,
    drain,
    installed,
    measure,
    print_tables,
    work,
    work_batched,
)
from taskloom.store.pg_url import join_url


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
EVENTS_SCHEMA = """
CREATE TABLE events (id BIGSERIAL PRIMARY KEY, job_id BIGINT NOT NULL, data JSON NOT NULL,
                     created_at TIMESTAMPTZ NOT NULL);
"""


def with_event(statement: str, returning: str) -> str:
    """``statement`` (an ``UPDATE jobs … RETURNING …``) that also appends the changed job's
    event; the statement returns ``returning``."""
    change = statement.split("RETURNING")[0]
    return (
        f"WITH c AS ({change} RETURNING id, status, lease_owner, attempts, available_at, payload),"
        " e AS (INSERT INTO events (job_id, data, created_at) SELECT id,"
        " json_build_array(status, lease_owner, attempts, available_at), now() FROM c)"
        f" SELECT {returning} FROM c"
    )


RAW_CLAIM_MANY = RAW_CLAIM.replace("WHERE id = (", "WHERE id IN (").replace("LIMIT 1", "LIMIT %s")
RAW_DONE_MANY = "UPDATE jobs SET status = 2 WHERE id = ANY(%s) AND lease_owner = %s"
RAW_CLAIM_EVENT = with_event(RAW_CLAIM, "id, payload")
RAW_DONE_EVENT = with_event(RAW_DONE, "id")
BATCH = 10


def raw_setup(dsn: str, jobs: int, schema: str = RAW_SCHEMA) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(schema)
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO jobs (payload) VALUES (%s)", [(f'{{"n": {i}}}',) for i in range(jobs)]
            )
        conn.execute("VACUUM ANALYZE jobs")


def events_setup(dsn: str, jobs: int) -> None:
    raw_setup(dsn, jobs, RAW_SCHEMA + EVENTS_SCHEMA)


def raw_worker(dsn: str, index: int, start: Any, results: Any, *, events: bool = False) -> None:
    owner = f"w{index}-{os.getpid()}"
    conn = psycopg.connect(dsn, autocommit=True)
    claim_sql, done_sql = (RAW_CLAIM_EVENT, RAW_DONE_EVENT) if events else (RAW_CLAIM, RAW_DONE)

    def claim() -> int | None:
        row = conn.execute(claim_sql, (owner,)).fetchone()
        return None if row is None else int(row[0])

    def complete(job: int) -> int:
        conn.execute(done_sql, (job, owner))
        return job

    work(start, results, claim, complete)


def events_worker(dsn: str, index: int, start: Any, results: Any) -> None:
    raw_worker(dsn, index, start, results, events=True)


def raw_batch_worker(dsn: str, index: int, start: Any, results: Any) -> None:
    """The raw baseline claiming ten jobs per statement and completing them in one."""
    owner = f"w{index}-{os.getpid()}"
    conn = psycopg.connect(dsn, autocommit=True)

    def claim_many() -> list[int]:
        return [int(r[0]) for r in conn.execute(RAW_CLAIM_MANY, (owner, BATCH)).fetchall()]

    def complete_many(jobs: list[int]) -> list[Hashable]:
        conn.execute(RAW_DONE_MANY, (jobs, owner))
        return list(jobs)

    work_batched(start, results, claim_many, complete_many)


# --- pgqueuer -----------------------------------------------------------------------------


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
    span: list[float] = []

    async def main() -> None:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        qm = QueueManager(Queries(PsycopgDriver(conn)))

        @qm.entrypoint("job")
        async def job(j: Any) -> None:
            ids.append(int(j.payload))
            span[1:] = [time.time()]  # its drain mode idles a second before exiting

        start.wait()
        span.append(time.time())
        await qm.run(mode=QueueExecutionMode.drain, dequeue_timeout=timedelta(seconds=1))
        await conn.close()

    asyncio.run(main())
    results.put((ids, span[0], span[-1], None))


# --- procrastinate ------------------------------------------------------------------------


def procrastinate_app(dsn: str, ids: list[int] | None = None) -> Any:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=dsn))

    @app.task(name="job")
    def job(n: int) -> None:
        if ids is not None:
            ids.append(n)

    return app


def procrastinate_setup(dsn: str, jobs: int) -> None:
    app = procrastinate_app(dsn)
    with app.open():
        app.schema_manager.apply_schema()
        task = app.tasks["job"]
        for first in range(0, jobs, 1000):
            task.batch_defer(*({"n": i} for i in range(first, min(jobs, first + 1000))))


def procrastinate_worker(dsn: str, index: int, start: Any, results: Any) -> None:
    ids: list[int] = []
    app = procrastinate_app(dsn, ids)
    span: list[float] = []

    async def main() -> None:
        async with app.open_async():
            start.wait()
            span.append(time.time())
            await app.run_worker_async(wait=False, concurrency=1, install_signal_handlers=False)
            span.append(time.time())

    asyncio.run(main())
    results.put((ids, span[0], span[1], None))


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


# --- the table ----------------------------------------------------------------------------

RAW = "raw psycopg SKIP LOCKED lease"
RAW_BATCH = f"raw psycopg SKIP LOCKED lease, batch({BATCH})"
RAW_EVENTS = "raw psycopg SKIP LOCKED lease + event row"
PGQUEUER = "pgqueuer (batch 10)"
PROCRASTINATE = "procrastinate"
PEERS = [PGQUEUER, PROCRASTINATE]


def systems(extra: Systems) -> tuple[Systems, list[str]]:
    """``extra`` (taskloom's rows), the batch and raw rows, and every peer that imports;
    a note for each peer that does not."""
    peers, notes = installed(
        {
            PGQUEUER: ("pgqueuer", pgqueuer_setup, pgqueuer_worker),
            PROCRASTINATE: ("procrastinate", procrastinate_setup, procrastinate_worker),
        }
    )
    raw = {
        RAW: (raw_setup, raw_worker),
        RAW_BATCH: (raw_setup, raw_batch_worker),
        RAW_EVENTS: (events_setup, events_worker),
    }
    return {**extra, **raw, **peers}, notes


def run_table(
    jobs: int, workers: list[int], found: Systems, ratios: dict[str, list[str]], repeat: int = 1
) -> None:
    """Every system in ``found`` (see :func:`systems`) at every worker count, each run in a
    fresh database; ``ratios`` as for :func:`_drain.print_tables`."""

    def run_one(tag: str, name: str, setup: Setup, worker: Worker, w: int) -> dict[str, Any]:
        with fresh_database(f"tl_bench_{os.getpid()}_{tag}") as dsn:
            setup(dsn, jobs)
            return drain(dsn, worker, w, jobs)

    table = measure(found, workers, repeat, run_one)
    print_tables(jobs, workers, table, ratios, repeat)
