"""The embedded default: one SQLite file in WAL mode.

- Every write is ``BEGIN IMMEDIATE``: the write lock is taken up front, so two processes
  never both read a board and then race to save it (no lost updates, no upgrade deadlocks).
- A busy timeout makes writers queue behind each other instead of failing; a waiting
  process looks at the lock every few milliseconds (see :data:`BUSY_SLICE_MS`).
- Each OS thread gets its own connection; the async API runs calls on worker threads.
- Reading a database that does not exist yet creates nothing: reads see an empty schema.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from taskloom.domain.errors import StoreBusy, StoreError
from taskloom.domain.events import Event
from taskloom.store import migrations
from taskloom.store.base import (
    CANNOT_WRITE,
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
from taskloom.store.retention import AutoRetention
from taskloom.store.tasks import SqlTaskTable

BUSY_TIMEOUT_MS = 10_000
"""How long a statement waits for a lock another process holds before ``StoreBusy``."""
BUSY_SLICE_MS = 10
"""How long SQLite itself waits for a lock before taskloom asks again (:func:`_locking`).
SQLite's busy handler sleeps longer and longer between looks (up to 100 ms), while a
writer holds the lock for well under a millisecond: a waiter that had slept a few times
would sleep on while the others committed, and starve. Asked again every 10 ms, a waiter
keeps looking every few milliseconds."""
MMAP_BYTES = 256 * 1024 * 1024
"""Pages are read through a memory map: after another process commits, a reader re-reads
changed pages from the map instead of with a system call each."""
PAGE_BYTES = 2048
"""The page size of a database taskloom creates (SQLite's default is 4096; an existing file
keeps its own). Every commit writes each page it changed whole to the WAL, and a claim plus
completion changes three or four (the task's, the work index's, the events'), so smaller
pages write less per commit; below 2048 bytes the deeper trees cost more than they save."""
WAL_PAGES = 4000
"""Pages the WAL grows to before a commit copies them back into the database (SQLite's
default is 1000): 8 MB at :data:`PAGE_BYTES`. The queue's commits rewrite the same few
pages, so checkpointing less often copies each of them back fewer times."""
CHECK_LINES = 3
"""How many problems an integrity check's error names (the rest are left to the pragma)."""
FILE_CHECK_S = 1.0
"""How often (per thread, at most) a store checks that its file is still the one at its path."""
READ_ONLY = (
    "the file is read-only (its permissions, the immutable flag that lsattr shows, or a"
    " read-only mount)"
)
"""What a write to a file SQLite opened read-only is refused with, after the database's path."""
CHECK_ON_OPEN_BYTES = 8 * 1024 * 1024
"""Files up to this size are checked (``PRAGMA quick_check``) whenever a process opens them:
a few milliseconds. A larger file's check grows with it, too slow for
a prompt hook on every prompt, so it is left to ``taskloom doctor`` (:meth:`check`)."""


@contextlib.contextmanager
def map_errors() -> Iterator[None]:
    """Translate ``sqlite3`` exceptions into the package's own errors."""
    try:
        yield
    except sqlite3.Error as exc:
        raise store_error(exc) from exc


def store_error(exc: sqlite3.Error) -> StoreError:
    """The package's error for a ``sqlite3`` one: busy/locked databases are ``StoreBusy``."""
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreBusy(f"database is busy: {text}")
    return StoreError(f"database error: {text}")


def _locking(
    conn: sqlite3.Connection,
    sql: str,
    params: Sequence[Any] = (),
    wait_s: float = BUSY_TIMEOUT_MS / 1000,
) -> sqlite3.Cursor:
    """``conn.execute`` for a statement that takes the write lock: while another process
    holds it, asked again until ``wait_s`` (default :data:`BUSY_TIMEOUT_MS`) has passed. Only
    a statement run outside a transaction is run again: SQLite refuses it whole. (Reads need
    no such loop: in WAL mode no writer blocks them, and the exclusive lock that would (the
    last connection checkpointing as it closes) is waited for as a connection opens.)"""
    deadline = 0.0
    while True:
        try:
            return conn.execute(sql, params)
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY  # any kind of busy
            if not busy or conn.in_transaction:
                raise
            now = time.monotonic()
            if not deadline:
                deadline = now + max(0, wait_s - BUSY_SLICE_MS / 1000)
            elif now >= deadline:
                raise


def _rows(cur: sqlite3.Cursor) -> list[Row]:
    rows = cur.fetchall()
    if not rows:
        return []
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in rows]


