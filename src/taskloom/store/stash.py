"""SQL for stashed results, the eviction log, the summarizer breaker and its cache.

Everything here takes an open :class:`~taskloom.store.base.Transaction` and uses portable SQL
with ``?`` placeholders, so SQLite and PostgreSQL behave the same. Every query is scoped by
``thread_id``: a result stashed in one thread does not exist for another.

Eviction takes the least recently stored first, and is logged, both to ``stash_log`` (so
``taskloom stash list`` can say why a handle is gone) and to the ``taskloom.guard`` logger.
Recency is read from ``expires_at``: storing or re-wrapping a result sets it to now + TTL, while
``created_at`` never moves, so ordering by it would evict a result the model just saw again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskloom.domain.common import iso, parse_iso
from taskloom.domain.text import counted
from taskloom.store.base import Row, Store, Transaction
from taskloom.store.retention import BATCH_PAUSE_S

log = logging.getLogger("taskloom.guard")

_COLUMNS = (
    "thread_id, result_id, tool_name, content, is_json, tokens, bytes, lines, encoding,"
    " placeholder, created_at, expires_at"
)
_LRU = " (least recently stored first)"
_META = "result_id, tool_name, is_json, tokens, bytes, lines, encoding, created_at, expires_at"


SUMMARY_CLAIM = timedelta(minutes=10)
"""How long a process's claim on summarizing one payload holds off the others; longer than
a summary call with its retries takes, so only a process that died leaves it to expire."""


@dataclass(frozen=True, slots=True)
class Limits:
    ttl: timedelta
    quota_bytes: int
    max_entries: int


def _log(tx: Transaction, thread: str, rid: str, action: str, detail: str, now: str) -> None:
    tx.execute(
        "INSERT INTO stash_log (thread_id, result_id, action, detail, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (thread, rid, action, detail, now),
    )
    log.info("stash %s %s/%s: %s", action, thread, rid, detail)


def purge_expired(
    tx: Transaction, thread: str | None, now: datetime, *, limit: int | None = None
) -> int:
    """Delete the results whose TTL has passed, of ``thread`` or (``None``) of every thread
    (at most ``limit`` of them, those that expired first): a stash purged only when its own
    thread stashes again would keep an ended thread's results, up to its quota, for ever."""
    stamp = iso(now)
    where, params = "expires_at <= ?", [stamp]
    if thread is not None:
        where, params = f"thread_id = ? AND {where}", [thread, stamp]
    order = "" if limit is None else " ORDER BY expires_at LIMIT ?"
    gone = tx.query(
        f"SELECT thread_id, result_id, expires_at FROM stash_results WHERE {where}{order}",
        params if limit is None else [*params, limit],
    )
    for row in gone:
        detail = f"TTL reached {row['expires_at']}"
        _log(tx, row["thread_id"], row["result_id"], "expired", detail, stamp)
    if limit is None:
        tx.execute(f"DELETE FROM stash_results WHERE {where}", params)
    elif gone:
        tx.execute_many(
            "DELETE FROM stash_results WHERE thread_id = ? AND result_id = ?",
            [(row["thread_id"], row["result_id"]) for row in gone],
        )
    _purge_summaries(tx, thread, now)
    return len(gone)


def _purge_summaries(tx: Transaction, thread: str | None, now: datetime) -> None:
    """Delete the summaries (and stale claims) of threads with no result left: a summary is
    made from stored content, and must not outlive its results. One younger
    than ``SUMMARY_CLAIM`` stays, as its result may not be stored yet."""
    where, params = "created_at <= ?", [iso(now - SUMMARY_CLAIM)]
    if thread is not None:
        where, params = f"thread_id = ? AND {where}", [thread, *params]
    tx.execute(
        f"DELETE FROM stash_summaries WHERE {where} AND NOT EXISTS (SELECT 1 FROM"
        " stash_results r WHERE r.thread_id = stash_summaries.thread_id)",
        params,
    )


PURGE_BATCH = 1_000
"""The most expired results one write of :func:`purge_stash` deletes (each up to the guard's
largest result): other writers wait for one batch at most."""


def purge_stash(store: Store, now: datetime, *, batch: int = PURGE_BATCH) -> int:
    """Delete every thread's results past their TTL, and the summaries of threads left with
    none, in writes of at most ``batch`` results each with a pause between them
    (:data:`~taskloom.store.retention.BATCH_PAUSE_S`) that lets other writers in; how many
    results went."""
    total = 0
    while True:
        with store.write() as tx:
            deleted = purge_expired(tx, None, now, limit=batch)
        total += deleted
        if deleted < batch:
            return total
        time.sleep(BATCH_PAUSE_S)


def count_expired(tx: Transaction, now: datetime) -> int:
    """How many results of all threads are past their TTL, waiting for :func:`purge_expired`."""
    row = tx.query_one("SELECT count(*) AS n FROM stash_results WHERE expires_at <= ?", (iso(now),))
    return int(row["n"]) if row else 0


