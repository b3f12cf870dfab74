"""``taskloom migrate-db``: an SQLite database moved to each backend arrives whole."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from taskloom.domain.events import Event
from taskloom.store.copy import tables


def fill(url: str) -> dict[str, object]:
    with taskloom.connect(url) as tl:
        for thread in ("a", "b"):
            board = tl.board(thread)
            cid = board.add("first", plan=["x"])["card"]["id"]
            board.update_status(cid, "in_progress")
            board.add("second")
        task, _ = tl.queue.add("ship it", payload={"n": 1})
        held = tl.queue.claim("w")
        assert held is not None
        tl.queue.done(task.id, held.lease_token or "", "shipped")
        with tl.store.read() as tx:
            events = [e.to_dict() for e in tx.events_after(0)]
        return {"a": tl.board("a").list(), "b": tl.board("b").list(), "events": events}


def test_migrate_db_copies_everything(
    sqlite_url: str, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = sqlite_url.replace("taskloom.db", "source.db")
    before = fill(source)
    assert main(["migrate-db", "--from", source, "--to", db_url]) == 0
    captured = capsys.readouterr()
    assert "events: 9/9 rows" in captured.err and "copied" in captured.out
    with taskloom.connect(db_url) as tl:
        assert tl.board("a").list() == before["a"]
        assert tl.board("b").list() == before["b"]
        with tl.store.read() as tx:
            assert [e.to_dict() for e in tx.events_after(0)] == before["events"]
            assert set(tables(tx)) >= {"documents", "events"}
        snap = tl.board("a").add("after the move")
        with tl.store.read() as tx:
            newest = tx.events_after(9)
    assert [e.id for e in newest] == [10]  # the id sequence continues past the copied ids
    assert newest[0].data["version"] == snap["version"]


def test_event_ids_go_on_where_the_sources_would(
    fresh_url: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Even past ids the source drew for writes that rolled back (PostgreSQL's sequence):
    a browser resuming from the source's head must see the next event."""
    source, target = fresh_url("source.db"), fresh_url("target.db")
    fill(source)
    with taskloom.connect(source) as tl, pytest.raises(RuntimeError), tl.store.write() as tx:
        tx.append_event(Event("todo_state", "a", {}))
        raise RuntimeError("rolled back")
    assert main(["migrate-db", "--from", source, "--to", target]) == 0
    capsys.readouterr()
    ids = []
    for url in (source, target):
        with taskloom.connect(url) as tl:
            tl.board("a").add("after the move")
            with tl.store.read() as tx:
                ids.append(tx.events_after(0)[-1].id)
    assert ids[0] == ids[1]


