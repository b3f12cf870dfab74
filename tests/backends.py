"""The backends the conformance suite runs on, and how each test gets an isolated database.

SQLite: a fresh file under ``tmp_path``. PostgreSQL: a fresh schema on the server named by
``TASKLOOM_TEST_PG`` (or the one answering on the default local socket), selected through
``options=-csearch_path=…`` in the URL and dropped after the test, so tests (and several
people's test runs) can share one server without seeing each other's rows.

When no server answers, the PostgreSQL half is skipped with a loud reason, unless
``TASKLOOM_REQUIRE_PG=1`` or ``CI=true``: then a missing server fails the run.
"""

from __future__ import annotations

import contextlib
import functools
import os
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import psycopg
import pytest
from psycopg import sql

from taskloom.store.pg_url import join_url

PG_ENV = "TASKLOOM_TEST_PG"
FALLBACK_URLS = ("postgresql:///postgres", "postgresql://postgres@/postgres")


def pg_required() -> bool:
    return os.environ.get("TASKLOOM_REQUIRE_PG") == "1" or os.environ.get("CI") == "true"


@functools.cache
def pg_server() -> tuple[str | None, str]:
    """``(url, "")`` for a reachable server, else ``(None, why it was not found)``."""
    named = os.environ.get(PG_ENV)
    candidates = (named,) if named else FALLBACK_URLS
    errors = []
    for url in candidates:
        try:
            with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
                conn.execute("SELECT 1")
            return url, ""
        except psycopg.Error as exc:
            errors.append(f"{url}: {str(exc).strip().splitlines()[0]}")
    where = f"{PG_ENV}={named}" if named else f"{PG_ENV} unset and no local server"
    return None, f"PostgreSQL half SKIPPED ({where}): " + "; ".join(errors)


def needed_pg_server() -> str:
    """The reachable server's URL; without one the test is skipped, or fails where
    PostgreSQL is required (:func:`pg_required`)."""
    server, why = pg_server()
    if server is None:
        if pg_required():
            pytest.fail(why + " (TASKLOOM_REQUIRE_PG=1 or CI=true makes this a failure)")
        pytest.skip(why)
    return server


def with_schema(url: str, schema: str) -> str:
    """``url`` with ``search_path`` set to ``schema`` (keeping any other libpq options)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    options = " ".join([v for k, v in query if k == "options"] + [f"-csearch_path={schema}"])
    query = [(k, v) for k, v in query if k != "options"] + [("options", options)]
    return join_url(parts._replace(query=urlencode(query, quote_via=quote)))


@contextlib.contextmanager
def pg_schema(server: str) -> Iterator[str]:
    """A fresh schema for one test; yields a taskloom URL that lives in it."""
    schema = f"tl_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield with_schema(server, schema)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def terminate_app(server: str, application_name: str) -> None:
    """Close, server side, every connection of ``application_name`` (a pool the test named)."""
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (application_name,),
        )


@contextlib.contextmanager
def vm_steps(conn: Any) -> Iterator[list[int]]:
    """SQLite's virtual-machine steps, in thousands, that the ``sqlite3`` connection ``conn``
    runs within the block: ``steps[0]`` once it ends. They grow with the rows a statement
    reads, whatever the machine's speed."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(count, 1000)
    try:
        yield steps
    finally:
        conn.set_progress_handler(None, 0)


def rows_read_sql(table: str) -> str:
    """A query of the rows of ``table`` that this PostgreSQL transaction has read so far
    (one row, ``n``)."""
    return (
        "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n"
        f" FROM pg_stat_xact_user_tables WHERE relid = '{table}'::regclass"
    )
