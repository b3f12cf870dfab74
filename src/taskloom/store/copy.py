"""Copy every table of one store into another (``taskloom migrate-db``).

Moving an embedded SQLite database to PostgreSQL is the usual direction, but nothing here
depends on it: both stores are opened (so each runs its own migrations), the destination must
be empty, and every table the source has is copied row by row in batches, ids included. The
source may also be a database an earlier development build made at its last schema. The
whole copy is one destination write transaction, so a failure leaves the destination empty.
Afterwards PostgreSQL sequences are moved past the copied ids, so new events keep increasing
(an SSE client's ``Last-Event-ID`` stays valid across the move).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from taskloom.domain.errors import Conflict, InvalidInput, NotFound
from taskloom.store import migrations, open_store
from taskloom.store.base import Row, Store, Transaction
from taskloom.store.outbox import newest_event_id
from taskloom.store.sqlite import SqliteStore

BATCH = 1000
PAGE_BYTES = 16 * 1024 * 1024
"""About the most text and bytes one page of a copy holds: a table of large rows (stashed
results) is read a few rows at a time, so the copy's memory does not grow with the data."""
Progress = Callable[[str, int, int], None]
"""``progress(table, rows_copied_so_far, rows_in_table)``."""


def quote(name: str) -> str:
    """A double-quoted SQL identifier (table and column names come from the catalog)."""
    return '"' + name.replace('"', '""') + '"'


NOT_COPIED = frozenset({"schema_migrations", "ready_bound"})
"""Tables each database keeps for itself: the migrations ledger, and the bound its
triggers derive from the tasks copied."""