def put(tx: Transaction, row: Row, now: datetime, limits: Limits) -> str:
    """Store a result (or refresh its TTL if the same one is there); return its placeholder.

    A placeholder never changes once written: re-stashing identical output returns the
    stored text. Then the least recently stored results are evicted until the thread is
    within quota.
    """
    thread, rid, stamp = row["thread_id"], row["result_id"], iso(now)
    tx.lock("stash", thread)  # PostgreSQL: one writer per thread, like SQLite's write lock
    purge_expired(tx, thread, now)
    expires = iso(now + limits.ttl)
    existing = tx.query_one(
        "SELECT placeholder FROM stash_results WHERE thread_id = ? AND result_id = ?",
        (thread, rid),
    )
    if existing is not None:
        tx.execute(
            "UPDATE stash_results SET expires_at = ? WHERE thread_id = ? AND result_id = ?",
            (expires, thread, rid),
        )
        return str(existing["placeholder"])
    values = {**row, "created_at": stamp, "expires_at": expires}
    names = [c.strip() for c in _COLUMNS.split(",")]
    tx.execute(
        f"INSERT INTO stash_results ({_COLUMNS}) VALUES ({', '.join('?' for _ in names)})",
        [values[n] for n in names],
    )
    stored = f"{row['tool_name']}: {counted(int(row['bytes']), 'byte')}"
    _log(tx, thread, rid, "stored", stored, stamp)
    _evict(tx, thread, rid, stamp, limits)
    return str(row["placeholder"])


def _evict(tx: Transaction, thread: str, keep: str, stamp: str, limits: Limits) -> None:
    """Evict the least recently stored results until the thread is within quota.

    A result larger than the whole byte quota is kept (the agent must not lose a tool
    result) but does not count against the quota, so it pushes out nothing; it goes first,
    whatever its recency, when the next result is stored. Counting it would empty the thread.
    """
    rows = tx.query(
        "SELECT result_id, bytes FROM stash_results WHERE thread_id = ?"
        " ORDER BY expires_at, created_at, result_id",
        (thread,),
    )
    oversized = {r["result_id"] for r in rows if int(r["bytes"]) > limits.quota_bytes}
    rows = sorted(rows, key=lambda r: r["result_id"] not in oversized)  # stable: by recency
    exempt = keep if keep in oversized else None
    total = sum(int(r["bytes"]) for r in rows if r["result_id"] != exempt)
    count = len(rows)
    for r in rows:
        if total <= limits.quota_bytes and count <= limits.max_entries:
            break
        if r["result_id"] == keep:
            continue
        if r["result_id"] in oversized:
            reason = (
                f"larger than the whole quota ({int(r['bytes']):,} bytes > {limits.quota_bytes:,})"
            )
            reason += ", kept only until the next result was stored"
        elif count > limits.max_entries:
            reason = f"quota: {count} results > {limits.max_entries}" + _LRU
        else:
            reason = f"quota: {total} bytes > {limits.quota_bytes}" + _LRU
        tx.execute(
            "DELETE FROM stash_results WHERE thread_id = ? AND result_id = ?",
            (thread, r["result_id"]),
        )
        _log(tx, thread, r["result_id"], "evicted", reason, stamp)
        total -= int(r["bytes"])
        count -= 1


def get(tx: Transaction, thread: str, rid: str, now: datetime) -> Row | None:
    return tx.query_one(
        f"SELECT {_COLUMNS} FROM stash_results"
        " WHERE thread_id = ? AND result_id = ? AND expires_at > ?",
        (thread, rid, iso(now)),
    )


def expired_at(tx: Transaction, thread: str, rid: str) -> str | None:
    """When a result that is still in the table (not yet purged) expired, if it did."""
    row = tx.query_one(
        "SELECT expires_at FROM stash_results WHERE thread_id = ? AND result_id = ?",
        (thread, rid),
    )
    return None if row is None else str(row["expires_at"])


def list_results(tx: Transaction, thread: str, now: datetime) -> list[Row]:
    return tx.query(
        f"SELECT {_META} FROM stash_results WHERE thread_id = ? AND expires_at > ?"
        " ORDER BY created_at, result_id",
        (thread, iso(now)),
    )


def history(tx: Transaction, thread: str, rid: str | None = None, limit: int = 50) -> list[Row]:
    """The newest stash log lines of a thread (or of one result), newest first."""
    params: tuple[str, ...]
    if rid is None:
        sql, params = "WHERE thread_id = ?", (thread,)
    else:
        sql, params = "WHERE thread_id = ? AND result_id = ?", (thread, rid)
    return tx.query(
        "SELECT result_id, action, detail, created_at FROM stash_log "
        + sql
        + " ORDER BY id DESC LIMIT ?",
        (*params, limit),
    )


