"""PostgreSQL for scale-out: many processes on many machines sharing one database.

- Connections come from a ``psycopg_pool.ConnectionPool``; each transaction borrows one, so a
  store is safe to share between threads. A one-shot process's store (a hook's) has one plain
  connection instead (:mod:`.pg_single`).
- Writes are READ COMMITTED transactions made safe by locks rather than retries: the first
  time a write transaction touches a document it locks the row (``SELECT … FOR UPDATE``), or,
  when the row does not exist yet, a transaction-level advisory lock on ``(kind, key)``. Two
  writers of one board therefore queue behind each other exactly as they do on SQLite, and
  neither loses the other's update.
- The outbox never lets a reader skip an event. Ids come from a sequence, so a transaction
  can draw id 41, another draw 42 and commit first; a reader that delivered 42 and moved its
  cursor past it would never deliver 41. So each appender holds a *shared* advisory lock (one
  per schema) from before it draws its id until it ends, which costs appenders nothing among
  themselves, and ``events_after`` first takes that lock *exclusively* for an instant: that
  waits out the appenders in flight, and the sequence value read under it is a horizon below
  which every id is settled. Only events up to the horizon are returned, and the snapshot
  that reads them is taken after it (``BEGIN`` is sent lazily for that reason).
- After each write commits, the store's notifier ``NOTIFY``-s the schema's channel: once per
  burst of commits from a thread (:mod:`.pg_notify`; a ``NOTIFY`` inside each write would
  serialise every writer's commit), or a one-shot store's, on the connection that committed
  (:mod:`.pg_single`); :meth:`listen` turns them into wake-ups for every server process.
- Queries use ``?`` placeholders like SQLite; they are translated to psycopg's ``%s`` once per
  distinct statement. Literal ``?`` inside quotes or comments is left alone; PostgreSQL's JSON
  ``?`` operators cannot be used (call ``jsonb_exists()`` instead).
- ``json``/``jsonb`` values come back as text, as they do from SQLite, so callers decode JSON
  the same way on both backends.
- Migrations run on first use under an advisory lock, each in the same transaction as its
  ``schema_migrations`` row (:mod:`.pg_migrate`). The schema is whatever ``search_path``
  names first, so several deployments (or test runs) can share one database in different
  schemas.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row

from taskloom.domain.errors import InvalidInput, StoreBusy, StoreError
from taskloom.domain.events import Event
from taskloom.domain.text import counted
from taskloom.store.base import (
    LIST_DOCS_SQL,
    SAVE_DOC_SQL,
    Document,
    Row,
    Store,
    Transaction,
    decode,
    encode,
    events_from_rows,
    events_query,
)
from taskloom.store.pg_driver import (
    UNKNOWN_OUTCOME,
    Configurer,
    check_connects,
    commit,
    map_errors,
    pool_timeout,
    prepare_threshold,
    readable,
    reason,
    release,
    translate,
)
from taskloom.store.pg_horizon import Horizon
from taskloom.store.pg_migrate import has_ledger, migrate, resolve_schema
from taskloom.store.pg_notify import channel_name, start_listener
from taskloom.store.pg_single import Connections, Notifier, OneConnection, new_notifier
from taskloom.store.pg_tasks import PgTaskTable
from taskloom.store.pg_url import redact, remember_secrets, split_url, url_secrets
from taskloom.store.retention import AutoRetention

POOL_MIN = 1
POOL_MAX = 10
POOL_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 5
"""How long a connection of the store's own may take to open around an outage."""

# Advisory lock classes (first int of the two-int form); the second int is the schema's hash.
# The migrations' lock is pg_migrate.MIGRATE_LOCK.
OUTBOX_LOCK = 0x746C0002

T = TypeVar("T")


