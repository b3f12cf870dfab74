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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from taskloom.domain.errors import StoreBusy, StoreError
from taskloom.domain.events import TASK_STATE, Event
from taskloom.domain.lease import Claim
from taskloom.domain.queue import CHANGE_FIELDS, FIXED_FIELDS, NewTask, Task, task_event_data

Row = dict[str, Any]


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
PROBE_WRITE_SQL = "UPDATE documents SET version = version WHERE 1 = 0"
CANNOT_WRITE = "cannot write the database"
"""How the error of a write refused outright (a read-only file or session) begins, the
database's name next."""
"""A write that changes nothing: both backends refuse it where no write may be made."""
LIST_DOCS_SQL = "SELECT key, version, state, updated_at FROM documents WHERE kind = ? ORDER BY key"


_FIXED_COLUMNS = ", ".join(f"t.{name} AS task_{name}" for name in FIXED_FIELDS)
_CHANGE_COLUMNS = ", ".join(f"e.{name}" for name in CHANGE_FIELDS[1:])
"""A task event's columns: its change's fields but the id, which is ``events.task_id``."""
_FIRST_FIXED = 5 + len(CHANGE_FIELDS)


def events_query(
    after_id: int, thread_id: str | None, limit: int, *, upto: bool = False
) -> tuple[str, tuple[Any, ...]]:
    """The ``events_after`` query (``?`` placeholders) and its parameters, for every backend.

    Each row is an :data:`EventRow`: the event's columns, a task event's change columns,
    then the fixed fields of the task it names (``task_id``; all null for other events).
    With ``upto`` the query also takes an upper bound on the id, the parameter before the
    limit."""
    sql = (
        f"SELECT e.id, e.type, e.thread_id, e.data, e.created_at, e.task_id, {_CHANGE_COLUMNS},"
        f" {_FIXED_COLUMNS} FROM events AS e LEFT JOIN tasks AS t ON t.id = e.task_id"
        " WHERE e.id > ?"
    )
    params: tuple[Any, ...] = (after_id,)
    if thread_id is not None:
        sql += " AND e.thread_id = ?"
        params = (after_id, thread_id)
    if upto:
        sql += " AND e.id <= ?"
    return sql + " ORDER BY e.id LIMIT ?", (*params, limit)


EventRow = Sequence[Any]
"""An ``events_query`` row: ``id, type, thread_id, data, created_at``, then
:data:`CHANGE_FIELDS` (``task_id`` first), then :data:`FIXED_FIELDS`."""


def events_from_rows(rows: Sequence[EventRow]) -> list[Event]:
    """``events_query`` rows as :class:`Event` objects, in every backend the same way.

    A task's event is its change's columns read with its task's fixed fields
    (:func:`~taskloom.domain.queue.task_event_data`). The event of a task deleted since
    (``prune``) cannot be shown whole and is left out: it describes a task that no longer
    exists, which is what its absence says too.
    """
    events = []
    for row in rows:
        event_id, type_, thread_id, data, created_at = row[:5]
        if type_ == TASK_STATE:
            if row[_FIRST_FIXED] is None:  # title is NOT NULL: the task is gone
                continue
            payload = task_event_data(row[5:_FIRST_FIXED], row[_FIRST_FIXED:])
        else:
            payload = decode(data)
        events.append(Event(type_, thread_id, payload, id=event_id, created_at=created_at))
    return events


class Transaction(abc.ABC):
    """One open transaction. Use only inside ``with store.write()`` / ``store.read()``."""

    dialect: str

    @abc.abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; return the number of rows it changed."""

    @abc.abstractmethod
    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run a statement once per row of parameters (the driver's batch: one call)."""

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


