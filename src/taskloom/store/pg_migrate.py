"""PostgreSQL's migrations: the schema's ledger read, the migrations it lacks applied under
an advisory lock, and a schema holding another application's tables refused."""

from __future__ import annotations

from typing import Any

import psycopg

from taskloom.store import migrations

MIGRATE_LOCK = 0x746C0001
"""The advisory lock class (first int of the two-int form) migrations take; the second int
is the schema's hash."""


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
        columns = [
            str(r["attname"])
            for r in conn.execute(
                "SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid ="
                " to_regclass(format('%I.schema_migrations', current_schema()))"
                " AND attnum > 0 AND NOT attisdropped ORDER BY attnum"
            )
        ]
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


def migrate(
    conn: psycopg.Connection[Any], schema_hash: int, url: str, *, copy_source: bool = False
) -> None:
    """Apply the migrations this schema lacks (see :func:`migrations.pending`), under a lock.
    A schema already up to date is only read, so a role allowed to read and write rows, but
    not to create tables, can use a schema its owner set up."""
    _refuse_foreign(conn, url)
    where = f"the database {url}"

    def pending() -> list[tuple[int, str, str]]:
        row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL AS t").fetchone()
        ledger: list[Any] = conn.execute(_HISTORY).fetchall() if row and row["t"] else []
        applied = {r["version"]: r["name"] for r in ledger}
        return migrations.pending(applied, "postgres", where, url, copy_source=copy_source)

    if not pending():
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (MIGRATE_LOCK, schema_hash))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations"
            " (version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
        )
        for number, name, script in pending():
            conn.execute(script.encode())
            conn.execute("INSERT INTO schema_migrations VALUES (%s, %s)", (number, name))