class PgTransaction(Transaction):
    """One transaction on one pooled connection. ``BEGIN`` is sent lazily, just before the
    first statement, so ``events_after`` can fix its horizon *before* the snapshot exists."""

    dialect = "postgres"

    def __init__(
        self, conn: psycopg.Connection[Row], store: PostgresStore, begin: str, writable: bool
    ) -> None:
        self.conn = conn
        self.store = store
        self.writable = writable
        self.begun = False
        self._begin = begin
        self._locked: set[tuple[str, str]] = set()

    def _first(self, sql: str | bytes, params: Sequence[Any] | None = None) -> Any:
        """Run the first statement on this connection (replaced if it turns out dead)."""
        self.conn, cur = first_statement(
            self.store, self.conn, lambda conn: conn.execute(sql, params)
        )
        return cur

    def _begun(self) -> psycopg.Connection[Row]:
        """The connection, its transaction begun."""
        if not self.begun:
            self._first(self._begin)
            self.begun = True
        return self.conn

    def _run(self, sql: str | bytes, params: Sequence[Any] | None = None) -> Any:
        return self._begun().execute(sql, params)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        if not params:
            return int(self._run(sql).rowcount)
        return int(self._run(translate(sql), params).rowcount)

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._begun().cursor() as cur:
            cur.executemany(translate(sql), rows)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        if not params:
            return list(self._run(sql).fetchall())
        return list(self._run(translate(sql), params).fetchall())

    def lock(self, *key: str) -> None:
        if self.writable:
            self._run(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                ("/".join((self.store.schema, *key)),),
            )

    def _lock_doc(self, kind: str, key: str) -> int | None:
        """Lock one document for the rest of this write transaction; return its version.

        An existing row is locked with ``FOR UPDATE`` (which also waits for, and then sees, a
        concurrent writer's commit). A missing row cannot be locked, so creators serialise on
        an advisory lock for ``(kind, key)`` and look again: either it is still missing (we
        create it) or someone created it meanwhile (we lock their row).
        """
        select = "SELECT version FROM documents WHERE kind = %s AND key = %s FOR UPDATE"
        row = self._run(select, (kind, key)).fetchone()
        if row is None:
            self.lock("doc", kind, key)
            row = self._run(select, (kind, key)).fetchone()
        self._locked.add((kind, key))
        return None if row is None else int(row["version"])

    def load_doc(self, kind: str, key: str) -> Document | None:
        if self.writable and (kind, key) not in self._locked:
            self._lock_doc(kind, key)
        row = self._run(
            "SELECT version, state, updated_at FROM documents WHERE kind = %s AND key = %s",
            (kind, key),
        ).fetchone()
        if row is None:
            return None
        return Document(kind, key, row["version"], decode(row["state"]), row["updated_at"])

    def doc_version(self, kind: str, key: str) -> int | None:
        if self.writable and (kind, key) not in self._locked:
            return self._lock_doc(kind, key)
        row = self._run(
            "SELECT version FROM documents WHERE kind = %s AND key = %s", (kind, key)
        ).fetchone()
        return None if row is None else int(row["version"])

    def save_doc(
        self,
        kind: str,
        key: str,
        version: int,
        state: dict[str, Any],
        now: str,
        *,
        encoded: str | None = None,
    ) -> None:
        self.execute(SAVE_DOC_SQL, (kind, key, version, encoded or encode(state), now))

    def list_docs(self, kind: str) -> list[Document]:
        rows = self.query(LIST_DOCS_SQL, (kind,))
        return [
            Document(kind, r["key"], r["version"], decode(r["state"]), r["updated_at"])
            for r in rows
        ]

    def append_event(self, event: Event, *, encoded: str | None = None) -> int:
        # The MATERIALIZED CTE takes the outbox lock (shared: appenders never wait for each
        # other) before the INSERT draws the id. Listeners are notified after the commit.
        row = self._run(
            "WITH outbox AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(%s, %s))"
            " INSERT INTO events (type, thread_id, data, created_at)"
            " SELECT %s, %s, %s, %s FROM outbox RETURNING id",
            (
                OUTBOX_LOCK,
                self.store.schema_hash,
                event.type,
                event.thread_id,
                encoded or encode(event.data),
                event.created_at,
            ),
        ).fetchone()
        assert row is not None
        return int(row["id"])

    def _horizon(self, run: Callable[[str, Sequence[Any]], Any], after_id: int) -> int | None:
        """The largest event id up to which every id is settled (committed or rolled back), or
        ``None`` when nothing past ``after_id`` can be read yet (:mod:`.pg_horizon`)."""
        return self.store.horizon.after(run, (OUTBOX_LOCK, self.store.schema_hash), after_id)

    def events_after(
        self, after_id: int, *, thread_id: str | None = None, limit: int = 500
    ) -> list[Event]:
        sql, params = events_query(after_id, thread_id, limit, upto=True)
        sql = translate(sql)
        before = params[:-1]
        if self.begun and not self.writable:
            # A repeatable-read snapshot already exists and may predate the horizon.
            def fetch(run: Callable[..., Any]) -> list[Row]:
                horizon = self._horizon(run, after_id)
                return [] if horizon is None else run(sql, (*before, horizon, limit)).fetchall()

            rows = self._on_fresh_connection(fetch)
        else:
            horizon = self._horizon(self._run if self.begun else self._first, after_id)
            rows = [] if horizon is None else self._run(sql, (*before, horizon, limit)).fetchall()
        return events_from_rows([tuple(r.values()) for r in rows])

    def event_head(self) -> int:
        if self.begun and not self.writable:
            # Its snapshot exists: the head now may be past it, and a reader resuming from
            # there would skip what the snapshot missed.
            raise InvalidInput(
                "event_head must come first in a read on PostgreSQL: call it before reading"
                " anything else, so it matches the read's snapshot"
            )
        return self._horizon(self._run if self.begun else self._first, -1) or 0

    def _on_fresh_connection(self, read: Callable[[Callable[..., Any]], T]) -> T:
        """``read(execute)`` on a connection of its own, whose statements each see the latest
        commits: for a read whose repeatable-read snapshot already exists and may predate
        them."""
        other = self.store.borrow()
        try:
            return read(other.execute)
        except BaseException:
            release(other, rollback=False)
            raise
        finally:
            self.store.give_back(other)


