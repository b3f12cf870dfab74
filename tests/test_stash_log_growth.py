"""Work that must not grow with a thread's stash log: a turn's placements and why a result is
gone read that call's or result's lines, not every line the thread has logged. Measured in
what the database does (SQLite's virtual-machine steps, PostgreSQL's rows read), never in
time."""

from __future__ import annotations

from pathlib import Path

import pytest

import taskloom
from taskloom.guard import TurnResult
from taskloom.store import stash as sql
from tests.backends import rows_read_sql, vm_steps

THREAD = "long-conversation"


def _with_log(url: str, calls: int) -> taskloom.Taskloom:
    """A thread whose stash log holds a placement for each of ``calls`` tool calls."""
    tl = taskloom.connect(url)
    guard = tl.guard(THREAD)
    for start in range(0, calls, 500):
        batch = range(start, min(calls, start + 500))
        guard.wrap_turn([TurnResult(f"call-{i}", "grep", "ok") for i in batch])
    return tl


def _lookups(tl: taskloom.Taskloom) -> None:
    with tl.store.read() as tx:
        assert sql.placements(tx, THREAD, ["call-0", "call-new"]).keys() == {"call-0"}
        assert sql.last_event(tx, THREAD, "r_unknown") is None


def _sqlite_steps(path: Path, calls: int) -> int:
    """SQLite's virtual-machine steps (in thousands) of the two lookups."""
    tl = _with_log(f"sqlite:///{path}", calls)
    with tl.store.read() as tx:
        conn = tx.conn  # type: ignore[attr-defined]
    try:
        with vm_steps(conn) as steps:
            _lookups(tl)
    finally:
        tl.close()
    return steps[0]


def test_a_turns_placements_on_sqlite_read_its_calls_lines_not_the_threads_whole_log(
    tmp_path: Path,
) -> None:
    small = _sqlite_steps(tmp_path / "small.db", 50)
    large = _sqlite_steps(tmp_path / "large.db", 5_000)
    assert large <= small + 2, (small, large)


@pytest.mark.postgres
def test_a_turns_placements_on_postgres_read_its_calls_lines_not_the_threads_whole_log(
    pg_url: str,
) -> None:
    calls = 5_000
    with _with_log(pg_url, calls) as tl, tl.store.write() as tx:
        tx.execute("ANALYZE stash_log")
    # A new connection: one's statistics of earlier transactions may not be flushed yet.
    with taskloom.connect(pg_url) as tl, tl.store.read() as tx:
        assert sql.placements(tx, THREAD, ["call-0", "call-new"]).keys() == {"call-0"}
        assert sql.last_event(tx, THREAD, "r_unknown") is None
        read = tx.query_one(rows_read_sql("stash_log"))
    assert read is not None and read["n"] < calls // 10, read
