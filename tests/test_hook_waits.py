"""A coding agent's hook holds the user's prompt: whatever holds or refuses the database, it
answers at once, and an error is one line on stderr with exit 1, nothing for the agent."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import taskloom
from taskloom.cli import main
from taskloom.store import migrations
from taskloom.store.outbox import META_KIND
from taskloom.store.pg_migrate import MIGRATE_LOCK
from taskloom.store.retention import POLICY_KEY
from tests.backends import needed_pg_server, pg_schema
from tests.conftest import subprocess_env
from tests.test_serve_hardening import read_only


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


def test_a_prompt_hook_whose_output_cannot_be_written_does_not_wait_to_unsee_it(
    db_url: str, backend: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its stdout closed the hook forgets the block it could not deliver: that write
    waited the whole busy timeout (10 s) for a lock another process held, then said
    "database is locked" instead of why the hook failed."""
    with taskloom.connect(db_url) as tl:
        tl.queue.add("Review PR 12")
    monkeypatch.setattr(sys, "stdout", None)
    with writes_held(db_url, backend):
        code = main(["hook", "prompt", "--agent", "a", "--db", db_url])
    monkeypatch.undo()
    assert (code, capsys.readouterr().err) == (
        1,
        "Error: cannot write the output: standard output is closed\n",
    )


@contextlib.contextmanager
def migration_held(db_url: str, backend: str) -> Iterator[None]:
    """Another process holds the lock a migration takes: SQLite's write lock, or on
    PostgreSQL the schema's migration lock."""
    if backend == "sqlite":
        with writes_held(db_url, backend):
            yield
        return
    with raw(db_url, backend) as conn:
        conn.execute("BEGIN")
        conn.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(current_schema()))", (MIGRATE_LOCK,)
        )
        try:
            yield
        finally:
            conn.execute("ROLLBACK")


def test_hooks_on_a_database_whose_migration_another_process_holds_up_print_nothing(
    db_url: str, backend: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an upgrade the hook's first read migrates the database: it waited the whole
    busy timeout (10 s) for another process's lock, then exited 1. It waits as long as its
    cursor write, then prints nothing, exits 0 and says why on stderr; the next prompt
    migrates."""
    with taskloom.connect(db_url) as tl:
        tl.queue.add("Review PR 12")
    known = migrations.load
    upgrade = (9999, "9999_hook_probe.sql", "CREATE TABLE hook_probe (id INTEGER);")
    monkeypatch.setattr(migrations, "load", lambda dialect: [*known(dialect), upgrade])
    with migration_held(db_url, backend):
        for hook in ("prompt", "session-start"):
            code = main(["hook", hook, "--agent", "a", "--db", db_url])
            out, err = capsys.readouterr()
            assert (code, out) == (0, ""), hook
            assert err.startswith("note: the database ") and err.count("\n") == 1, err
            assert "needs a schema migration" in err and "printed nothing" in err
    code, out, err = prompt(capsys, db_url)
    assert (code, err) == (0, "") and "Review PR 12" in out
    with raw(db_url, backend) as conn:
        assert conn.execute("SELECT count(*) FROM hook_probe").fetchone() == (0,)


HOLD_READERS_OUT = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("UPDATE tasks SET priority = priority")
conn.execute("COMMIT")
print("held", flush=True)
time.sleep(60)
"""


@contextlib.contextmanager
def readers_held(db_url: str, backend: str) -> Iterator[None]:
    """Another process holds even readers out: SQLite's exclusive locking mode (another
    program's, or the last connection's checkpoint), or on PostgreSQL a lock on the whole
    tasks table (a newer taskloom's migration, ``VACUUM FULL``)."""
    if backend == "postgres":
        with raw(db_url, backend) as conn:
            conn.execute("BEGIN")
            conn.execute("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE")
            try:
                yield
            finally:
                conn.execute("ROLLBACK")
        return
    path = db_url.removeprefix("sqlite:///")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_READERS_OUT, path], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.kill()
        holder.wait()


