"""A database without taskloom's tables, on both backends: what only looks at it answers as
an empty database and leaves it as it was (no SQLite file made, no PostgreSQL table made);
the first write makes it. On PostgreSQL this is a database name that exists but was never
used by taskloom (a mistyped name, libpq's default database)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

import taskloom
from taskloom.cli import main
from tests.backends import needed_pg_server, pg_schema, with_schema
from tests.test_serve_hardening import read_only


def _made(url: str) -> bool:
    """Whether anything exists at ``url``: the SQLite file, or a table in the schema."""
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///")).exists()
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_catalog.pg_class WHERE relnamespace ="
            " (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = current_schema())"
        ).fetchone()
    return row != (0,)


def test_reads_of_a_database_without_tables_answer_empty_and_make_nothing(
    fresh_url: Callable[[str], str],
) -> None:
    url = fresh_url("never.db")
    with taskloom.connect(url) as tl:
        assert tl.store.exists() is False
        assert tl.queue.list() == []
        assert tl.queue.stats()["total"] == 0
        assert tl.queue.claim("w") is None
        assert tl.board("t1").list()["cards"] == []
        assert tl.guard("t1").results() == []
        with tl.store.read() as tx:
            assert tx.events_after(0) == [] and tx.event_head() == 0
        assert tl.store.exists() is False
    assert not _made(url)
    with taskloom.connect(url) as tl:
        task, _ = tl.queue.add("first")
        assert tl.store.exists() is True
        assert [t.id for t in tl.queue.list()] == [task.id]
    assert _made(url)


@pytest.mark.parametrize("command", [["doctor"], ["goal", "show", "t1"], ["tasks", "show", "x"]])
def test_a_command_on_what_a_database_holds_refuses_one_without_tables(
    fresh_url: Callable[[str], str], capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    url = fresh_url("never.db")
    assert main([*command, "--db", url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: no taskloom database at ") and err.count("\n") == 1
    assert not _made(url)


def test_a_listing_of_a_database_without_tables_is_empty_with_a_note(
    fresh_url: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    url = fresh_url("never.db")
    assert main(["tasks", "list", "--db", url]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "(no tasks)"
    assert err.startswith("note: no taskloom database at ")
    assert not _made(url)


def test_a_postgres_session_that_may_not_write_is_refused_before_the_first_write() -> None:
    """``serve``, ``mcp`` and ``tasks work`` check that writes would work when they start
    (:meth:`Store.check_writable`), before the database has taskloom's tables too."""
    with pg_schema(needed_pg_server()) as fresh, read_only(fresh, "postgres") as url:
        with taskloom.connect(url) as tl:
            assert tl.store.exists() is False
            with pytest.raises(taskloom.StoreError, match="read-only transaction"):
                tl.store.check_writable()
        assert not _made(url)


def test_a_postgres_search_path_naming_no_schema_that_exists_is_named_in_the_error() -> None:
    url = with_schema(needed_pg_server(), "tl_no_such_schema_here")
    with taskloom.connect(url) as tl, pytest.raises(taskloom.StoreError) as caught:
        tl.queue.list()
    assert "search_path (tl_no_such_schema_here) names none that exists" in str(caught.value)
