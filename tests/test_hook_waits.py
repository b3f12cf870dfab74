"""A coding agent's hook holds the user's prompt: whatever holds or refuses the database, it
answers at once, and an error is one line on stderr with exit 1, nothing for the agent."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import taskloom
from taskloom.cli import main
from taskloom.store.outbox import META_KIND
from taskloom.store.retention import POLICY_KEY


@contextlib.contextmanager
def raw(db_url: str, backend: str) -> Iterator[Any]:
    """A connection of the test's own to the database, outside taskloom, in autocommit."""
    if backend == "sqlite":
        conn = sqlite3.connect(db_url.removeprefix("sqlite:///"), isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()
    else:
        with psycopg.connect(db_url, autocommit=True) as pg:
            yield pg


@contextlib.contextmanager
def writes_held(db_url: str, backend: str) -> Iterator[None]:
    """Another process's write transaction holds what the cursor write needs, reads allowed:
    SQLite's write lock, or on PostgreSQL the cursors' table."""
    with raw(db_url, backend) as conn:
        conn.execute("BEGIN IMMEDIATE" if backend == "sqlite" else "BEGIN")
        if backend == "postgres":
            conn.execute("LOCK TABLE agent_cursors IN EXCLUSIVE MODE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")


def prompt(capsys: pytest.CaptureFixture[str], db_url: str) -> tuple[int, str, str]:
    code = main(["hook", "prompt", "--agent", "a", "--db", db_url])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_prompt_hook_shows_its_block_while_another_process_holds_the_write_lock(
    db_url: str, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """It waited out the whole busy timeout (10 s) on its cursor write, then printed only an
    error: the block is shown, and the cursor left as it was, so the next prompt shows it
    again (the worst case of a lock not had at once)."""
    with taskloom.connect(db_url) as tl:
        tl.queue.add("Review PR 12")
    with writes_held(db_url, backend):
        code, out, err = prompt(capsys, db_url)
        assert (code, err) == (0, "")
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert "Review PR 12" in context
        assert main(["hook", "session-start", "--agent", "a", "--db", db_url]) == 0
        assert "1 task ready" in capsys.readouterr().out
    code, out, _ = prompt(capsys, db_url)
    assert code == 0 and "Review PR 12" in out  # not recorded as seen: shown again
    assert prompt(capsys, db_url) == (0, "", "")  # recorded now


def test_the_cursor_write_leaves_the_event_retention_to_the_writers(
    db_url: str, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A process's first commit applies the database's event retention: a prompt hook's
    cursor write, a commit of its own in a new process on every prompt, ran a second write
    transaction to prune events it never appends."""
    with taskloom.connect(db_url) as tl:
        tl.queue.add_many([{"title": f"task {i}"} for i in range(3)])
    count = "SELECT count(*) FROM events"
    with raw(db_url, backend) as conn:
        events = conn.execute(count).fetchone()
        conn.execute(  # keep one event: a write that applies it now prunes the others
            "INSERT INTO documents (kind, key, version, state, updated_at)"
            f" VALUES ('{META_KIND}', '{POLICY_KEY}', 1, '{{\"keep\": 1}}', '2026-01-01')"
        )
    code, out, _ = prompt(capsys, db_url)
    assert code == 0 and "task 0" in out
    with raw(db_url, backend) as conn:
        assert conn.execute(count).fetchone() == events
