"""PostgreSQL's migrations: the schema's ledger read, the migrations it lacks applied under
an advisory lock, and a schema holding another application's tables refused."""

from __future__ import annotations

from typing import Any

import psycopg

from taskloom.domain.errors import StoreError
from taskloom.store import migrations
from taskloom.store.pg_url import first_search_path_schema

MIGRATE_LOCK = 0x746C0001
"""The advisory lock class (first int of the two-int form) migrations take; the second int
is the schema's hash."""


_LEDGER_COLUMNS = (
    "SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid ="
    " to_regclass(format('%I.schema_migrations', current_schema()))"
    " AND attnum > 0 AND NOT attisdropped ORDER BY attnum"
)
"""The columns of the current schema's ``schema_migrations``, in order (none: no such table)."""


def _refuse_foreign(conn: psycopg.Connection[Any], name: str) -> None:
    """Refuse a schema that holds tables but no taskloom ledger (a framework's
    ``schema_migrations`` is not one): another application's, which taskloom's tables must
    not join. Read from the catalog, which shows every table; the information schema shows
    only those the role has a privilege on."""
    tables = [
        str(r["relname"])
        for r in conn.execute(
            "SELECT relname FROM pg_catalog.pg_class WHERE relnamespace = (SELECT oid FROM"
            " pg_catalog.pg_namespace WHERE nspname = current_schema())"  # not ::regnamespace,
            " AND relkind IN ('r', 'p', 'v', 'm', 'f')"  # which folds "TeamB" to teamb
            " ORDER BY relname"
        )
    ]
    if not tables:
        return
    if "schema_migrations" in tables:
        columns = [str(r["attname"]) for r in conn.execute(_LEDGER_COLUMNS)]
        rows = []
        if columns == ["version", "name"]:
            rows = [(r["version"], r["name"]) for r in conn.execute(_HISTORY)]
        if migrations.is_taskloom_history(columns, rows):
            return
    schema = conn.execute("SELECT current_schema() AS s").fetchone()
    where = f"the schema {schema['s'] if schema else '?'} of {name}"
    migrations.refuse_foreign(
        tables, where, "use another database, or another schema (search_path in the URL)"
    )


_HISTORY = "SELECT version, name FROM schema_migrations"


def resolve_schema(conn: psycopg.Connection[Any]) -> tuple[str, int]:
    """The schema taskloom uses (the search_path's first) and its hash. A first schema that
    does not exist, or that this role may not use, is refused: PostgreSQL would skip it and
    put the tables in the next one without a word."""
    row = conn.execute(
        "SELECT current_schema() AS s, hashtext(current_schema()) AS h,"
        " current_setting('search_path') AS path"
    ).fetchone()
    if row is None or row["s"] is None:
        path = row["path"] if row else "?"
        raise StoreError(
            f"no schema: the URL's search_path ({path}) names none that exists, or none"
            " this role may use (it needs USAGE on the schema): create it (CREATE SCHEMA …)"
            " or correct the URL"
        )
    named = first_search_path_schema(row["path"])
    if named is not None and named != row["s"] and not named.startswith("pg_"):
        raise StoreError(
            f"the search_path's first schema, {named!r}, does not exist or this"
            f" role may not use it: taskloom would use {row['s']!r} instead."
            f" Create it (CREATE SCHEMA …) or correct the URL"
        )
    return str(row["s"]), int(row["h"])


def has_ledger(conn: psycopg.Connection[Any]) -> bool:
    """Whether the current schema holds a ``schema_migrations`` table: taskloom's, or
    another application's, which :func:`migrate` then refuses."""
    row = conn.execute(
        "SELECT to_regclass(format('%I.schema_migrations', current_schema())) IS NOT NULL AS t"
    ).fetchone()
    return bool(row and row["t"])


def _up_to_date(conn: psycopg.Connection[Any], where: str, url: str, copy_source: bool) -> bool:
    """Whether the schema holds taskloom's ledger with every migration applied, in two
    statements: the usual case, on every process's first call. ``False`` leaves the answer
    to :func:`migrate`'s full look (another application's tables, migrations to apply); a
    ledger that an earlier or a newer taskloom wrote is refused here as there."""
    columns = [str(r["attname"]) for r in conn.execute(_LEDGER_COLUMNS)]
    if columns != ["version", "name"]:
        return False
    rows = [(r["version"], r["name"]) for r in conn.execute(_HISTORY)]
    if not rows or not migrations.is_taskloom_history(columns, rows):
        return False
    return not migrations.pending(dict(rows), "postgres", where, url, copy_source=copy_source)


def migrate(
    conn: psycopg.Connection[Any],
    schema_hash: int,
    url: str,
    *,
    copy_source: bool = False,
    wait_s: float | None = None,
) -> None:
    """Apply the migrations this schema lacks (see :func:`migrations.pending`), under a lock
    that it waits for as any write does, or at most ``wait_s``, past which it raises
    ``StoreBusy``. A schema already up to date is only read, so a role allowed to read and
    write rows, but not to create tables, can use a schema its owner set up."""
    where = f"the database {url}"
    if _up_to_date(conn, where, url, copy_source):
        return
    _refuse_foreign(conn, url)

    def pending() -> list[tuple[int, str, str]]:
        row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL AS t").fetchone()
        ledger: list[Any] = conn.execute(_HISTORY).fetchall() if row and row["t"] else []
        applied = {r["version"]: r["name"] for r in ledger}
        return migrations.pending(applied, "postgres", where, url, copy_source=copy_source)

    if not pending():
        return
    with conn.transaction():
        if wait_s is not None:
            conn.execute(f"SET LOCAL lock_timeout = '{max(1, round(wait_s * 1000))}ms'")
        try:
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (MIGRATE_LOCK, schema_hash))
        except psycopg.errors.LockNotAvailable as exc:
            if wait_s is None:
                raise
            raise migrations.held_up(where, wait_s) from exc
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations"
            " (version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
        )
        for number, name, script in pending():
            conn.execute(script.encode())
            conn.execute("INSERT INTO schema_migrations VALUES (%s, %s)", (number, name))
