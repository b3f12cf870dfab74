"""Wake PostgreSQL listeners after a process's commits, one NOTIFY per burst.

A ``NOTIFY`` inside the writing transaction would be exact, but PostgreSQL serialises the
commits of every notifying transaction in the cluster behind one lock, held across the
commit's WAL flush: four queue workers that notify on each claim commit one at a time instead
of sharing flushes (docs/postgres.md has the figures). So writers only ``poke()`` this
notifier after they commit; a background thread sends one notification for every burst of
pokes, from its own short transaction that does not wait for the flush (``synchronous_commit``
off: the data it announces is already durable). Listeners read ``id > cursor`` when woken and
poll anyway, so a notification may be spurious but a committed event is never missed for
longer than their poll interval, even if this process dies before it notifies.

The notifier has a connection of its own rather than one from the store's pool: borrowing
would grow a one-thread worker's pool to two connections, and the pool hands its connections
out in turn, so the worker's claims and completions would alternate between two server
processes, at a cost in CPU on every statement.

A listener (:func:`listen_loop`) holds one connection of its own that LISTENs on the schema's
channel, and connects again when it drops. Its first LISTEN is proven by a notification sent
from another connection: behind a pooler in transaction mode (PgBouncer) a LISTEN succeeds but
hears nothing, as the session that ran it goes back to the pool. Such a listener says so in
one warning and is not started (:func:`start_listener`), so its user polls as where nothing
can push, rather than waiting on a listener that never speaks.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql as pgsql
from psycopg.conninfo import conninfo_to_dict

log = logging.getLogger("taskloom.store")

CONNECT_TIMEOUT_S = 2
LISTEN_RETRY_S = 1.0
"""How long a listener waits before it connects again after losing its connection."""
PROBE_WAIT_S = 2.0
"""How long a new listener waits to hear its own probe notification."""
DEAF = (
    "live updates: LISTEN on %s hears no notifications (a connection pooler in transaction"
    " mode, such as PgBouncer's, does not keep the session a LISTEN needs): polling instead;"
    " give this process a direct or session-pooled connection for prompt updates"
)
MAX_CHANNEL_BYTES = 63
"""PostgreSQL's longest identifier (NAMEDATALEN - 1), in bytes: a longer channel is cut."""


def channel_name(schema: str) -> str:
    """The LISTEN channel of ``schema``'s events. A name past PostgreSQL's limit ends in a
    digest of the whole schema name: cut short, every schema whose name begins with the same
    47 bytes would share one channel, and each deployment wake the others."""
    name = f"taskloom_events:{schema}"
    if len(name.encode()) <= MAX_CHANNEL_BYTES:
        return name
    digest = hashlib.sha256(schema.encode()).hexdigest()[:12]
    head = name.encode()[: MAX_CHANNEL_BYTES - len(digest) - 1].decode("utf-8", "ignore")
    return f"{head}~{digest}"


"""How long the notifier waits to connect (unless the URL says): a notification is a hint,
and an exiting process waits for its last one (``close()`` at exit)."""
COALESCE_S = 0.05
"""After a notification, pokes within this long are folded into the next one. Listeners poll
about this often anyway; notifying more often costs queue workers throughput."""

NOTIFY_SQL = (
    "SELECT pg_notify(%s, (SELECT CASE WHEN is_called THEN last_value ELSE 0 END"
    " FROM events_id_seq)::text)"
)
"""The payload is a hint: the newest event id drawn when the notification was sent."""


def notify_now(channel: str) -> pgsql.Composed:
    """:data:`NOTIFY_SQL` for ``channel`` in a transaction of its own that does not wait
    for its commit's flush, as one message without parameters (sent in one round trip)."""
    notify = pgsql.SQL(NOTIFY_SQL.replace("%s", "{}")).format(pgsql.Literal(channel))
    return pgsql.SQL("BEGIN; SET LOCAL synchronous_commit = off; {}; COMMIT").format(notify)


_pending: weakref.WeakSet[CommitNotifier] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    """Send what a process's last commits owe before it exits: a CLI command or a script
    that never closes its store would otherwise leave with its notification unsent (the
    thread is a daemon), and listeners would only find the change at their next poll."""
    for notifier in list(_pending):
        notifier.close()