def last_event(tx: Transaction, thread: str, rid: str) -> Row | None:
    rows = history(tx, thread, rid, limit=1)
    return rows[0] if rows else None


# --- per-turn placements -----------------------------------------------------------------------

PLACED = "placed"
"""The ``stash_log`` action recording a tool call's placement under a turn budget: its
``result_id`` column holds the call id, its ``detail`` the placement."""


def placements(tx: Transaction, thread: str, call_ids: list[str]) -> dict[str, str]:
    """The placement recorded for each of ``call_ids`` that has one (the first recorded)."""
    if not call_ids:
        return {}
    marks = ", ".join("?" for _ in call_ids)
    # Ordered here, not by the query: an ORDER BY id would have it read the thread's whole
    # log in id order instead of each call's lines (stash_log_result).
    rows = tx.query(
        "SELECT id, result_id, detail FROM stash_log WHERE thread_id = ? AND action = ?"
        f" AND result_id IN ({marks})",
        (thread, PLACED, *call_ids),
    )
    out: dict[str, str] = {}
    for row in sorted(rows, key=lambda r: int(r["id"])):
        out.setdefault(str(row["result_id"]), str(row["detail"]))
    return out


def place(tx: Transaction, thread: str, decided: dict[str, str], now: datetime) -> None:
    """Record the placement of each tool call not placed before (a placement never changes)."""
    tx.lock("stash", thread)
    known = placements(tx, thread, list(decided))
    for call_id, detail in decided.items():
        if call_id not in known:
            _log(tx, thread, call_id, PLACED, detail, iso(now))


# --- summarizer circuit breaker and cache -----------------------------------------------------


def breaker(tx: Transaction, thread: str) -> Row | None:
    return tx.query_one(
        "SELECT failures, opened_at, last_error FROM stash_breaker WHERE thread_id = ?", (thread,)
    )


def record_outcome(
    tx: Transaction, thread: str, now: datetime, *, error: str | None, trip_after: int
) -> dict[str, Any]:
    """Count a summarizer failure (opening the breaker at ``trip_after``) or reset on success."""
    stamp = iso(now)
    tx.lock("stash", thread)
    current = breaker(tx, thread)
    failures = 0 if error is None else int(current["failures"] if current else 0) + 1
    opened = stamp if error is not None and failures >= trip_after else None
    if current is None:
        tx.execute(
            "INSERT INTO stash_breaker (thread_id, failures, opened_at, last_error, updated_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (thread, failures, opened, error, stamp),
        )
    else:
        tx.execute(
            "UPDATE stash_breaker SET failures = ?, opened_at = ?, last_error = ?,"
            " updated_at = ? WHERE thread_id = ?",
            (failures, opened, error, stamp, thread),
        )
    return {"failures": failures, "opened_at": opened, "last_error": error}


def cached_summary(tx: Transaction, key: str) -> str | None:
    """The finished summary under ``key``; a claim (an empty summary) is not one."""
    row = tx.query_one("SELECT summary FROM stash_summaries WHERE cache_key = ?", (key,))
    return str(row["summary"]) if row is not None and row["summary"] else None


def summary_claimed(tx: Transaction, key: str) -> bool:
    """Whether a claim (an unfinished summary) is held under ``key``."""
    row = tx.query_one("SELECT summary FROM stash_summaries WHERE cache_key = ?", (key,))
    return row is not None and not row["summary"]


def claim_summary(tx: Transaction, key: str, thread: str, now: datetime) -> tuple[bool, str | None]:
    """``(claimed, summary)``: the finished summary if there is one; else whether this caller
    now holds the claim to make it. A claim is a row with an empty summary, taken over once
    older than ``SUMMARY_CLAIM``, so two processes wrapping the same payload do not both call
    the LLM."""
    tx.lock("summary", key)
    row = tx.query_one(
        "SELECT summary, created_at FROM stash_summaries WHERE cache_key = ?", (key,)
    )
    if row is not None and row["summary"]:
        return False, str(row["summary"])
    if row is not None and parse_iso(str(row["created_at"])) + SUMMARY_CLAIM > now:
        return False, None
    if row is not None:
        tx.execute(
            "UPDATE stash_summaries SET thread_id = ?, created_at = ? WHERE cache_key = ?",
            (thread, iso(now), key),
        )
    else:
        tx.execute(
            "INSERT INTO stash_summaries (cache_key, thread_id, summary, created_at)"
            " VALUES (?, ?, '', ?)",
            (key, thread, iso(now)),
        )
    return True, None


def settle_summary(tx: Transaction, key: str, summary: str | None, now: datetime) -> None:
    """End a claim: store ``summary``, or (``None``, the call failed) give the claim up."""
    if summary is None:
        tx.execute("DELETE FROM stash_summaries WHERE cache_key = ? AND summary = ''", (key,))
        return
    tx.execute(
        "UPDATE stash_summaries SET summary = ?, created_at = ? WHERE cache_key = ?",
        (summary, iso(now), key),
    )
