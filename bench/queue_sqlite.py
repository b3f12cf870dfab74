"""SQLite queue baselines for ``bench/queue.py``: a raw lease queue and the peers that install.

- ``raw sqlite3 lease``: WAL, synchronous=NORMAL, ``BEGIN IMMEDIATE``, a lease-aware claim
  that is one ``UPDATE … RETURNING``: one ``available_at`` column makes a ready job and a job
  whose lease ran out equally claimable (index ``(available_at, id) WHERE status < 2``), and
  the claim moves it a lease ahead; then a fenced complete. The smallest correct lease queue,
  two transactions per job, the same design as ``queue_pg.py``'s raw baseline.
  ``raw sqlite3 lease, batch(10)``: the same claiming ten jobs per transaction and completing
  them in one.
- ``raw sqlite3 lease + event row``: the raw baseline whose every change also appends an
  event row (the job's changed fields as a JSON array, and a timestamp) from a trigger, in the
  same transaction, as taskloom does. Not the target's baseline; it shows how much of the gap
  to raw is the event itself.
- ``raw sqlite3, no lease expiry``: the plain claim of a ready row (index ``(id) WHERE
  status = 0``); a job whose worker dies is never handed out again. Shown as the ceiling,
  not as a baseline: it does less than the issue's lease-aware queue.
- ``huey SqliteStorage``: huey's own storage class; ``dequeue()`` deletes the row, so there
  is no lease (a worker that dies loses its job) and complete is free.
- ``litequeue``: ``pop()`` marks the row locked (``UPDATE … RETURNING``), ``done()`` marks it
  done; no lease expiry, no fencing.
- ``persist-queue SQLiteAckQueue``: ``get()`` then ``ack()``; its claim is a SELECT and an
  UPDATE guarded by an in-process lock, so several processes can be handed the same item,
  which the ``dup`` column shows.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Hashable, Iterable
from typing import Any

from _drain import Setup, Systems, Worker, installed, work, work_batched

RAW_SCHEMA = """
CREATE TABLE jobs (id INTEGER PRIMARY KEY, status INTEGER NOT NULL DEFAULT 0,
                   available_at REAL NOT NULL DEFAULT 0, lease_owner TEXT,
                   attempts INTEGER NOT NULL DEFAULT 0, payload TEXT NOT NULL);
CREATE INDEX jobs_claim ON jobs (available_at, id) WHERE status < 2;
"""
EVENTS_SCHEMA = """
CREATE TABLE events (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, data TEXT NOT NULL,
                     created_at TEXT NOT NULL);