class SqliteTransaction(Transaction):
    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql, params).rowcount

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return _rows(self.conn.execute(sql, params))

    def load_doc(self, kind: str, key: str) -> Document | None:
        row = self.conn.execute(
            "SELECT version, state, updated_at FROM documents WHERE kind = ? AND key = ?",
            (kind, key),
        ).fetchone()
        if row is None:
            return None
        return Document(kind, key, row[0], decode(row[1]), row[2])

    def doc_version(self, kind: str, key: str) -> int | None:
        row = self.conn.execute(
            "SELECT version FROM documents WHERE kind = ? AND key = ?", (kind, key)
        ).fetchone()
        return None if row is None else int(row[0])

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
        self.conn.execute(SAVE_DOC_SQL, (kind, key, version, encoded or encode(state), now))

    def list_docs(self, kind: str) -> list[Document]:
        rows = self.conn.execute(LIST_DOCS_SQL, (kind,)).fetchall()
        return [Document(kind, r[0], r[1], decode(r[2]), r[3]) for r in rows]

    def append_event(self, event: Event, *, encoded: str | None = None) -> int:
        cur = self.conn.execute(
            "INSERT INTO events (type, thread_id, data, created_at) VALUES (?, ?, ?, ?)",
            (event.type, event.thread_id, encoded or encode(event.data), event.created_at),
        )
        return int(cur.lastrowid or 0)

    def events_after(
        self, after_id: int, *, thread_id: str | None = None, limit: int = 500
    ) -> list[Event]:
        rows = self.conn.execute(*events_query(after_id, thread_id, limit)).fetchall()
        return events_from_rows(rows)

    def event_head(self) -> int:
        # One writer at a time: whatever is committed is settled.
        row = self.conn.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()
        return int(row[0])


def _split_statements(script: str) -> list[str]:
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip() and not all(
        ln.strip().startswith("--") or not ln.strip() for ln in buffer.splitlines()
    ):
        statements.append(buffer.strip())
    return statements


def _migrate(
    conn: sqlite3.Connection,
    path: str = ":memory:",
    *,
    copy_source: bool = False,
    wait_s: float | None = None,
) -> None:
    """Apply the migrations the file lacks (see :func:`migrations.pending`). An up-to-date
    file is only read; otherwise all of it runs in one ``BEGIN IMMEDIATE`` transaction, which
    waits its turn: a write outside a transaction fails at once ("database is locked") when
    another process commits first, where a transaction waits (the connection's busy
    timeout, or ``wait_s``, past which it raises ``StoreBusy``)."""
    if _pending(conn, path, copy_source):
        if wait_s is not None:
            conn.execute(f"PRAGMA busy_timeout = {max(1, round(wait_s * 1000))}")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if wait_s is None or not isinstance(store_error(exc), StoreBusy):
                raise
            raise migrations.held_up(f"the database {path}", wait_s) from exc
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations"
                " (version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
            )
            for number, file, sql in _pending(conn, path, copy_source):
                for statement in _split_statements(sql):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (number, file))
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise


def _pending(conn: sqlite3.Connection, path: str, copy_source: bool) -> list[tuple[int, str, str]]:
    """The migrations the file lacks."""
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    ledger = "SELECT version, name FROM schema_migrations"
    applied = dict(conn.execute(ledger).fetchall()) if found else {}
    where = f"the database {path}"
    return migrations.pending(
        applied, "sqlite", where, f"sqlite:///{path}", copy_source=copy_source
    )


def _refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file that holds tables or views but no taskloom ledger: another
    application's database, which taskloom's tables must not join. Checked before WAL is
    switched on, which would change the file too."""
    names = [
        str(row[0])
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
            " AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name"
        )
    ]
    if not names:
        return
    if "schema_migrations" in names:
        columns = [str(row[1]) for row in conn.execute("PRAGMA table_info(schema_migrations)")]
        rows = conn.execute("SELECT * FROM schema_migrations").fetchall()
        if migrations.is_taskloom_history(columns, rows):
            return
    migrations.refuse_foreign(names, str(path), "use a new file or a taskloom database")


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back what is still open. SQLite itself rolls back on some errors (a full disk),
    and a second ROLLBACK would fail with "no transaction is active", replacing the error
    that says what happened."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _wal(conn: sqlite3.Connection, wait_s: float = BUSY_TIMEOUT_MS / 1000) -> str:
    """Switch to WAL. SQLite does not call the busy handler for this pragma: a process
    opening the file while another migrates it would fail at once with "database is locked", so
    it waits here, up to ``wait_s`` (as long as any write, by default)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


NEW_FILE_MODE = 0o600
"""A new database file is its owner's alone: it holds stashed tool output, boards, goals and
workers' lease tokens. SQLite gives its ``-wal`` and ``-shm`` files the database's mode; an
existing file keeps its own."""
FOLDER_NAME = ".taskloom"
"""The default database's folder (``./.taskloom/taskloom.db``)."""