def first_statement(
    store: PostgresStore,
    conn: psycopg.Connection[Row],
    run: Callable[[psycopg.Connection[Row]], T],
) -> tuple[psycopg.Connection[Row], T]:
    """``run(conn)`` as the first thing on a borrowed connection, on a fresh one if it turns
    out dead; returns the connection used and the result.

    A pooled connection can be dead (server restart, failover, idle timeout) without the
    pool knowing; nothing has run on it yet, so retrying on a fresh one is safe. The pool
    discards the dead one when it is handed back, and the store takes it as a sign of an
    outage (see :meth:`PostgresStore.borrow`).
    """
    for attempt in range(POOL_MAX + 1):
        try:
            return conn, run(conn)
        except psycopg.OperationalError:
            if not conn.broken or attempt == POOL_MAX:
                raise
            store.degraded = True
            store.give_back(conn)
            conn = store.borrow()
    raise AssertionError("unreachable")


class PostgresStore(Store):
    """A store on one PostgreSQL schema (the first of the URL's ``search_path``).

    ``url`` is a libpq URL; ``pool_min``/``pool_max`` query parameters size the pool
    (defaults 1 and 10 per process), ``prepare_threshold`` says when a statement is prepared
    (:func:`~.pg_driver.prepare_threshold`). Nothing is connected until the first transaction.
    """

    dialect = "postgres"

    def __init__(self, url: str, *, copy_source: bool = False, one_shot: bool = False) -> None:
        """``copy_source``: the store is only read, as the source of ``migrate-db``, so a
        schema an earlier development build made is read as it is (see
        :func:`migrations.pending`). ``one_shot``: for a process that makes a call or two
        and exits (a hook): one plain connection, no pool (:mod:`.pg_single`)."""
        self.copy_source = copy_source
        self.one_shot = one_shot
        try:
            self.url = redact(url)
            conninfo, ours = split_url(url)
        except ValueError as exc:
            raise InvalidInput(f"not a valid PostgreSQL URL: {exc}") from None
        try:
            min_size = int(ours.get("pool_min", POOL_MIN))
            max_size = int(ours.get("pool_max", POOL_MAX))
        except ValueError:
            raise InvalidInput("pool_min and pool_max must be integers") from None
        if min_size < 0 or max_size < 1 or max_size < min_size:
            raise InvalidInput(
                f"pool_min must be 0 or more and pool_max 1 or more, at least pool_min"
                f" (got pool_min={min_size}, pool_max={max_size})"
            )
        self.conninfo = conninfo
        self.configure = Configurer(prepare_threshold(ours))
        remember_secrets(url_secrets(url))
        self._sizes = (min_size, max_size)
        self.pool = self._new_pool()
        self._lock = threading.Lock()
        self._ready = False
        self.degraded = False
        self._own: weakref.WeakSet[psycopg.Connection[Row]] = weakref.WeakSet()
        self.schema = ""
        self.schema_hash = 0
        self.channel = ""
        self.notifier: Notifier | None = None
        self.horizon = Horizon()
        self.tasks = PgTaskTable(self, self.autocommit)
        self.retention = AutoRetention(self)

    def _new_pool(self) -> Connections:
        """An unopened pool: a closed one cannot be opened again, so a store whose pool
        failed to open, or that was closed, starts over with a new one on its next call.
        (``psycopg_pool`` is imported here: a one-shot process never loads it.)"""
        if self.one_shot:
            return OneConnection(
                self.conninfo, self.url, self.configure, lambda: self.migrate_wait_s
            )
        import psycopg_pool

        return psycopg_pool.ConnectionPool(
            self.conninfo,
            min_size=self._sizes[0],
            max_size=self._sizes[1],
            kwargs={"autocommit": True},
            configure=self.configure,
            timeout=POOL_TIMEOUT_S,
            open=False,
            name=self.configure.name,
        )

    def _ensure_ready(self) -> None:
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            self._connect()
            with self.pool.connection() as conn:
                migrate(
                    conn,
                    self.schema_hash,
                    self.url,
                    copy_source=self.copy_source,
                    wait_s=self.migrate_wait_s,
                )
            self._ready = True

    def _connect(self) -> None:
        """Open the pool and find the schema, once (under ``_lock``)."""
        if self.notifier is not None:
            return
        if not self.one_shot:  # one-shot: its one connection is that check
            check_connects(self.conninfo, self.url)
        # Wait for the first connection: a request made meanwhile makes the pool open a
        # second, and a one-thread worker would alternate between two server processes.
        try:
            self.pool.open(wait=True, timeout=POOL_TIMEOUT_S)
        except psycopg.OperationalError as exc:
            if not pool_timeout(exc):
                raise
            self.pool.close()
            self.pool = self._new_pool()
            raise StoreError(
                f"could not open the pool's {counted(self.pool.min_size, 'connection')} within"
                f" {POOL_TIMEOUT_S:.0f} s: lower pool_min, or raise the server's"
                " max_connections"
            ) from None
        with self.pool.connection() as conn:
            self.schema, self.schema_hash = resolve_schema(conn)
        self.channel = channel_name(self.schema)
        self.notifier = new_notifier(self.one_shot, self.conninfo, self.channel)

    def exists(self) -> bool:
        """Whether the schema holds taskloom's tables: a command that only looks at an empty
        database (a mistyped name, libpq's default) does not make them there."""
        if self._ready:
            return True
        with map_errors(self.url):
            with self._lock:
                self._connect()
            with self.pool.connection() as conn:
                return has_ledger(conn)

    @contextlib.contextmanager
    def _transaction(self, begin: str, writable: bool, side: bool = False) -> Iterator[Transaction]:
        with map_errors(self.url):
            if not writable and not self.exists():
                with self._empty_read() as empty:
                    yield empty
                return
            self._ensure_ready()
            tx = PgTransaction(self.borrow(), self, begin, writable)
            try:
                yield tx
            except BaseException:
                release(tx.conn, rollback=tx.begun)
                raise
            else:
                if tx.begun:
                    commit(tx.conn)
                    if writable and not side:
                        self._committed(tx.conn)
            finally:
                self.give_back(tx.conn)
        if writable and tx.begun and not side:  # its connection given back: retention borrows one
            self.retention.committed()

    def check_creatable(self) -> None:
        """Before the first write: make the tables in a transaction rolled back, so a session
        that may not (a role without rights, a standby) is refused now, in one line."""
        if not self.exists():
            with map_errors(self.url), self._empty_read():
                pass

    @contextlib.contextmanager
    def _empty_read(self) -> Iterator[Transaction]:
        """A read of a schema without taskloom's tables: they are made in a transaction
        rolled back, so the read finds them empty and nothing stays (SQLite makes no file)."""
        with self.pool.connection() as conn, conn.transaction(force_rollback=True):
            migrate(conn, self.schema_hash, self.url, copy_source=self.copy_source)
            tx = PgTransaction(conn, self, "", writable=True)  # inside the transaction above
            tx.begun = True
            yield tx

    def _committed(self, conn: psycopg.Connection[Row]) -> None:
        if self.notifier is not None:
            self.notifier.poke(conn)

    def write(self) -> contextlib.AbstractContextManager[Transaction]:
        return self._transaction("BEGIN", writable=True)

    def side_write(self, wait_s: float) -> contextlib.AbstractContextManager[Transaction]:
        ms = max(1, round(wait_s * 1000))  # 0 would be no limit
        return self._transaction(f"BEGIN; SET LOCAL lock_timeout = '{ms}ms'", True, side=True)

    def read(self) -> contextlib.AbstractContextManager[Transaction]:
        return self._transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", writable=False)

    def autocommit(self, statement: str, params: Sequence[Any]) -> list[Row]:
        """Run one statement as a transaction of its own, in one round trip (on an
        autocommit connection); its rows. Listeners are woken when it changed something
        (it returned rows): an empty claim wakes no one."""
        query = translate(statement) if params else statement
        with map_errors(self.url):
            self._ensure_ready()
            conn = self.borrow()
            try:
                conn = self._alive(conn)
                try:
                    rows: list[Row] = conn.execute(query, params).fetchall()
                except psycopg.OperationalError as exc:
                    if conn.broken:  # it may have committed: running it again could claim twice
                        raise StoreError(f"{UNKNOWN_OUTCOME}: {reason(exc)}") from exc
                    raise
                if rows:
                    self._committed(conn)
            except BaseException:
                release(conn, rollback=True)
                raise
            finally:
                self.give_back(conn)
        if rows:
            self.retention.committed()
        return rows

    def _alive(self, conn: psycopg.Connection[Row]) -> psycopg.Connection[Row]:
        """``conn``, or a fresh connection if the server has closed it while it sat in the
        pool. A lone statement is its own transaction: once sent it may commit, so it is
        never sent twice (see :data:`UNKNOWN_OUTCOME`), and a dead connection must be found
        before. An idle connection has nothing to read; one that has (the server's farewell,
        or its end of stream) is probed with a statement that is safe to repeat."""
        if readable(conn.fileno()):
            conn, _ = first_statement(self, conn, lambda c: c.execute("SELECT 1"))
        return conn

    def borrow(self) -> psycopg.Connection[Row]:
        """A connection for one transaction: the pool's, or around an outage one of its own.

        Once a connection turned out dead or the pool timed out (``degraded``), a call that
        finds no idle pooled connection goes to the server directly instead of waiting for
        the pool: while the server is down it fails at once with the server's own reason,
        not after half a minute with the pool's; once it is back the call runs on a
        connection of its own while the pool waits out its reconnect backoff (tens of
        seconds after a long outage). The first pooled connection handed out again ends
        it. Outside an outage, a pool whose every connection is busy waits and is a
        :class:`StoreBusy`.
        """
        if self.degraded and not self.pool.get_stats().get("pool_available"):
            return self._own_connection()
        try:
            conn: psycopg.Connection[Row] = self.pool.getconn()
        except psycopg.OperationalError as exc:
            if not pool_timeout(exc) or self.pool.get_stats().get("pool_size", 0) >= (
                self.pool.max_size
            ):
                raise
            self.degraded = True
            return self._own_connection()
        self.degraded = False
        return conn

    def _own_connection(self) -> psycopg.Connection[Row]:
        try:
            own = psycopg.connect(
                self.conninfo,
                autocommit=True,
                row_factory=dict_row,
                connect_timeout=PROBE_TIMEOUT_S,
            )
        except psycopg.Error as exc:
            raise StoreBusy(f"database unreachable: {reason(exc)}") from exc
        self.configure(own)
        self._own.add(own)
        return own

    def give_back(self, conn: psycopg.Connection[Row]) -> None:
        """Return a borrowed connection. One that broke, wherever it broke (before a
        statement, during one, at its commit), marks an outage (``degraded``, see
        :meth:`borrow`): the calls after it then fail at once with the server's reason
        instead of each waiting out the pool's timeout."""
        if conn.broken:
            self.degraded = True
        if conn in self._own:
            self._own.discard(conn)
            conn.close()
            return
        try:
            self.pool.putconn(conn)
        except ValueError:  # from the pool ``close()`` replaced while it was out
            conn.close()

    def listen(
        self, on_event: Callable[[int], None], *, ready: Callable[[], None] | None = None
    ) -> Callable[[], None] | None:
        """Call ``on_event(event_id)`` (from a background thread) after events commit.

        One dedicated connection LISTENs on this schema's channel, so every process (every
        ``taskloom serve`` behind a load balancer) hears every other process's writes. Writers
        notify once per burst of commits, so one call can stand for many events: ``event_id``
        is the newest id drawn when the notification was sent, a hint to read up to. If the
        connection drops it reconnects and calls ``on_event(0)``: "something may have been
        missed, re-read from your cursor". ``ready()`` is called once the first LISTEN is in
        place. Returns a function that stops the listener, or ``None`` where a LISTEN hears
        nothing (a pooler in transaction mode, see :func:`.pg_notify.start_listener`).
        """
        self._ensure_ready()
        stop = threading.Event()
        thread = start_listener(self.conninfo, self.channel, on_event, ready, stop)
        if thread is None:
            return None

        def cancel() -> None:
            stop.set()
            thread.join(timeout=5)

        return cancel

    def close(self) -> None:
        with self._lock:
            if self.notifier is not None:
                self.notifier.close()
                self.notifier = None
            self.pool.close()
            self.pool = self._new_pool()
            self._ready = False