class TaskTable(abc.ABC):
    """The queue's tasks as a store keeps them (``store.tasks``): every read and change of
    the ``tasks`` table and of the agents' surfacing cursors.

    The :class:`~taskloom.queue.handle.Queue` holds the rules and checks every argument
    before it calls here. A method that takes ``tx`` is a step of the caller's transaction;
    the others are each one transaction of their own. A change under a lease answers
    ``None`` when the lease is not the caller's (nothing changed). Times are unix seconds.
    """

    # --- steps of the caller's transaction ------------------------------------------------

    @abc.abstractmethod
    def get(self, tx: Transaction, task_id: str) -> Task | None:
        """The task, or ``None`` if there is none by that id."""

    @abc.abstractmethod
    def live(self, tx: Transaction, keys: Sequence[str], now: float) -> dict[str, Task]:
        """The live (ready or in progress) tasks holding these dedup keys, by key; a ready
        one whose ``expires_at`` has passed is canceled first, and holds its key no more."""

    @abc.abstractmethod
    def insert(
        self,
        tx: Transaction,
        tasks: Sequence[tuple[str, NewTask]],
        now: float,
        blocked: Mapping[str, str | None] | None = None,
    ) -> list[Task]:
        """Add these tasks (each with its id), ready, or blocked with the reason ``blocked``
        gives by id; the tasks added, in order. Their dependencies are added apart
        (:meth:`insert_deps`)."""

    # --- the work graph (steps of the caller's transaction) --------------------------------

    @abc.abstractmethod
    def statuses(self, tx: Transaction, ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """The status and result of each of these tasks that exists, by id; none of them
        can end before the transaction does (PostgreSQL locks them)."""

    @abc.abstractmethod
    def key_tasks(
        self, tx: Transaction, keys: Sequence[str]
    ) -> dict[str, tuple[str, str, str | None]]:
        """For each dedup key some task holds or held: the live holder's id, status and
        result, else the newest task's that had it (locked as :meth:`statuses`'s)."""

    @abc.abstractmethod
    def insert_deps(
        self, tx: Transaction, rows: Sequence[tuple[str, int, str | None, str | None]]
    ) -> None:
        """Add dependencies: ``(task, position, the task depended on or None, dedup key or
        None)``."""

    @abc.abstractmethod
    def waiting_keys(self, tx: Transaction, keys: Sequence[str]) -> list[str]:
        """Those of ``keys`` a dependency waits for: unbound, or bound to a task that ended
        dead or canceled."""

    @abc.abstractmethod
    def bind_key(self, tx: Transaction, key: str, task_id: str) -> list[str]:
        """Bind those dependencies on ``key`` to the task ``task_id`` (a new one holding it);
        the tasks that now depend on it."""

    @abc.abstractmethod
    def reaches_itself(self, tx: Transaction, task_id: str) -> bool:
        """Whether the task depends on itself through others."""

    @abc.abstractmethod
    def around(self, tx: Transaction, ids: Sequence[str]) -> list[Row]:
        """The ready and blocked tasks among these and downstream of them, one row for each
        of its dependencies: ``task_id``, ``own_status``, ``own_result``, ``dep``."""

    @abc.abstractmethod
    def set_blocked(self, tx: Transaction, reasons: Mapping[str, str | None], now: float) -> None:
        """Block each of these ready or blocked tasks (by id) with its reason, or release it
        (``None``), in one statement however many: each writes its own event."""

    @abc.abstractmethod
    def blocks_others(self, tx: Transaction, task_id: str) -> bool:
        """Whether a blocked task waits for this one."""

    @abc.abstractmethod
    def deps_of(self, tx: Transaction, ids: Sequence[str]) -> list[Row]:
        """The dependencies of these tasks as they stand: ``task_id``, ``dep``, ``dep_key``,
        and the dependency's ``status``, ``title`` and ``claimed_by``."""

    @abc.abstractmethod
    def holders(self, tx: Transaction, groups: Sequence[str], now: float) -> dict[str, str]:
        """The task in progress of each of these groups that has one whose lease runs at
        ``now`` (a lease run out holds its group no more: a claim sweeps it back first)."""

    @abc.abstractmethod
    def get_many(self, tx: Transaction, ids: Sequence[str]) -> list[Task]:
        """These tasks, in the order given (a missing one left out)."""

    @abc.abstractmethod
    def ready_rows(
        self,
        tx: Transaction,
        agent: str | None,
        now: float,
        kinds: Sequence[str],
        limit: int | None = None,
        *,
        grouped: bool = False,
    ) -> list[tuple[str, str | None]]:
        """Every task ``agent`` (anyone's, when ``None``) could claim now, after the sweep a
        claim runs first, of ``kinds`` (any when empty), most urgent first: its id and
        group; with ``limit``, the first ``limit`` of them; with ``grouped``, only those in a
        group."""

    @abc.abstractmethod
    def waiting(
        self, tx: Transaction, agent: str | None, now: float, kinds: Sequence[str], limit: int
    ) -> list[Task]:
        """The first ``limit`` ready or blocked tasks and lapsed leases that ``agent`` (any,
        when ``None``) could not claim now, of ``kinds``, most urgent first."""

    @abc.abstractmethod
    def evict_over(self, tx: Transaction, cap: int, now: float) -> list[Task]:
        """Cancel the least urgent, oldest ready tasks over ``cap`` ready ones; those."""

    @abc.abstractmethod
    def holder(self, tx: Transaction, dedup_key: str) -> str | None:
        """The id of the live task holding a dedup key, if any."""

    @abc.abstractmethod
    def requeue(self, tx: Transaction, task_id: str, now: float) -> Task | None:
        """A dead task back to ready with no attempts used (``None`` if it is not dead)."""

    @abc.abstractmethod
    def host_claims(self, tx: Transaction, host: str, now: float) -> list[tuple[str, int, str]]:
        """The live leases claimed by processes of ``host``: id, pid and lease token."""

    @abc.abstractmethod
    def reclaim_dead(self, tx: Transaction, task_id: str, token: str, now: float) -> Task | None:
        """Give up a dead worker's claim under its lease, as an expired lease is given up."""

    @abc.abstractmethod
    def prune(self, tx: Transaction, before: float, now: float) -> int:
        """Delete the tasks finished before ``before``, and their events; how many tasks."""

    @abc.abstractmethod
    def find(
        self,
        tx: Transaction,
        *,
        status: str | None,
        agent: str | None,
        kinds: Sequence[str] | None,
        limit: int,
        now: float,
    ) -> list[Task]:
        """Tasks most urgent first: of ``status`` as shown at ``now`` (``ready`` includes
        the lapsed leases), claimed by or meant for ``agent``, of one of ``kinds`` (each
        filter when given)."""

    @abc.abstractmethod
    def counts(self, tx: Transaction, now: float) -> dict[str, int]:
        """How many tasks there are of each status present, as shown at ``now``
        (``lease_expired`` apart from ``in_progress``)."""

    @abc.abstractmethod
    def lapsed(self, tx: Transaction, now: float) -> list[Task]:
        """In-progress tasks whose lease has run out at ``now`` (what a sweep takes back),
        by id."""

    @abc.abstractmethod
    def poisoned(self, tx: Transaction, attempts: int) -> list[Task]:
        """Ready tasks tried ``attempts`` times or more, by id."""

    @abc.abstractmethod
    def ids_in(self, tx: Transaction, status: str) -> list[str]:
        """The ids of the tasks stored with ``status`` (``dead``, ``blocked``…), in order."""

    @abc.abstractmethod
    def claimable_count(
        self, tx: Transaction, agent: str | None, now: float, kinds: Sequence[str] = ()
    ) -> int:
        """How many tasks ``agent`` (anyone's, when ``None``) could claim now, after the sweep
        a claim runs first, of ``kinds`` (any when empty), one per group (a claim takes a
        group's most urgent task only): the :meth:`ready_rows`
        :func:`~taskloom.domain.readiness.first_of_groups` keeps."""

    @abc.abstractmethod
    def seen(self, tx: Transaction, agent: str) -> str | None:
        """The digest of the block ``agent`` last saw, if any."""

    @abc.abstractmethod
    def see(self, tx: Transaction, agent: str, digest: str, now: float) -> bool:
        """Record that ``agent`` saw ``digest``; whether that changed its cursor."""

    @abc.abstractmethod
    def unsee(self, tx: Transaction, agent: str) -> None:
        """Forget what ``agent`` last saw."""

    # --- one transaction each ---------------------------------------------------------------

    @abc.abstractmethod
    def claim(self, claim: Claim, now: float) -> list[Task]:
        """Take up to ``claim.n`` eligible tasks in one statement, most urgent first."""

    @abc.abstractmethod
    def sweep(self, now: float) -> list[Task]:
        """Give up the expired leases (back to ready, or dead once out of attempts), and
        cancel the ready tasks whose ``expires_at`` has passed; those tasks."""

    @abc.abstractmethod
    def done(self, task_id: str, token: str, result: str | None, now: float) -> Task | None:
        """Complete a task under its lease."""

    @abc.abstractmethod
    def done_and_claim(
        self,
        task_id: str,
        token: str,
        result: str | None,
        claim: Claim,
        now: float,
        held: Task | None = None,
    ) -> tuple[Task | None, list[Task]]:
        """Complete a task under its lease and, if that matched, make ``claim`` in the same
        transaction: the completed task (``None``: the lease was lost, nothing claimed) and
        what was claimed. ``held``: the task as its claim returned it, from which a backend
        may make the completed task (:func:`~taskloom.domain.lease.completed`) instead of
        reading it back."""

    @abc.abstractmethod
    def done_many(
        self,
        items: Sequence[tuple[str, str, str | None]],
        now: float,
        held: Mapping[str, Task] | None = None,
    ) -> list[Task]:
        """Complete each ``(id, token, result)`` under its own lease, in one statement; the
        tasks completed (a lost lease changes nothing for its task). ``held``: each item's
        task by id, as its claim returned it, from which the completed tasks are made
        (:func:`~taskloom.domain.lease.completed`) instead of read back."""

    @abc.abstractmethod
    def fail(
        self, task_id: str, token: str, error: str, now: float, *, retry: bool, delay: float
    ) -> Task | None:
        """Record a failure under the lease: back to ready, claimable ``delay`` seconds from
        now, while attempts remain and ``retry``; else dead."""

    @abc.abstractmethod
    def release(self, task_id: str, token: str, now: float) -> Task | None:
        """Give a task back to ready under its lease, the attempt not counted."""

    @abc.abstractmethod
    def extend(self, task_id: str, token: str, until: float, now: float) -> Task | None:
        """Move the end of a task's lease to ``until``."""

    @abc.abstractmethod
    def cancel(
        self, task_id: str, reason: str | None, now: float, *, ready_only: bool
    ) -> Task | None:
        """Cancel a task not finished (only a ready one with ``ready_only``): ``None`` if
        there is no such task."""


class Store(abc.ABC):
    """A database. Thread-safe: each OS thread gets its own connection."""

    url: str
    dialect: str
    tasks: TaskTable
    """The queue's tasks (:class:`TaskTable`)."""
    migrate_wait_s: float | None = None
    """How long a caller that must answer at once (a hook) waits for a lock another process
    holds, then raises ``StoreBusy``: opening the database (a SQLite file's first look), the
    migrations it lacks after an upgrade, and on PostgreSQL each statement of a one-shot
    store's connection (a table another session locked whole). ``None``: as any write."""

    @abc.abstractmethod
    def write(self) -> contextlib.AbstractContextManager[Transaction]:
        """A write transaction, taken up front (SQLite ``BEGIN IMMEDIATE``)."""

    @abc.abstractmethod
    def side_write(self, wait_s: float) -> contextlib.AbstractContextManager[Transaction]:
        """A write of bookkeeping that appends no event (an agent's cursor), for a caller
        that must answer at once (a hook): it waits at most ``wait_s`` for a lock another
        process holds, then raises :class:`StoreBusy`, and, appending no event, wakes no
        listener and leaves the event retention to the writers that append them."""

    @abc.abstractmethod
    def read(self) -> contextlib.AbstractContextManager[Transaction]:
        """A read-only transaction over one consistent snapshot."""

    def exists(self) -> bool:
        """Whether the database exists yet. An embedded file is created by the first write, so
        what only looks (a claim or a hook on an empty queue) can answer without making one
        in whatever directory it runs in."""
        return True

    def check(self) -> None:
        """Check the database's integrity, raising ``StoreError`` if it is damaged. A server
        (PostgreSQL) keeps its own: nothing to do."""
        return None

    def check_creatable(self) -> None:
        """Raise ``StoreError`` now if the database does not exist and cannot be created. A
        server (PostgreSQL) answers for itself when first asked: nothing to do."""
        return None

    def check_writable(self) -> None:
        """Raise ``StoreError`` now, in one line naming the database, if writes to it would
        fail: a file that cannot be created, or one that exists but is read-only (its mode,
        the immutable flag, a read-only mount), or a server session that may not write (a
        standby, ``default_transaction_read_only``, a role without rights). A database that
        only stays locked past the busy timeout is :class:`StoreBusy`, not refused."""
        self.check_creatable()
        if not self.exists():
            return
        try:
            with self.write() as tx:
                tx.execute(PROBE_WRITE_SQL)
        except StoreBusy:
            raise
        except StoreError as exc:
            if exc.message.startswith(CANNOT_WRITE):  # it names the database already
                raise
            raise StoreError(f"{CANNOT_WRITE} {self.url}: {exc.message}") from None

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