class CommitNotifier:
    """One per store: ``poke()`` after each commit, ``close()`` (which flushes) at the end."""

    def __init__(self, conninfo: str, channel: str) -> None:
        self._conninfo = conninfo
        self._channel = channel
        # An unreachable server must not hold a process's exit for long (see close()).
        self._connect_options: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in conninfo_to_dict(conninfo):
            self._connect_options["connect_timeout"] = CONNECT_TIMEOUT_S
        self._conn: psycopg.Connection[Any] | None = None  # only the thread uses it
        self._dirty = False  # a commit happened since the last notification was sent
        self._closing = False
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def poke(self, conn: object = None) -> None:
        """Something was committed (on ``conn``, which the notifier leaves alone: it sends
        from its own): notify soon. Cheap, and never waits on the database."""
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._closing:
                    self._thread = threading.Thread(
                        target=self._run, name="taskloom-notify", daemon=True
                    )
                    self._thread.start()
                    _pending.add(self)
        self._dirty = True
        self._wake.set()

    def close(self) -> None:
        """Send what is pending, then stop the thread and close its connection."""
        with self._lock:
            self._closing = True
            thread = self._thread
        if thread is not None:
            self._wake.set()
            thread.join(timeout=5)

    def _run(self) -> None:
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._dirty:
                    # Cleared before sending: a poke from here on gets a notification of its own.
                    self._dirty = False
                    self.notify()
                    time.sleep(COALESCE_S)
                if self._closing and not self._dirty:
                    return
        finally:
            if self._conn is not None:
                self._conn.close()

    def notify(self) -> None:
        """Send one notification now. A failure is dropped (listeners poll as well) and the
        connection is opened afresh for the next one."""
        try:
            if self._conn is None or self._conn.closed or self._conn.broken:
                if self._conn is not None:
                    self._conn.close()
                self._conn = psycopg.connect(self._conninfo, **self._connect_options)
                self._conn.execute("SET synchronous_commit = off")
            # Never prepared: a server session behind a transaction pooler is shared.
            self._conn.execute(NOTIFY_SQL, (self._channel,), prepare=False)
        except psycopg.Error:
            if self._conn is not None:
                self._conn.close()
            self._conn = None


def start_listener(
    conninfo: str,
    channel: str,
    on_event: Callable[[int], None],
    ready: Callable[[], None] | None,
    stop: threading.Event,
) -> threading.Thread | None:
    """A started :func:`listen_loop` thread, or ``None`` when its LISTEN hears nothing
    (:func:`hears`; said in one warning): its user then polls, as where nothing can push,
    at once rather than after waiting for a ``ready()`` that never comes. A server it cannot
    reach now leaves the finding to the thread, which connects when it can."""
    listen = pgsql.SQL("LISTEN {}").format(pgsql.Identifier(channel))
    conn = None
    try:
        conn = _listening(conninfo, listen)
        if not hears(conn, conninfo, channel, on_event):
            conn.close()
            log.warning(DEAF, channel)
            return None
    except psycopg.Error:
        if conn is not None:
            conn.close()
        conn = None
    thread = threading.Thread(
        target=listen_loop,
        args=(conninfo, channel, on_event, ready, stop, conn),
        name="taskloom-listen",
        daemon=True,
    )
    thread.start()
    return thread


def _listening(conninfo: str, listen: pgsql.Composed) -> psycopg.Connection[Any]:
    conn = psycopg.connect(conninfo, autocommit=True)
    try:
        conn.execute(listen)
    except BaseException:
        conn.close()
        raise
    return conn


def listen_loop(
    conninfo: str,
    channel: str,
    on_event: Callable[[int], None],
    ready: Callable[[], None] | None,
    stop: threading.Event,
    conn: psycopg.Connection[Any] | None = None,
) -> None:
    """LISTEN on ``channel`` until ``stop`` is set, calling ``on_event`` with each
    notification's event id (0 when it carries none, and after a reconnection: something
    may have been missed). ``ready()`` is called once the first LISTEN is in place and
    heard. ``conn``: a first connection that LISTENs already and was heard."""
    listen = pgsql.SQL("LISTEN {}").format(pgsql.Identifier(channel))
    missed = False
    while not stop.is_set():
        try:
            if conn is None:
                conn = _listening(conninfo, listen)
                if missed:
                    on_event(0)
                elif not hears(conn, conninfo, channel, on_event):
                    log.warning(DEAF, channel)
                elif ready is not None:
                    ready()
            elif ready is not None:
                ready()
            with conn:
                while not stop.is_set():
                    for note in conn.notifies(timeout=0.5):
                        on_event(int(note.payload) if note.payload.isdigit() else 0)
        except psycopg.Error:
            missed = True
            stop.wait(LISTEN_RETRY_S)
        finally:
            conn = None


def hears(
    conn: psycopg.Connection[Any], conninfo: str, channel: str, on_event: Callable[[int], None]
) -> bool:
    """Whether ``conn``, which LISTENs on ``channel``, hears a notification sent from another
    connection within :data:`PROBE_WAIT_S`. Other notifications heard meanwhile go to
    ``on_event``."""
    probe = f"probe-{uuid.uuid4().hex}"
    try:
        with psycopg.connect(conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as other:
            other.execute("SELECT pg_notify(%s, %s)", (channel, probe), prepare=False)
    except psycopg.Error:
        return False
    deadline = time.monotonic() + PROBE_WAIT_S
    while (left := deadline - time.monotonic()) > 0:
        for note in conn.notifies(timeout=left, stop_after=1):
            if note.payload == probe:
                return True
            on_event(int(note.payload) if note.payload.isdigit() else 0)
    return False
