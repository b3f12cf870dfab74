"""The psycopg layer under :mod:`.postgres`: placeholders, error mapping and the
per-connection setup and clean-up every pooled connection gets."""

from __future__ import annotations

import contextlib
import functools
import re
import select
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from psycopg.types.string import TextLoader

from taskloom.domain.errors import InvalidInput, StoreBusy, StoreError
from taskloom.store.base import CANNOT_WRITE
from taskloom.store.pg_log import connected, pool_name
from taskloom.store.pg_url import KNOWN_SECRETS, one_line, scrub

CONNECT_TIMEOUT_S = 10
"""How long the first connection may take before a URL is reported as not answering (unless
the URL sets ``connect_timeout`` itself)."""
LOCK_TIMEOUT_MS = 10_000
"""How long a statement waits for a row or advisory lock before failing with StoreBusy."""

_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|\?|%", re.S)


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """``?`` placeholders → ``%s`` and literal ``%`` → ``%%``, leaving quoted text and comments'
    ``?`` untouched (psycopg still needs their ``%`` doubled)."""

    def swap(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            return "%s"
        return token.replace("%", "%%")

    return _TOKENS.sub(swap, sql)


_BUSY = (
    psycopg.errors.LockNotAvailable,
    psycopg.errors.QueryCanceled,
    psycopg.errors.DeadlockDetected,
    psycopg.errors.SerializationFailure,
    psycopg.errors.TooManyConnections,
)


@contextlib.contextmanager
def map_errors(url: str) -> Iterator[None]:
    """Translate ``psycopg``/pool exceptions into the package's own errors; a write that a
    read-only session refuses (a standby, ``default_transaction_read_only``) names ``url``."""
    try:
        yield
    except _BUSY as exc:
        raise StoreBusy(f"database is busy: {reason(exc)}") from exc
    except (
        psycopg.errors.DuplicatePreparedStatement,
        psycopg.errors.InvalidSqlStatementName,
    ) as exc:
        raise StoreError(f"database error: {reason(exc)}: {SHARED_SESSIONS}") from exc
    except psycopg.errors.ReadOnlySqlTransaction as exc:
        raise StoreError(f"{CANNOT_WRITE} {url}: {reason(exc)}") from exc
    except psycopg.Error as exc:  # the pool's errors too
        if pool_timeout(exc):
            raise StoreBusy(f"no free database connection: {exc}") from exc
        raise StoreError(f"database error: {reason(exc)}") from exc


SHARED_SESSIONS = (
    "the server session holds another client's prepared statements, or lost this one's: a"
    " connection pooler in transaction mode (PgBouncer before 1.21, or without"
    " max_prepared_statements) shares sessions between clients; add prepare_threshold=none"
    " to the URL"
)
"""Why psycopg's prepared statements clash behind a transaction pooler, and the way out."""
PREPARE_THRESHOLD = 5
"""psycopg's default: a statement is prepared on a connection the fifth time it runs."""


def prepare_threshold(ours: Mapping[str, str]) -> int | None:
    """The URL's ``prepare_threshold`` (taskloom's parameter, as psycopg names it): after how
    many runs a statement is prepared on a connection, ``none`` for never, which a pooler in
    transaction mode without prepared-statement support needs (:data:`SHARED_SESSIONS`)."""
    value = ours.get("prepare_threshold", str(PREPARE_THRESHOLD)).strip().lower()
    if value in ("none", "off"):
        return None
    if not value.isdigit():
        raise InvalidInput(
            f"prepare_threshold must be a whole number of runs, or none (got {value!r})"
        )
    return int(value)


class Configurer:
    """:func:`configure` for the connections of one store, which prepare a statement after
    ``threshold`` runs (``None``: never); each configured connection ends an outage the log
    told of for the store's pool, :attr:`name` (:func:`~.pg_log.connected`)."""

    def __init__(self, threshold: int | None) -> None:
        self.threshold = threshold
        self.name = pool_name()

    def __call__(self, conn: psycopg.Connection[Any], lock_wait_s: float | None = None) -> None:
        conn.prepare_threshold = self.threshold
        configure(conn, lock_wait_s)
        connected(conn, self.name)


def pool_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` is the pool's timeout. ``psycopg_pool`` is imported only by a store
    that has a pool (a one-shot process's has none, :mod:`.pg_single`): where it is not
    loaded, nothing raised it."""
    pool = sys.modules.get("psycopg_pool")
    return pool is not None and isinstance(exc, pool.PoolTimeout)


def reason(exc: BaseException) -> str:
    """What the server or libpq said, on one line and without any known password: its
    lines joined, the statement's echo (``LINE 1: …`` and its caret) left out, since an
    error is printed as one ``Error: …`` line and the statement is ours, not the user's."""
    return scrub(one_line(str(exc)), KNOWN_SECRETS)


def readable(fd: int) -> bool:
    """Whether ``fd`` has something to read now. ``poll``, where there is one: ``select``
    refuses descriptors past 1023, which a server with many streams open soon reaches."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


UNKNOWN_OUTCOME = (
    "the connection to PostgreSQL broke before the write's answer arrived, so whether it was"
    " applied is unknown (look with get or list; a lost claim or completion is settled when"
    " its lease ends)"
)


def commit(conn: psycopg.Connection[Any]) -> None:
    """``COMMIT``. A connection that breaks while it runs may have committed: saying the
    write failed would invite a retry that applies it twice (a second card), so the outcome
    is said to be unknown, as for the queue's one-statement writes."""
    try:
        conn.execute("COMMIT")
    except psycopg.OperationalError as exc:
        if conn.broken:
            raise StoreError(f"{UNKNOWN_OUTCOME}: {reason(exc)}") from exc
        raise


def release(conn: psycopg.Connection[Any], *, rollback: bool) -> None:
    """After a failure: roll back, and drop any session advisory lock a failed horizon
    statement may have left (session locks outlive transactions)."""
    if conn.broken:
        return
    with contextlib.suppress(psycopg.Error):
        if rollback:
            conn.execute("ROLLBACK")
        conn.execute("SELECT pg_advisory_unlock_all()")


def configure(conn: psycopg.Connection[Any], lock_wait_s: float | None = None) -> None:
    """Every pooled connection: JSON as text, dict rows, bounded lock waits (``lock_wait_s``,
    else :data:`LOCK_TIMEOUT_MS`), index order before sorting, no JIT.

    ``enable_sort = off``: before autovacuum has analysed a fast-growing queue, the planner
    guesses a handful of ready tasks and sorts every one of them for each claim instead of
    reading the first entry of the ordered ready index. With sorting priced out, a
    statement sorts only when no index gives its order, which among taskloom's statements
    is exactly when it must. Set per session rather than with ``SET LOCAL`` so a claim is
    one statement, not a four-message transaction. That pricing adds ten billion to the
    cost of any plan that still sorts, far past ``jit_above_cost``, and PostgreSQL would
    JIT-compile such a plan on every execution; taskloom's statements are short, so JIT
    is off."""
    for name in ("json", "jsonb"):
        conn.adapters.register_loader(name, TextLoader)
    conn.row_factory = dict_row
    conn.execute(
        "SELECT set_config('lock_timeout', %s, false), set_config('jit', 'off', false),"
        " set_config('enable_sort', 'off', false)",
        (f"{LOCK_TIMEOUT_MS if lock_wait_s is None else max(1, round(lock_wait_s * 1000))}ms",),
    )


def plain_connect(
    conninfo: str, url: str, *, timeout_s: int = CONNECT_TIMEOUT_S, **options: Any
) -> psycopg.Connection[Any]:
    """One plain connection (``options``: psycopg's, such as ``autocommit``): a URL that
    cannot work (no such database, wrong password, no server) fails at once with the
    server's reason, or after ``timeout_s`` unless the URL sets ``connect_timeout`` itself.
    ``url``: the URL as shown, its password masked."""
    try:
        if "connect_timeout" not in conninfo_to_dict(conninfo):
            conninfo = make_conninfo(conninfo, connect_timeout=timeout_s)
        return psycopg.connect(conninfo, **options)
    except psycopg.Error as exc:  # libpq quotes what it could not read: the password too
        raise StoreError(f"cannot connect to {url}: {reason(exc)}") from None


def check_connects(conninfo: str, url: str) -> None:
    """Connect once, plainly, and close (:func:`plain_connect`): a pool would retry in the
    background and report a timeout instead of the server's reason."""
    plain_connect(conninfo, url).close()