def test_migrate_db_copies_back_into_sqlite(
    db_url: str, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Either backend moves into a new SQLite file."""
    before = fill(db_url)
    target = sqlite_url.replace("taskloom.db", "back.db")
    assert main(["migrate-db", "--from", db_url, "--to", target]) == 0
    capsys.readouterr()
    with taskloom.connect(target) as tl:
        assert tl.board("a").list() == before["a"]
        with tl.store.read() as tx:
            assert [e.to_dict() for e in tx.events_after(0)] == before["events"]


def test_migrate_db_refuses_a_database_from_a_newer_taskloom(
    sqlite_url: str, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = sqlite_url.replace("taskloom.db", "source.db")
    fill(source)
    with taskloom.connect(source) as tl, tl.store.write() as tx:
        tx.execute("INSERT INTO schema_migrations VALUES (9999, '9999_future.sql')")
    assert main(["migrate-db", "--from", source, "--to", db_url]) == 1
    err = capsys.readouterr().err
    assert "source.db has migrations [9999]" in err and "upgrade taskloom" in err
    assert err.count("\n") == 1
    # nor does this taskloom write into it: an older binary would skip the newer triggers
    for command in (["board", "add", "t", "x"], ["tasks", "add", "job"], ["doctor"]):
        assert main([*command, "--db", source]) == 1, command
        assert "has migrations [9999]" in capsys.readouterr().err


def test_migrate_db_refuses_a_non_empty_destination(
    sqlite_url: str, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = sqlite_url.replace("taskloom.db", "source.db")
    fill(source)
    with taskloom.connect(db_url) as tl:
        tl.board("z").add("already here")
    assert main(["migrate-db", "--from", source, "--to", db_url]) == 1
    err = capsys.readouterr().err
    assert "is not empty (table " in err and "copies into an empty database only" in err
    with taskloom.connect(db_url) as tl:
        assert [t["thread_id"] for t in tl.threads()] == ["z"]
        shown = tl.store.url
    assert f"the destination {shown} is not empty" in err


def test_migrate_db_refuses_to_copy_a_database_into_itself(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It used to read as a destination that is not empty; one SQLite file spelt two ways is
    one database too."""
    before = fill(db_url)
    urls = [db_url, db_url]
    if db_url.startswith("sqlite:///"):
        path = Path(db_url.removeprefix("sqlite:///"))
        monkeypatch.chdir(path.parent)
        urls[1] = f"sqlite:///./sub/../{path.name}"
        (path.parent / "sub").mkdir()
    assert main(["migrate-db", "--from", urls[0], "--to", urls[1]]) == 1
    assert "the source and the destination are one database" in capsys.readouterr().err
    with taskloom.connect(db_url) as tl:
        assert tl.board("a").list() == before["a"]


def test_migrate_db_refuses_a_missing_sqlite_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in --from used to "copy 0 rows" and succeed; it must fail and create nothing."""
    source, target = tmp_path / "nonexistent.db", tmp_path / "new.db"
    code = main(["migrate-db", "--from", f"sqlite:///{source}", "--to", f"sqlite:///{target}"])
    assert code == 1
    assert f"Error: the source database {source} does not exist" in capsys.readouterr().err
    assert not source.exists() and not target.exists()


def test_migrate_db_refuses_an_empty_sqlite_source_and_leaves_it_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 0-byte file (what ``touch`` or a tool that "creates the file first" leaves) was
    migrated in place, written to though it is the source, and "0 rows" copied."""
    source, target = tmp_path / "empty.db", tmp_path / "new.db"
    source.touch()
    code = main(["migrate-db", "--from", f"sqlite:///{source}", "--to", f"sqlite:///{target}"])
    assert code == 1
    assert f"Error: the source database {source} is an empty file" in capsys.readouterr().err
    assert source.stat().st_size == 0 and not target.exists()


def test_migrate_db_refuses_a_source_without_taskloom_tables_and_leaves_it_so(
    fresh_url: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty PostgreSQL schema (a database name mistyped as another that exists, such as
    ``postgres``) was given taskloom's tables, though it is only read, and "0 rows" copied."""
    source, target = fresh_url("source.db"), fresh_url("target.db")
    if source.startswith("sqlite"):  # a file that is a database with no tables at all
        with sqlite3.connect(source.removeprefix("sqlite:///")) as conn:
            conn.execute("PRAGMA user_version = 1")
        conn.close()
    assert main(["migrate-db", "--from", source, "--to", target]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: the database ") and err.count("\n") == 1
    assert "has no taskloom tables: there is nothing to copy from it" in err
    with taskloom.connect(target) as tl, tl.store.read() as tx:
        assert tx.query("SELECT id FROM events") == []
    if source.startswith("postgresql"):
        import psycopg

        with psycopg.connect(source) as conn:
            found = conn.execute(
                "SELECT count(*) FROM pg_catalog.pg_class WHERE relnamespace ="
                " (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = current_schema())"
            ).fetchone()
        assert found == (0,)


@pytest.mark.postgres
def test_migrate_db_copies_a_postgres_table_larger_than_a_quarter_of_shared_buffers(
    tmp_path: Path,
) -> None:
    """Pages read with ``LIMIT … OFFSET`` and no order: PostgreSQL started each page's scan
    where the last one stopped (synchronized scans, for tables over shared_buffers/4), so
    pages overlapped and the copy failed on a duplicate id. Here the table is sized past
    that from the server's own setting."""
    import psycopg

    from tests.backends import pg_schema, pg_server

    server, why = pg_server()
    if server is None:
        pytest.fail(why)
    with psycopg.connect(server) as conn:
        shared = conn.execute(
            "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings"
            " WHERE name = 'shared_buffers'"
        ).fetchone()
    rows = int(shared[0] / 4 / 900) + 2000  # ~1 KB a row on disk
    with pg_schema(server) as source:
        with taskloom.connect(source) as tl:
            tl.queue.stats()  # migrate the schema
            with tl.store.write() as tx:
                tx.execute(
                    "INSERT INTO tasks (id, title, body, created_at, changed_at)"
                    " SELECT 't' || lpad(n::text, 8, '0'), 'job ' || n, repeat('x', 900),"
                    " n, n FROM generate_series(1, ?) AS n",
                    (rows,),
                )
        target = f"sqlite:///{tmp_path / 'copy.db'}"
        assert main(["migrate-db", "--from", source, "--to", target]) == 0
        with taskloom.connect(target) as copy, copy.store.read() as tx:
            found = tx.query_one("SELECT count(*) AS n, count(DISTINCT id) AS d FROM tasks")
    assert found is not None and found["n"] == found["d"] == rows


def test_migrate_db_reads_large_stashed_results_a_few_at_a_time(
    sqlite_url: str, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pages were 1,000 rows whatever their size: copying many threads' stashed results
    held every one of them in memory at once (a 400 MB stash took 390 MB of heap)."""
    import tracemalloc

    source = sqlite_url.replace("taskloom.db", "source.db")
    with taskloom.connect(source) as tl:
        tl.guard("t0").force_stash("bash", "blob " * 800_000)  # 4 MB
    with sqlite3.connect(source.removeprefix("sqlite:///")) as conn:
        for n in range(1, 20):
            conn.execute(
                "INSERT INTO stash_results SELECT ?, result_id, tool_name, content, is_json,"
                " tokens, bytes, lines, encoding, placeholder, created_at, expires_at"
                " FROM stash_results WHERE thread_id = 't0'",
                (f"t{n}",),
            )
    tracemalloc.start()
    try:
        assert main(["migrate-db", "--from", source, "--to", db_url]) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "stash_results: 20/20 rows" in capsys.readouterr().err
    assert peak < 48 * 2**20  # the 80 MB of stashed text is never all held at once
    with taskloom.connect(db_url) as tl, tl.store.read() as tx:
        found = tx.query_one(
            "SELECT count(*) AS n, sum(length(content)) AS size FROM stash_results"
        )
    assert found is not None and (found["n"], found["size"]) == (20, 20 * 4_000_000)


def test_migrate_db_tells_of_changes_written_to_the_source_during_the_copy(
    fresh_url: Callable[[str], str],
) -> None:
    """The copy holds the source as it began, and said nothing of the writes made meanwhile:
    pointing writers at the destination then lost them without a word."""
    from taskloom.store.copy import copy_database

    source, target = fresh_url("source.db"), fresh_url("target.db")
    fill(source)
    with taskloom.connect(source) as writer:

        def progress(table: str, done: int, total: int) -> None:
            if table == "documents" and done == 0:  # a live agent, mid-copy
                writer.board("a").add("written during the copy")

        copied = copy_database(source, target, progress)
    assert copied.written_since == 1
    assert copied.rows["events"] == 9
    with taskloom.connect(target) as tl:
        titles = [card["title"] for card in tl.board("a").list()["cards"]]
    assert "written during the copy" not in titles  # the destination is the source as it began


@pytest.mark.postgres
def test_a_writer_of_the_postgres_destination_waits_for_the_copy(tmp_path: Path) -> None:
    """An agent (or ``taskloom serve``) already pointed at the empty destination wrote while
    the copy ran: the copy, which found the destination empty, deleted the agent's event
    with the echoes of its own and went on, leaving the agent's board without its event
    (a write landing later failed the copy on a duplicate key; so did a second copy into the
    same database). The writer now waits, and writes after the copied rows."""
    import threading

    import psycopg

    from taskloom.store.copy import copy_database
    from tests.backends import needed_pg_server, pg_schema

    server = needed_pg_server()
    source = f"sqlite:///{tmp_path / 'source.db'}"
    before = fill(source)
    with pg_schema(server) as target:
        with taskloom.connect(target) as tl:
            tl.queue.stats()  # the schema, empty

        written: list[object] = []

        def write() -> None:
            try:
                with taskloom.connect(target) as agent:
                    written.append(agent.board("z").add("written meanwhile")["version"])
            except Exception as exc:
                written.append(exc)

        agent = threading.Thread(target=write)

        def waiting_on_a_lock() -> bool:
            """Whether a session waits for a table of the destination's schema."""
            with psycopg.connect(target, autocommit=True) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation IN"
                    " (SELECT oid FROM pg_class WHERE relnamespace ="
                    " current_schema()::regnamespace)"
                ).fetchone()
            return bool(row and row[0])

        def progress(table: str, done: int, total: int) -> None:
            if table == "documents" and done == 0:
                agent.start()
                while agent.is_alive() and not waiting_on_a_lock():
                    agent.join(0.02)

        copied = copy_database(source, target, progress)
        agent.join()
        assert written == [1]
        assert copied.rows["events"] == len(before["events"])  # type: ignore[arg-type]
        with taskloom.connect(target) as tl:
            assert tl.board("a").list() == before["a"]
            assert [c["title"] for c in tl.board("z").list()["cards"]] == ["written meanwhile"]
            with tl.store.read() as tx:
                ids = [e.id for e in tx.events_after(0)]
        assert len(ids) == len(set(ids)) == len(before["events"]) + 1  # type: ignore[arg-type]


def test_migrate_db_tells_its_progress_in_round_thousands(tmp_path: Path) -> None:
    """The first page is one row, so each line told a thousand and one rows more:
    "tasks: 1,001/2,500 rows", "2,001/2,500"."""
    from taskloom.store.copy import copy_database

    source, target = f"sqlite:///{tmp_path / 'source.db'}", f"sqlite:///{tmp_path / 'copy.db'}"
    with taskloom.connect(source) as tl:
        tl.queue.add_many({"title": f"job {n}"} for n in range(2500))
    told: list[int] = []
    copied = copy_database(
        source, target, lambda table, done, total: told.append(done) if table == "tasks" else None
    )
    assert told == [0, 1000, 2000, 2500] and copied.rows["tasks"] == 2500


def test_an_interrupted_copy_says_the_destination_is_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C exited 130 without a word after the last progress line: whether the
    destination was half-written was left to guess. It is as it was, and a copy again
    into it runs."""
    import taskloom.cli.migrate as migrate

    source, target = f"sqlite:///{tmp_path / 'source.db'}", f"sqlite:///{tmp_path / 'copy.db'}"
    before = fill(source)
    told = migrate._progress

    def interrupted(table: str, done: int, total: int) -> None:
        if table == "events":  # as Ctrl-C would, past every other table
            raise KeyboardInterrupt
        told(table, done, total)

    monkeypatch.setattr(migrate, "_progress", interrupted)
    assert main(["migrate-db", "--from", source, "--to", target]) == 130
    assert "Interrupted: nothing was copied" in capsys.readouterr().err
    with taskloom.connect(target) as tl:
        assert tl.threads() == []
    monkeypatch.setattr(migrate, "_progress", told)
    assert main(["migrate-db", "--from", source, "--to", target]) == 0
    with taskloom.connect(target) as tl:
        assert tl.board("a").list() == before["a"]


def test_migrate_db_shows_a_large_tables_progress_now_and_then_not_per_thousand_rows(
    fresh_url: Callable[[str], str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from taskloom.cli import migrate

    source, target = fresh_url("source.db"), fresh_url("target.db")
    with taskloom.connect(source) as tl:
        tl.queue.add_many({"title": f"job {i}"} for i in range(5_000))
    monkeypatch.setattr(migrate, "PROGRESS_EVERY_S", 3600.0)
    assert main(["migrate-db", "--from", source, "--to", target]) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("  events:")]
    assert lines == ["  events: 0/5,000 rows", "  events: 5,000/5,000 rows"]