def timed_hook(hook: str, db_url: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The hook as the agent runs it, in a process of its own, and how long it took."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "taskloom", "hook", hook, "--agent", "a", "--db", db_url],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    return done, time.monotonic() - start


def test_hooks_on_a_database_another_process_holds_readers_out_of_print_nothing_soon(
    db_url: str, backend: str
) -> None:
    """The hook kept the user's prompt waiting the whole busy or lock timeout (10 s) as it
    read, then printed only a note. It waits as long as its cursor write, then prints
    nothing, exits 0 and says why; the next prompt tries again."""
    with taskloom.connect(db_url) as tl:
        tl.queue.add("Review PR 12")
    with readers_held(db_url, backend):
        for hook in ("prompt", "session-start"):
            done, took = timed_hook(hook, db_url)
            assert (done.returncode, done.stdout) == (0, ""), done.stderr
            assert done.stderr.startswith("note: database is busy"), done.stderr
            assert "printed nothing" in done.stderr and done.stderr.count("\n") == 1
            assert took < 5, f"{hook} held the prompt {took:.1f} s"
    done, _ = timed_hook("prompt", db_url)
    assert done.returncode == 0 and "Review PR 12" in done.stdout


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


def test_a_prompt_hook_on_a_database_it_cannot_write_says_which(
    db_url: str, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "database error: attempt to write a readonly database", naming no database.
    The session-start hook only reads, and answers."""
    with taskloom.connect(db_url) as tl:
        tl.queue.add("Review PR 12")
    with read_only(db_url, backend) as url:
        code, out, err = prompt(capsys, url)
        assert (code, out) == (1, "")
        shown = url.removeprefix("sqlite:///")
        assert err.startswith(f"Error: cannot write the database {shown}: "), err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert main(["hook", "session-start", "--agent", "a", "--db", url]) == 0
        assert "1 task ready" in capsys.readouterr().out


def test_hooks_on_a_corrupt_file_say_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "q.db"
    path.write_bytes(bytes(range(256)) * 64)
    for hook in ("prompt", "session-start"):
        code = main(["hook", hook, "--agent", "a", "--db", f"sqlite:///{path}"])
        out, err = capsys.readouterr()
        assert (code, out) == (1, "")
        assert err == f"Error: cannot open the database {path}: file is not a database\n"


def test_hooks_on_a_postgresql_server_that_refuses_the_connection_fail_at_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket_closed() as port:
        url = f"postgresql://taskloom@127.0.0.1:{port}/taskloom"
        for hook in ("prompt", "session-start"):
            code = main(["hook", hook, "--agent", "a", "--db", url])
            out, err = capsys.readouterr()
            assert (code, out) == (1, "")
            assert err.startswith(f"Error: cannot connect to {url}: ") and "refused" in err
            assert err.count("\n") == 1


@contextlib.contextmanager
def socket_closed() -> Iterator[int]:
    """A local port nothing listens on."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        yield probe.getsockname()[1]


PROBE = """
import sys, threading
import psycopg
opened = []
connect = psycopg.Connection.connect
def counted(*args, **kwargs):
    opened.append(1)
    return connect(*args, **kwargs)
psycopg.connect = counted
psycopg.Connection.connect = staticmethod(counted)
from taskloom.cli import main
code = main(sys.argv[1:])
print(code, len(opened), "psycopg_pool" in sys.modules, threading.active_count())
"""


@pytest.mark.postgres
def test_a_hook_on_postgresql_opens_one_plain_connection() -> None:
    """A hook is a process that makes a call or two: it opened a connection to check the
    URL, then a pool (imported, with its worker threads) and the pool's own connection."""
    with pg_schema(needed_pg_server()) as db_url:
        with taskloom.connect(db_url) as tl:
            tl.queue.add("Review PR 12")
        for hook in ("prompt", "session-start"):
            assert hook_process(hook, db_url) == "0 1 False 1", hook


def hook_process(hook: str, db_url: str) -> str:
    """What :data:`PROBE` prints after running the hook: its exit status, how many
    connections it opened, whether the pool was imported, how many threads run."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "hook", hook, "--agent", "a", "--db", db_url],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert done.stderr == ""
    return done.stdout.splitlines()[-1]