def tables(tx: Transaction) -> list[str]:
    """User tables of the store, in name order (but :data:`NOT_COPIED`)."""
    if tx.dialect == "sqlite":
        rows = tx.query(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
    else:
        rows = tx.query(
            "SELECT table_name AS name FROM information_schema.tables"
            " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
            " ORDER BY table_name"
        )
    return [r["name"] for r in rows if r["name"] not in NOT_COPIED]


def _column_types(tx: Transaction, table: str) -> dict[str, str]:
    if tx.dialect == "sqlite":
        rows = tx.query(f"PRAGMA table_info({quote(table)})")
        return {r["name"]: str(r["type"]).lower() for r in rows}
    rows = tx.query(
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = ?",
        (table,),
    )
    return {r["column_name"]: r["data_type"] for r in rows}


def _coerce(value: Any, target_type: str) -> Any:
    """SQLite keeps flags as 0/1; a PostgreSQL ``boolean`` column wants a bool. A NUL in
    text (an earlier development build's stash) becomes U+FFFD, as the guard writes it on
    both backends: PostgreSQL cannot store it, and the whole copy would fail on it."""
    if target_type == "boolean" and isinstance(value, int):
        return bool(value)
    if isinstance(value, str) and "\x00" in value and target_type in ("text", "jsonb", "json"):
        return value.replace("\x00", "\ufffd")
    return value


def _primary_key(tx: Transaction, table: str) -> list[str]:
    """The table's primary key columns, in key order: the copy pages by them."""
    if tx.dialect == "sqlite":
        rows = tx.query(f"PRAGMA table_info({quote(table)})")
        return [r["name"] for r in sorted(rows, key=lambda r: r["pk"]) if r["pk"]]
    rows = tx.query(
        "SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a"
        " ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
        " WHERE i.indrelid = to_regclass(?) AND i.indisprimary"
        " ORDER BY array_position(i.indkey::int2[], a.attnum)",
        (quote(table),),
    )
    return [r["name"] for r in rows]


OLDER_TASK_EVENTS = "type = 'task_state' AND status IS NULL"
"""Task events an earlier development build stored in a format this taskloom does not read
(a whole task or an array in ``data``, none of the event's task columns set)."""


def _earlier_build(tx: Transaction) -> bool:
    """Whether the database is an earlier development build's (``migrations.earlier_schema``)."""
    rows = tx.query("SELECT version, name FROM schema_migrations")
    ledger = {int(r["version"]): str(r["name"]) for r in rows}
    return migrations.earlier_schema(ledger, tx.dialect) is not None


def _insert_sql(dst: Transaction, table: str, columns: list[str]) -> str:
    names = ", ".join(quote(c) for c in columns)
    marks = ", ".join("?" for _ in columns)
    overriding = " OVERRIDING SYSTEM VALUE" if dst.dialect == "postgres" else ""
    return f"INSERT INTO {quote(table)} ({names}){overriding} VALUES ({marks})"


def _pages(src: Transaction, table: str, columns: list[str], keep: str) -> Iterator[list[Row]]:
    """The table's rows that match ``keep`` (an SQL condition), in primary key order, each
    page read from where the last one ended (keyset paging): with ``LIMIT … OFFSET`` and no
    order, PostgreSQL may start each page's scan elsewhere (synchronized scans of a large
    table), so pages overlap; an offset also re-reads every earlier row on each page.

    The first page is one row; each next one holds as many rows as the widest row of the
    page before fit in :data:`PAGE_BYTES`, at most :data:`BATCH`, and ends at a multiple of
    :data:`BATCH` rows at the latest, so progress counts round thousands."""
    key = _primary_key(src, table)
    if not key:
        raise InvalidInput(f"table '{table}' has no primary key: it cannot be copied in order")
    names = ", ".join(quote(c) for c in [*columns, *(k for k in key if k not in columns)])
    order = ", ".join(quote(c) for c in key)
    head = f"SELECT {names} FROM {quote(table)} WHERE ({keep})"
    after = f"({order}) > ({', '.join('?' for _ in key)})"
    page: list[Row] = src.query(f"{head} ORDER BY {order} LIMIT ?", (1,))
    read = 0
    while page:
        yield page
        read += len(page)
        widest = max(_bytes(row) for row in page)
        limit = max(1, min(BATCH - read % BATCH, PAGE_BYTES // max(widest, 1)))
        last = [page[-1][c] for c in key]
        page = src.query(f"{head} AND {after} ORDER BY {order} LIMIT ?", (*last, limit))


def _bytes(row: Row) -> int:
    """About the memory a row's text and byte values take (their lengths)."""
    return sum(len(v) for v in row.values() if isinstance(v, str | bytes | bytearray))


def _count(tx: Transaction, table: str, condition: str) -> int:
    row = tx.query_one(f"SELECT count(*) AS n FROM {quote(table)} WHERE {condition}")
    return int(row["n"]) if row else 0


def _copy_table(
    src: Transaction,
    dst: Transaction,
    table: str,
    dst_types: dict[str, str],
    progress: Progress,
    keep: str = "TRUE",
) -> int:
    """Copy the rows of ``table`` that match ``keep``; return how many."""
    total = _count(src, table, keep)
    columns = [c for c in _column_types(src, table) if c in dst_types]
    insert = _insert_sql(dst, table, columns)
    done = 0
    progress(table, 0, total)
    told = 0
    for page in _pages(src, table, columns, keep):
        for row in page:
            dst.execute(insert, [_coerce(row[c], dst_types[c]) for c in columns])
        done += len(page)
        if done - told >= BATCH or done == total:  # a line per BATCH rows, however paged
            progress(table, done, total)
            told = done
    if done != told:
        progress(table, done, total)
    return done


def _advance_sequences(dst: Transaction, table: str) -> None:
    rows = dst.query(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        " AND table_name = ? AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')",
        (table,),
    )
    for r in rows:
        col = quote(r["column_name"])
        dst.query(
            f"SELECT setval(pg_get_serial_sequence(?, ?), max({col})) AS v FROM {quote(table)}"
            f" HAVING max({col}) IS NOT NULL",
            (quote(table), r["column_name"]),
        )


@dataclass(frozen=True)
class Copied:
    """What :func:`copy_store` copied."""

    rows: dict[str, int]
    """Rows copied, per table."""
    source: str = ""
    """The source's URL, a password left out."""
    target: str = ""
    """The destination's URL, a password left out."""
    left_out: int = 0
    """Task events of an earlier development build in a format this taskloom does not read
    (:data:`OLDER_TASK_EVENTS`): each describes a past state of a task whose row is copied."""
    written_since: int = 0
    """Events the source gained while it was copied (writers still running): the changes they
    record are not in the destination, which holds the source as the copy began."""


def copy_database(source: str, target: str, progress: Progress) -> Copied:
    """Open the databases at ``source`` (as a copy source) and ``target``, copy the one into
    the other (:func:`copy_store`) and close both."""
    src, dst = open_store(source, copy_source=True), open_store(target)
    try:
        return copy_store(src, dst, progress)
    finally:
        src.close()
        dst.close()


def copy_store(src: Store, dst: Store, progress: Progress) -> Copied:
    """Copy every table of ``src`` into the empty ``dst``.

    ``src`` may be a database an earlier development build made, opened as a copy source
    (``open_store(url, copy_source=True)``): its tables are this build's, and its task events
    in an older format are left out."""
    if isinstance(src, SqliteStore) and not src.path.exists():
        # Reading a missing SQLite file sees an empty schema: a mistyped --from would "copy
        # 0 rows" and succeed.
        raise NotFound(f"the source database {src.path} does not exist")
    if isinstance(src, SqliteStore) and src.path.stat().st_size == 0:
        # The same with an empty file, which opening it would also have turned into a
        # database (the source is only read).
        raise InvalidInput(f"the source database {src.path} is an empty file: nothing to copy")
    if _same_database(src, dst):
        raise InvalidInput(f"the source and the destination are one database ({dst.url})")
    with src.read() as stx, dst.write() as dtx:
        older = _earlier_build(stx)
        head = newest_event_id(stx)
        dst_tables = set(tables(dtx))
        if dtx.dialect == "postgres":
            _lock(dtx, sorted(dst_tables))
        # The outbox goes last: copying tasks fires the destination's event triggers, and
        # those echoes are dropped before the source's own events are copied.
        order = sorted(tables(stx), key=lambda name: name == "events")
        for table in order:
            if table not in dst_tables:
                raise InvalidInput(f"the destination has no table '{table}'")
            if dtx.query_one(f"SELECT 1 AS one FROM {quote(table)} LIMIT 1"):
                raise Conflict(
                    f"the destination {dst.url} is not empty (table '{table}' has rows):"
                    " migrate-db copies into an empty database only"
                )
        copied: dict[str, int] = {}
        left_out = 0
        for table in order:
            keep = "TRUE"
            if table == "events":
                dtx.execute("DELETE FROM events")
                if older:
                    keep = f"NOT ({OLDER_TASK_EVENTS})"
                    left_out = _count(stx, table, OLDER_TASK_EVENTS)
            dst_types = _column_types(dtx, table)
            copied[table] = _copy_table(stx, dtx, table, dst_types, progress, keep)
            if dtx.dialect == "postgres":
                _advance_sequences(dtx, table)
        if stx.dialect == "postgres" and dtx.dialect == "postgres":
            _continue_event_ids(stx, dtx)
    with src.read() as stx:
        written = stx.query_one("SELECT count(*) AS n FROM events WHERE id > ?", (head,))
    written_since = int(written["n"]) if written else 0
    return Copied(copied, src.url, dst.url, left_out, written_since)


def _lock(dst: Transaction, names: list[str]) -> None:
    """Hold off every other writer of the PostgreSQL destination (readers go on) until the
    copy commits, before it is found empty: another copy then finds it not empty, and a
    writer already pointed at it (an agent, ``taskloom serve``) writes after the copied
    rows, rather than failing the copy on an id both drew or landing under it. (An SQLite
    destination's write transaction holds its file's write lock already.)"""
    if names:
        dst.execute(f"LOCK TABLE {', '.join(quote(n) for n in names)} IN EXCLUSIVE MODE")


def _same_database(src: Store, dst: Store) -> bool:
    """Whether both stores name one database: one SQLite file, however its path is spelt, or
    one PostgreSQL URL."""
    if isinstance(src, SqliteStore) and isinstance(dst, SqliteStore):
        return src.path.resolve() == dst.path.resolve()
    return src.url == dst.url


def _continue_event_ids(src: Transaction, dst: Transaction) -> None:
    """Start the destination's event ids where the source's sequence stands, past ids it
    drew for writes that rolled back: a browser resuming from the source's head (SSE's
    ``Last-Event-ID``) must see the next event. (SQLite's head is its largest id, which the
    copy carries over; an SQLite destination cannot be told to skip ids.)"""
    row = src.query_one("SELECT last_value AS v FROM events_id_seq WHERE is_called")
    if row is not None:
        dst.query(
            "SELECT setval(pg_get_serial_sequence('events', 'id'), ?) AS v"
            " WHERE ? > (SELECT COALESCE(max(id), 0) FROM events)",
            (row["v"], row["v"]),
        )
