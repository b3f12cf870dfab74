"""The connections of a one-shot process's PostgreSQL store: one plain connection, no pool.

A coding agent's hook is a process that makes a read or two and exits, on every prompt. A pool
would open a connection to check the URL, then its own, start worker threads, and cost its
import; the hook needs one connection, opened on first use. :class:`OneConnection` answers
the part of ``psycopg_pool.ConnectionPool`` the store uses (:class:`Connections`), so the
store's borrowing, its retry on a dead connection and its outage handling are the same.
Its writes wake listeners from that connection too (:class:`SameConnectionNotifier`), not
from a notifier's connection of its own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import psycopg
from psycopg.pq import TransactionStatus

from taskloom.store.pg_driver import plain_connect
from taskloom.store.pg_notify import CommitNotifier, notify_now

ONE_SHOT_CONNECT_TIMEOUT_S = 3
"""How long a one-shot process waits for the server to take its connection (unless the URL
sets ``connect_timeout``): a hook holds the user's prompt, so a server that does not answer
is reported in one line after this long, not after the store's usual ten seconds."""

Conn = psycopg.Connection[Any]


class Connections(Protocol):
    """What the store asks of its connection source: ``psycopg_pool.ConnectionPool``'s part."""

    @property
    def min_size(self) -> int: ...

    @property
    def max_size(self) -> int: ...

    def open(self, wait: bool = ..., timeout: float = ...) -> None: ...

    def connection(self, timeout: float | None = ...) -> contextlib.AbstractContextManager[Any]: ...

    def getconn(self, timeout: float | None = ...) -> Any: ...

    def putconn(self, conn: Any) -> None: ...

    def get_stats(self) -> dict[str, int]: ...

    def close(self, timeout: float = ...) -> None: ...


class OneConnection:
    """One plain connection, opened on first use (:meth:`open` opens it now) and kept until
    :meth:`close`; no thread. A borrower while it is out (a read that needs a fresh snapshot
    beside its own) gets a connection of its own, closed when given back. One given back
    broken, or that cannot be rolled back, is dropped: the next borrower connects again."""

    min_size = 1
    max_size = 1

    def __init__(
        self,
        conninfo: str,
        url: str,
        configure: Callable[[Conn, float | None], None],
        lock_wait_s: Callable[[], float | None] = lambda: None,
    ) -> None:
        """``url``: the URL as errors show it, its password masked; ``configure``: run on
        each new connection, as a pool runs it, with how long its statements wait for a
        lock: ``lock_wait_s()``, asked as it connects (the store's ``migrate_wait_s``; a
        hook's is short), ``None`` for the default."""
        self.conninfo = conninfo
        self._url = url
        self._configure = configure
        self._lock_wait_s = lock_wait_s
        self._conn: Conn | None = None
        self._out = False
        self._lock = threading.Lock()

    def _connect(self) -> Conn:
        conn = plain_connect(
            self.conninfo, self._url, timeout_s=ONE_SHOT_CONNECT_TIMEOUT_S, autocommit=True
        )
        try:
            self._configure(conn, self._lock_wait_s())
        except BaseException:
            conn.close()
            raise
        return conn

    def open(self, wait: bool = True, timeout: float = 0) -> None:
        """Connect now: a URL that cannot work fails here, with the server's reason."""
        self.putconn(self.getconn())

    def getconn(self, timeout: float | None = None) -> Conn:
        with self._lock:
            if self._out:
                return self._connect()
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
            self._out = True
            return self._conn

    def putconn(self, conn: Conn) -> None:
        with self._lock:
            if conn is not self._conn:
                conn.close()
                return
            self._out = False
            if not self._reset(conn):
                conn.close()
                self._conn = None

    @staticmethod
    def _reset(conn: Conn) -> bool:
        """Whether ``conn`` can be used again: idle, or rolled back to idle."""
        status = conn.info.transaction_status
        if conn.broken or status == TransactionStatus.UNKNOWN:
            return False
        if status != TransactionStatus.IDLE:
            try:
                conn.execute("ROLLBACK")
            except psycopg.Error:
                return False
        return True

    @contextlib.contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[Conn]:
        conn = self.getconn()
        try:
            yield conn
        finally:
            self.putconn(conn)

    def get_stats(self) -> dict[str, int]:
        with self._lock:
            size = int(self._conn is not None)
            return {"pool_size": size, "pool_available": int(not self._out)}

    def close(self, timeout: float = 0) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            self._conn, self._out = None, False


class Notifier(Protocol):
    """What the store asks of its notifier: :class:`~taskloom.store.pg_notify.CommitNotifier`
    or :class:`SameConnectionNotifier`."""

    def poke(self, conn: Conn | None = None) -> None: ...

    def close(self) -> None: ...


def new_notifier(one_shot: bool, conninfo: str, channel: str) -> Notifier:
    """The notifier of a store whose writes wake ``channel``'s listeners."""
    return SameConnectionNotifier(channel) if one_shot else CommitNotifier(conninfo, channel)


class SameConnectionNotifier:
    """A one-shot store's notifier: ``NOTIFY`` on the connection that committed, right after
    the commit, in one round trip (:func:`~taskloom.store.pg_notify.notify_now`). A pooled
    store's :class:`~taskloom.store.pg_notify.CommitNotifier` folds a burst of commits into
    one notification, sent by a thread from a connection of its own; a one-shot process
    makes a write or two, so it has no burst to fold, and neither the thread nor a second
    connection. A notification that fails is dropped, as there: listeners poll as well."""

    def __init__(self, channel: str) -> None:
        self._statement = notify_now(channel)

    def poke(self, conn: Conn | None = None) -> None:
        """``conn`` committed: notify now, on it."""
        if conn is None:
            return
        try:
            conn.execute(self._statement)
        except psycopg.Error:
            with contextlib.suppress(psycopg.Error):  # the store's give-back drops it if broken
                if conn.info.transaction_status == TransactionStatus.INERROR:
                    conn.execute("ROLLBACK")

    def close(self) -> None:
        """Nothing is pending: each notification was sent with its commit."""
