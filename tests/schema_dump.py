"""A database's schema as comparable text, and databases built from migration files, for the
tests of the one schema and of databases made by earlier development builds.

The earlier builds' migration files are kept under ``tests/fixtures/earlier_builds/``, one
folder per build line (named after the file its ledgers begin with): a real database of such a
build is made from them, as that build made it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg

from taskloom.store.sqlite import _split_statements

EARLIER_BUILDS = Path(__file__).parent / "fixtures" / "earlier_builds"
INITIAL = Path(__file__).parents[1] / "src" / "taskloom" / "store" / "migrations"


def earlier_files(dialect: str, after: int = 0, upto: int = 9999, line: str = "core") -> list[Path]:
    """An earlier build's migration files of ``dialect``, in order, numbered past ``after``
    up to ``upto``; ``line``: the build line (``core``, ``initial``)."""
    files = sorted((EARLIER_BUILDS / line / dialect).glob("*.sql"))
    return [f for f in files if after < int(f.name[:4]) <= upto]


def initial_files(dialect: str) -> list[Path]:
    return sorted((INITIAL / dialect).glob("*.sql"))


LEDGER = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
)
"""The migrations ledger, as every taskloom build creates it."""


def build(url: str, files: list[Path]) -> None:
    """Apply ``files`` in order to the database at ``url`` and record each in its ledger, as
    a taskloom build does."""
    if url.startswith("sqlite:///"):
        build_sqlite(Path(url.removeprefix("sqlite:///")), files)
    else:
        build_postgres(url, files)


def execute(url: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run one statement (``?`` placeholders) on the database at ``url``; its rows."""
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()
    with psycopg.connect(url, autocommit=True) as pg:
        cur = pg.execute(sql.replace("?", "%s"), params)
        return cur.fetchall() if cur.description else []


def schema(url: str) -> dict[str, Any]:
    """The schema of the database at ``url`` (:func:`sqlite_schema`, :func:`postgres_schema`)."""
    if url.startswith("sqlite:///"):
        return sqlite_schema(Path(url.removeprefix("sqlite:///")))
    return postgres_schema(url)


def build_sqlite(path: Path, files: list[Path]) -> None:
    """:func:`build` for a SQLite file."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(LEDGER)
        for file in files:
            for statement in _split_statements(file.read_text()):
                conn.execute(statement)
            record = (int(file.name[:4]), file.name)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", record)
        conn.execute("COMMIT")
    finally:
        conn.close()


def build_postgres(url: str, files: list[Path]) -> None:
    """:func:`build` for the PostgreSQL schema ``url``'s search_path names."""
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute(LEDGER)
        for file in files:
            conn.execute(file.read_text().encode())
            conn.execute(
                "INSERT INTO schema_migrations VALUES (%s, %s)", (int(file.name[:4]), file.name)
            )


def _words(sql: str | None) -> str:
    """SQL text with its comments, quotes around names and layout taken out."""
    text = re.sub(r"--[^\n]*", "", sql or "")
    text = re.sub(r'"(\w+)"', r"\1", text)
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"\s*([(),;])\s*", r"\1", text)


def sqlite_schema(path: Path) -> dict[str, Any]:
    """Every table's columns, keys and indexes, and every index, trigger and view's SQL."""
    conn = sqlite3.connect(path)
    try:
        out: dict[str, Any] = {}
        objects = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master"
            " WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name"
        ).fetchall()
        for kind, name, table, sql in objects:
            if kind == "table":
                out[f"table {name}"] = {
                    "sql": _words(sql),
                    "columns": conn.execute(f"PRAGMA table_xinfo({name})").fetchall(),
                    "indexes": sorted(  # by name: the list's own order is creation order
                        (row[1:], conn.execute(f"PRAGMA index_xinfo({row[1]})").fetchall())
                        for row in conn.execute(f"PRAGMA index_list({name})")
                    ),
                    "foreign keys": conn.execute(f"PRAGMA foreign_key_list({name})").fetchall(),
                    "without rowid": "WITHOUT ROWID" in sql.upper(),
                    "autoincrement": "AUTOINCREMENT" in sql.upper(),
                }
            else:
                out[f"{kind} {name}"] = (table, _words(sql))
        return out
    finally:
        conn.close()


_PG_QUERIES = {
    "columns": (
        "SELECT table_name, ordinal_position, column_name, data_type, is_nullable,"
        " column_default, collation_name, is_identity, identity_generation"
        " FROM information_schema.columns WHERE table_schema = current_schema()"
        " ORDER BY table_name, ordinal_position"
    ),
    "constraints": (
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)"
        " FROM pg_constraint WHERE connamespace = current_schema()::regnamespace ORDER BY 1, 2"
    ),
    "indexes": (
        "SELECT tablename, indexname, indexdef FROM pg_indexes"
        " WHERE schemaname = current_schema() ORDER BY 1, 2"
    ),
    "triggers": (
        "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger"
        " WHERE NOT tgisinternal AND tgrelid IN (SELECT oid FROM pg_class"
        " WHERE relnamespace = current_schema()::regnamespace) ORDER BY 1, 2"
    ),
    "functions": (
        "SELECT proname, pg_get_function_identity_arguments(oid),"
        " pg_get_function_result(oid), provolatile,"
        " (SELECT lanname FROM pg_language WHERE oid = prolang), prosrc"
        " FROM pg_proc WHERE pronamespace = current_schema()::regnamespace ORDER BY 1"
    ),
    "sequences": (
        "SELECT sequencename, data_type::text, start_value, increment_by, max_value"
        " FROM pg_sequences WHERE schemaname = current_schema() ORDER BY 1"
    ),
    "relations": (
        "SELECT relname, relkind FROM pg_class"
        " WHERE relnamespace = current_schema()::regnamespace ORDER BY 1"
    ),
}


def postgres_schema(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Columns, constraints, indexes, triggers, functions, sequences and relations of the
    schema ``url`` names (its name taken out, so two schemas compare)."""
    with psycopg.connect(url, autocommit=True) as conn:
        schema = str((conn.execute("SELECT current_schema()").fetchone() or ("",))[0])
        out = {}
        for what, query in _PG_QUERIES.items():
            rows = conn.execute(query).fetchall()
            out[what] = [
                tuple(_words(v.replace(f"{schema}.", "")) if isinstance(v, str) else v for v in row)
                for row in rows
            ]
        return out