def _make_folder(folder: Path) -> None:
    """Make the database's folder, unless it exists. A ``.taskloom`` folder made here gets a
    ``.gitignore`` of ``*``: the database and its ``-wal`` and ``-shm`` files are this
    machine's state, which ``git add -A`` in the project must not commit."""
    if folder.is_dir():
        return
    folder.mkdir(parents=True, exist_ok=True)
    if folder.name == FOLDER_NAME:
        with contextlib.suppress(OSError), open(folder / ".gitignore", "x") as ignore:
            ignore.write("*\n")


def _create_private(path: Path) -> None:
    """Make the database file, empty and :data:`NEW_FILE_MODE`, unless it exists (SQLite
    would make it readable by every user: 644 under the usual umask)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, NEW_FILE_MODE))


def creation_problem(path: Path) -> str | None:
    """Why ``path`` cannot be created, if a look at its folders tells: the nearest one that
    exists is a file, or cannot be written to."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable"
    return None


class SqliteStore(Store):
    dialect = "sqlite"

    def __init__(self, path: str | Path, *, copy_source: bool = False) -> None:
        """``copy_source``: the store is only read, as the source of ``migrate-db``, so a
        file an earlier development build made is read as it is (see
        :func:`migrations.pending`)."""
        self.path = Path(path)
        self.copy_source = copy_source
        self.url = f"sqlite:///{self.path}"
        self._local = threading.local()
        self._lock = threading.RLock()
        self._ready = False
        self._empty: sqlite3.Connection | None = None
        self.tasks = SqlTaskTable(self)
        self.retention = AutoRetention(self)

    def _open(self, path: str) -> sqlite3.Connection:
        if path.startswith("file:"):  # SQLite built with URIs on read it as one: another file
            path = f"./{path}"
        wait_ms = self._open_wait_ms()
        conn = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=wait_ms / 1000
        )
        conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_PAGES}")
        return conn

    def _open_wait_ms(self) -> int:
        """How long opening the file waits for a lock another process holds (one that
        keeps even readers out: a checkpoint as a connection closes, an exclusive locking
        mode): as long as any write, or :attr:`migrate_wait_s` when it is set (a hook)."""
        if self.migrate_wait_s is None:
            return BUSY_TIMEOUT_MS
        return max(1, round(self.migrate_wait_s * 1000))

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """First connection of this store: WAL, integrity check (a small file's), migrations."""
        with self._lock:
            if self._ready:
                return
            _refuse_foreign(conn, self.path)
            conn.execute(f"PRAGMA page_size = {PAGE_BYTES}")  # a new file only: else no-op
            mode = _wal(conn, self._open_wait_ms() / 1000)
            if mode.lower() != "wal":
                raise StoreError(f"could not switch {self.path} to WAL mode (got {mode})")
            if self.path.stat().st_size <= CHECK_ON_OPEN_BYTES:
                self._check(conn, "quick_check")
            _migrate(conn, str(self.path), copy_source=self.copy_source, wait_s=self.migrate_wait_s)
            self._ready = True

    def _check(self, conn: sqlite3.Connection, pragma: str) -> None:
        try:
            rows = conn.execute(f"PRAGMA {pragma}").fetchmany(CHECK_LINES)
            # One line however many problems it lists (each row may hold several lines).
            result = "; ".join(" ".join(str(r[0]).split()) for r in rows)
        except sqlite3.OperationalError:  # busy, not damaged
            raise
        except sqlite3.DatabaseError as exc:  # too damaged to say how
            result = str(exc)
        if result != "ok":
            raise StoreError(f"integrity check failed for {self.path}: {result}")

    def check(self) -> None:
        """The whole file's integrity check, indexes included, whatever its size."""
        with map_errors():
            self._check(self._conn(), "integrity_check")

    def _conn(self) -> sqlite3.Connection:
        local = self._local
        conn: sqlite3.Connection | None = getattr(local, "conn", None)
        if conn is not None and self._ready:
            if time.monotonic() >= local.check_due:
                self._check_same_file()
            return conn
        try:
            if conn is None:
                _make_folder(self.path.parent)
                _create_private(self.path)
                conn = self._open(str(self.path))
                local.conn, local.file_id = conn, self._file_id()
                local.check_due = time.monotonic() + FILE_CHECK_S
            self._prepare(conn)
            # Opening waited for locks as SQLite does (the whole busy timeout at once);
            # from now on SQLite waits a slice, and _locking asks again.
            conn.execute(f"PRAGMA busy_timeout = {min(BUSY_SLICE_MS, BUSY_TIMEOUT_MS)}")
        except OSError as exc:
            why = creation_problem(self.path) or exc.strerror or exc  # not "File exists"
            raise StoreError(f"cannot open the database {self.path}: {why}") from exc
        except sqlite3.Error as exc:
            error = store_error(exc)
            if isinstance(error, StoreBusy):
                raise error from exc
            raise StoreError(f"cannot open the database {self.path}: {self._why(exc)}") from exc
        return conn

    def _why(self, exc: sqlite3.Error) -> str:
        """What went wrong opening the file, in words that point at the fix."""
        if self.path.is_dir():  # ``--db sqlite:///.taskloom``: the folder, not its file
            return (
                "it is a folder, not a database file: give the file's path (such as"
                f" {self.path / 'taskloom.db'})"
            )
        folder = self.path.parent
        if "readonly" in str(exc) and not os.access(folder, os.W_OK):
            return (
                f"the folder {folder} is read-only, and SQLite keeps its -wal and -shm files"
                " next to the database, even to read it: make the folder writable, or copy"
                " the database to one that is"
            )
        return str(exc)

    def _file_id(self) -> tuple[int, int] | None:
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def _check_same_file(self) -> None:
        """Refuse to go on with a file that was deleted or replaced (a restore) under this
        process: its connection still reads and writes the old one, where writes are lost
        and other processes' changes never show."""
        if self._file_id() != self._local.file_id:
            raise StoreError(
                f"the database file {self.path} was deleted or replaced while this process"
                " had it open: restart the process to use the file now at that path"
            )
        self._local.check_due = time.monotonic() + FILE_CHECK_S

    def exists(self) -> bool:
        return self._ready or self.path.exists()

    def check_creatable(self) -> None:
        """A file that cannot be created is an error now: ``taskloom mcp`` or ``serve``
        started on ``/etc/passwd/x.db`` would otherwise answer every read (an empty
        database, which needs no file) and fail every write."""
        if not self.exists():
            problem = creation_problem(self.path)
            if problem:
                raise StoreError(f"cannot create the database {self.path}: {problem}")

    def check_writable(self) -> None:
        """:meth:`Store.check_writable`, saying what makes a file read-only."""
        try:
            super().check_writable()
        except StoreError as exc:
            if "readonly" not in exc.message and READ_ONLY not in exc.message:
                raise
            raise StoreError(f"{CANNOT_WRITE} {self.path}: {READ_ONLY}") from None

    def _write_error(self, exc: sqlite3.Error) -> StoreError:
        """:func:`store_error` for a write, a read-only file named with what makes it so."""
        code = getattr(exc, "sqlite_errorcode", 0)
        if isinstance(exc, sqlite3.OperationalError) and code & 0xFF == sqlite3.SQLITE_READONLY:
            return StoreError(f"{CANNOT_WRITE} {self.path}: {READ_ONLY}")
        return store_error(exc)

    def _empty_conn(self) -> sqlite3.Connection:
        """An in-memory database with the schema, for reads before the file exists."""
        with self._lock:
            if self._empty is None:
                conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                _migrate(conn)
                self._empty = conn
            return self._empty

    def write(self) -> contextlib.AbstractContextManager[Transaction]:
        return self._write(BUSY_TIMEOUT_MS / 1000, side=False)

    def side_write(self, wait_s: float) -> contextlib.AbstractContextManager[Transaction]:
        return self._write(wait_s, side=True)

    @contextlib.contextmanager
    def _write(self, wait_s: float, side: bool) -> Iterator[Transaction]:
        try:
            conn = self._conn()
            _locking(conn, "BEGIN IMMEDIATE", wait_s=wait_s)
            try:
                yield SqliteTransaction(conn)
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise
        except sqlite3.Error as exc:  # map_errors, inline: one context manager, not two
            raise self._write_error(exc) from exc
        if not side:
            self.retention.committed()

    @contextlib.contextmanager
    def read(self) -> Iterator[Transaction]:
        with map_errors():
            if getattr(self._local, "conn", None) is None and not self.path.exists():
                with self._lock:
                    conn = self._empty_conn()
                    yield SqliteTransaction(conn)
                return
            conn = self._conn()
            conn.execute("BEGIN")
            try:
                yield SqliteTransaction(conn)
            finally:
                conn.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection now; other threads' connections close as soon as
        they let go of them (with the thread-local that held them, dropped here). Closing a
        connection another thread is running a statement on can crash the interpreter; this
        way its transaction finishes, and its next call opens a fresh connection."""
        own = getattr(self._local, "conn", None)
        with self._lock:
            if own is not None:
                with contextlib.suppress(sqlite3.Error):
                    own.close()
            if self._empty is not None:
                self._empty.close()
                self._empty = None
        self._local = threading.local()
        self._ready = False
