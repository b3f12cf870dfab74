"""The store seam: what every backend (SQLite, PostgreSQL) must provide.

A store hands out transactions. Inside a write transaction the caller loads a document (a
board, a goal), applies a pure domain function, saves the result with ``version + 1`` and
appends an event to the outbox; all of it commits or none of it does. Backends translate their
driver errors into :class:`~taskloom.domain.errors.StoreError` so nothing above sees them.

Documents are JSON state keyed by ``(kind, key)``; the key of a board or a goal is its thread id.
Feature-specific tables (queue, stash, cursors) hang off the same transaction object through
``execute``/``query`` with ``?`` placeholders, which each backend adapts to its own driver.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from taskloom.domain.events import TASK_STATE, Event
from taskloom.domain.queue import FIXED_FIELDS, task_event_data

Row = dict[str, Any]
Values = Sequence[Any]
"""A row's values in the statement's column order."""


def encode(value: Any) -> str:
    """Compact JSON, the one encoding of documents and event payloads in every backend.

    orjson is several times faster than the standard library on large boards, and encoding
    a board snapshot is on the hot path of every board operation.
    """
    return orjson.dumps(value).decode()


def decode(text: str | bytes) -> Any:
    return orjson.loads(text)


@dataclass(frozen=True, slots=True)
class Document:
    kind: str
    key: str
    version: int
    state: dict[str, Any]
    updated_at: str


SAVE_DOC_SQL = (
    "INSERT INTO documents (kind, key, version, state, updated_at) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (kind, key) DO UPDATE SET version = excluded.version,"
    " state = excluded.state, updated_at = excluded.updated_at"
)
"""Insert-or-overwrite of one document, in the SQL both backends speak (``?`` placeholders)."""
LIST_DOCS_SQL = "SELECT key, version, state, updated_at FROM documents WHERE kind = ? ORDER BY key"


def events_query(after_id: int, thread_id: str | None, limit: int) -> tuple[str, tuple[Any, ...]]:
    """The ``events_after`` query (``?`` placeholders) and its parameters, for every backend."""
    sql = "SELECT id, type, thread_id, data, created_at FROM events WHERE id > ?"
    params: tuple[Any, ...] = (after_id,)
    if thread_id is not None:
        sql += " AND thread_id = ?"
        params = (after_id, thread_id)
    return sql + " ORDER BY id LIMIT ?", (*params, limit)


FIXED_SQL = f"SELECT id, {', '.join(FIXED_FIELDS)} FROM tasks WHERE id IN ({{marks}})"
"""The fixed fields of the tasks a batch of compact change events names (``{marks}``: one
``?`` per id)."""
EventRow = tuple[int, str, "str | None", "str | bytes | Any", str]
"""``(id, type, thread_id, data, created_at)`` as ``events_query`` selects them."""


def events_from_rows(
    rows: Sequence[EventRow], query: Callable[[str, Sequence[Any]], list[Row]]
) -> list[Event]:
    """``events`` rows as :class:`Event` objects, in every backend the same way.

    A queue task's change is stored compactly (see
    :func:`~taskloom.domain.queue.task_event_data`); ``query`` (the reading transaction's)
    fetches the fixed fields of the tasks those events name, one statement per batch.
    """
    decoded = [
        (r[0], r[1], r[2], decode(r[3]) if isinstance(r[3], str | bytes) else r[3], r[4])
        for r in rows
    ]
    ids = sorted({d[3][0] for d in decoded if d[1] == TASK_STATE and isinstance(d[3], list)})
    fixed: dict[str, Row] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        sql = FIXED_SQL.format(marks=", ".join("?" * len(chunk)))
        fixed.update((str(r["id"]), r) for r in query(sql, chunk))
    return [
        Event(
            type_,
            thread_id,
            task_event_data(data, fixed.get(data[0]) if isinstance(data, list) else None)
            if type_ == TASK_STATE
            else data,
            id=event_id,
            created_at=created_at,
        )
        for event_id, type_, thread_id, data, created_at in decoded
    ]


class Transaction(abc.ABC):
    """One open transaction. Use only inside ``with store.write()`` / ``store.read()``."""

    dialect: str

    @abc.abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; return the number of rows it changed."""

    @abc.abstractmethod
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run a query; return rows as dicts."""

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def lock(self, *key: str) -> None:
        """Serialise write transactions on ``key`` (e.g. ``("stash", thread_id)``) until commit.

        Use it before a read-then-write on rows that may not exist yet. SQLite write
        transactions are already serialised, so this is a no-op there; PostgreSQL takes a
        transaction-level advisory lock.
        """
        return None

    @abc.abstractmethod
    def load_doc(self, kind: str, key: str) -> Document | None:
        """The current document, or ``None`` if it was never saved."""

    @abc.abstractmethod
    def doc_version(self, kind: str, key: str) -> int | None:
        """The current version of a document (cheap: lets callers reuse a parsed copy)."""

    @abc.abstractmethod
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
        """Insert or overwrite a document. ``version`` is the new version (previous + 1).

        ``encoded`` is ``state`` already JSON-encoded, when the caller has it (see ``encode``).
        """

    @abc.abstractmethod
    def list_docs(self, kind: str) -> list[Document]:
        """Every document of one kind."""

    @abc.abstractmethod
    def append_event(self, event: Event, *, encoded: str | None = None) -> int:
        """Add an event to the outbox in this transaction; return its id.

        ``encoded`` is ``event.data`` already JSON-encoded, when the caller has it.
        """

    def save_with_event(
        self, kind: str, key: str, version: int, snapshot: dict[str, Any], event_type: str, now: str
    ) -> None:
        """The one write of the architecture: save a document at ``version`` and append an
        event carrying the same snapshot, both in this transaction, encoded once."""
        encoded = encode(snapshot)
        self.save_doc(kind, key, version, snapshot, now, encoded=encoded)
        self.append_event(Event(event_type, key, snapshot, created_at=now), encoded=encoded)

    @abc.abstractmethod
    def events_after(
        self, after_id: int, *, thread_id: str | None = None, limit: int = 500
    ) -> list[Event]:
        """Committed events with ``id > after_id``, oldest first, optionally for one thread."""

    @abc.abstractmethod
    def event_head(self) -> int:
        """An event id at or below which every event is settled: a new reader that starts
        from it misses nothing that commits later."""


class Store(abc.ABC):
    """A database. Thread-safe: each OS thread gets its own connection."""

    url: str
    dialect: str

    @abc.abstractmethod
    def write(self) -> contextlib.AbstractContextManager[Transaction]:
        """A write transaction, taken up front (SQLite ``BEGIN IMMEDIATE``)."""

    @abc.abstractmethod
    def read(self) -> contextlib.AbstractContextManager[Transaction]:
        """A read-only transaction over one consistent snapshot."""

    def write_one(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run one statement as a write transaction of its own and return its rows (its
        ``RETURNING``), in as few round trips as the backend allows: the queue's claims and
        completions are each one statement."""
        with self.write() as tx:
            return tx.query(sql, params)

    def write_chain(
        self, sql: str, params: Sequence[Any], then_sql: str = "", then_params: Sequence[Any] = ()
    ) -> tuple[list[Values], list[Values]]:
        """Run ``sql``, and ``then_sql`` (if given) only if ``sql`` returned rows, in one write
        transaction; return both statements' rows as values in column order. A worker's
        completion and its next claim commit together: one commit per task instead of two;
        and the queue reads its rows by position, which skips building a dict per row."""
        with self.write() as tx:
            rows: list[Values] = [tuple(r.values()) for r in tx.query(sql, params)]
            if not rows or not then_sql:
                return rows, []
            return rows, [tuple(r.values()) for r in tx.query(then_sql, then_params)]

    def listen(
        self, on_event: Callable[[int], None], *, ready: Callable[[], None] | None = None
    ) -> Callable[[], None] | None:
        """Push wake-ups: call ``on_event(event_id)`` from a background thread after events
        commit in *any* process; return a function that stops it.

        ``None`` means this backend cannot push (SQLite): poll ``events_after`` instead.
        PostgreSQL implements it with LISTEN/NOTIFY; ``on_event(0)`` means "re-read from your
        cursor" (sent after a reconnect).
        """
        return None

    @abc.abstractmethod
    def close(self) -> None:
        """Close every connection this store opened."""