CREATE TRIGGER jobs_event AFTER UPDATE ON jobs BEGIN
    INSERT INTO events (job_id, data, created_at) VALUES (NEW.id,
        json_array(NEW.status, NEW.lease_owner, NEW.attempts, NEW.available_at),
        strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;
"""
RAW_CLAIM = (
    "UPDATE jobs SET status = 1, lease_owner = ?, attempts = attempts + 1, available_at = ?"
    " WHERE id = (SELECT id FROM jobs WHERE status < 2 AND available_at <= ?"
    " ORDER BY available_at, id LIMIT 1) RETURNING id, payload"
)
RAW_CLAIM_MANY = RAW_CLAIM.replace("WHERE id = (", "WHERE id IN (").replace("LIMIT 1", "LIMIT ?")
RAW_DONE = "UPDATE jobs SET status = 2 WHERE id = ? AND lease_owner = ?"
PLAIN_SCHEMA = """
CREATE TABLE jobs (id INTEGER PRIMARY KEY, status INTEGER NOT NULL DEFAULT 0,
                   lease_owner TEXT, payload TEXT NOT NULL);
CREATE INDEX jobs_ready ON jobs (id) WHERE status = 0;
"""
PLAIN_CLAIM = (
    "UPDATE jobs SET status = 1, lease_owner = ? WHERE id ="
    " (SELECT id FROM jobs WHERE status = 0 ORDER BY id LIMIT 1) RETURNING id, payload"
)
BATCH = 10


def raw_conn(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def raw_setup(path: str, jobs: int, schema: str = RAW_SCHEMA) -> None:
    conn = raw_conn(path)
    conn.executescript(schema)
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO jobs (payload) VALUES (?)", [(f"job {i}",) for i in range(jobs)])
    conn.execute("COMMIT")
    conn.close()


def events_setup(path: str, jobs: int) -> None:
    raw_setup(path, jobs, RAW_SCHEMA + EVENTS_SCHEMA)


def plain_setup(path: str, jobs: int) -> None:
    raw_setup(path, jobs, PLAIN_SCHEMA)


def raw_enqueue_one(conn: sqlite3.Connection, i: int) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO jobs (payload) VALUES (?)", (f"job {i}",))
    conn.execute("COMMIT")


def raw_enqueue_many(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO jobs (payload) VALUES (?)", [(f"job {i}",) for i in ids])
    conn.execute("COMMIT")


def raw_worker(path: str, index: int, start: Any, results: Any, *, plain: bool = False) -> None:
    conn, me = raw_conn(path), f"w{index}"

    def claim() -> int | None:
        conn.execute("BEGIN IMMEDIATE")
        if plain:
            row = conn.execute(PLAIN_CLAIM, (me,)).fetchone()
        else:
            now = time.time()
            row = conn.execute(RAW_CLAIM, (me, now + 30, now)).fetchone()
        conn.execute("COMMIT")
        return None if row is None else int(row[0])

    def complete(job: int) -> int:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(RAW_DONE, (job, me))
        conn.execute("COMMIT")
        return job

    work(start, results, claim, complete)


def plain_worker(path: str, index: int, start: Any, results: Any) -> None:
    raw_worker(path, index, start, results, plain=True)


def raw_batch_worker(path: str, index: int, start: Any, results: Any) -> None:
    """The raw baseline claiming ten jobs per transaction and completing them in one."""
    conn, me = raw_conn(path), f"w{index}"

    def claim_many() -> list[int]:
        conn.execute("BEGIN IMMEDIATE")
        now = time.time()
        rows = conn.execute(RAW_CLAIM_MANY, (me, now + 30, now, BATCH)).fetchall()
        conn.execute("COMMIT")
        return [int(r[0]) for r in rows]

    def complete_many(jobs: list[int]) -> list[Hashable]:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "UPDATE jobs SET status = 2 WHERE id IN (SELECT value FROM json_each(?))"
            " AND lease_owner = ?",
            (json.dumps(jobs), me),
        )
        conn.execute("COMMIT")
        return list(jobs)

    work_batched(start, results, claim_many, complete_many)


# --- huey ---------------------------------------------------------------------------------


def huey_setup(path: str, jobs: int) -> None:
    from huey.storage import SqliteStorage

    storage = SqliteStorage("bench", filename=path)
    for i in range(jobs):
        storage.enqueue(str(i).encode())
    storage.close()


def huey_worker(path: str, index: int, start: Any, results: Any) -> None:
    from huey.storage import SqliteStorage

    storage = SqliteStorage("bench", filename=path)
    work(start, results, storage.dequeue, lambda data: int(data))


# --- litequeue ----------------------------------------------------------------------------


def litequeue_setup(path: str, jobs: int) -> None:
    from litequeue import LiteQueue

    q = LiteQueue(path)
    for i in range(jobs):
        q.put(str(i))
    q.close()


def litequeue_worker(path: str, index: int, start: Any, results: Any) -> None:
    from litequeue import LiteQueue

    q = LiteQueue(path, timeout=30)

    def complete(message: Any) -> int:
        q.done(message.message_id)
        return int(message.data)

    work(start, results, q.pop, complete)


# --- persist-queue ------------------------------------------------------------------------


def persistqueue_setup(path: str, jobs: int) -> None:
    from persistqueue import SQLiteAckQueue

    q = SQLiteAckQueue(path, multithreading=True)
    for i in range(jobs):
        q.put(i)


def persistqueue_worker(path: str, index: int, start: Any, results: Any) -> None:
    from persistqueue import Empty, SQLiteAckQueue

    # auto_resume=False: resuming would hand other workers' unacked items out again.
    q = SQLiteAckQueue(path, multithreading=True, auto_resume=False, timeout=30)

    def claim() -> Any:
        try:
            return q.get(block=False, raw=True)
        except Empty:
            return None

    def complete(item: Any) -> int:
        q.ack(id=item["pqid"])
        return int(item["data"])

    work(start, results, claim, complete)


# --- the systems that can run here --------------------------------------------------------

RAW = "raw sqlite3 lease"
RAW_BATCH = f"raw sqlite3 lease, batch({BATCH})"
RAW_EVENTS = "raw sqlite3 lease + event row"
PLAIN = "raw sqlite3, no lease expiry"
PEERS: dict[str, tuple[str, Setup, Worker]] = {
    "huey SqliteStorage (no lease)": ("huey", huey_setup, huey_worker),
    "litequeue (no lease expiry)": ("litequeue", litequeue_setup, litequeue_worker),
    "persist-queue SQLiteAckQueue": ("persistqueue", persistqueue_setup, persistqueue_worker),
}


def systems() -> tuple[Systems, list[str]]:
    """The raw baseline and every peer that imports, and a note for each that does not."""
    peers, notes = installed(PEERS)
    raws: Systems = {
        RAW: (raw_setup, raw_worker),
        RAW_BATCH: (raw_setup, raw_batch_worker),
        RAW_EVENTS: (events_setup, raw_worker),
        PLAIN: (plain_setup, plain_worker),
    }
    return {**raws, **peers}, notes
