"""One schema per backend: what a new database gets, and what happens to a database an earlier
development build made (refused with one line; copied by ``migrate-db`` from its last schema).

The earlier builds' databases are real: made from their own migration files, kept in
``tests/fixtures/earlier_builds/``, with rows their triggers wrote. Two lines of them: ledgers
that begin with ``0001_core.sql`` (``core``) and with ``0001_initial.sql`` (``initial``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import taskloom
from taskloom.cli import main
from taskloom.domain.events import TASK_STATE, TODO_STATE, Event
from taskloom.store import open_store
from taskloom.store.base import encode
from taskloom.store.sqlite import SqliteStore
from tests.schema_dump import build, earlier_files, execute, initial_files, schema
from tests.test_cli import run


def _records(files: list[Path]) -> list[tuple[int, str]]:
    """The ledger of a database migrated with ``files``."""
    return [(int(f.name[:4]), f.name) for f in files]


def _ledger(url: str) -> list[tuple[int, str]]:
    rows = execute(url, "SELECT version, name FROM schema_migrations ORDER BY version")
    return [(int(version), str(name)) for version, name in rows]


LAST = {"core": {"sqlite": 11, "postgres": 11}, "initial": {"sqlite": 7, "postgres": 5}}
"""Each earlier build line's last schema, per backend."""


def test_the_schema_is_the_latest_earlier_builds_last(
    backend: str, fresh_url: Callable[[str], str]
) -> None:
    """Tables, columns, keys, indexes, triggers, views, functions and sequences, compared:
    ``0001_schema.sql`` folds that build's migrations; the files after it change it."""
    old, new = fresh_url("old.db"), fresh_url("new.db")
    build(old, earlier_files(backend, line="initial"))
    build(new, initial_files(backend)[:1])
    assert schema(new) == schema(old)


def _columns(url: str) -> set[tuple[Any, ...]]:
    """Every column of every table, with its type, default and constraints."""
    found = schema(url)
    if url.startswith("sqlite:///"):
        return {
            (name.removeprefix("table "), *column)
            for name, table in found.items()
            if name.startswith("table ")
            for column in table["columns"]
        }
    return set(found["columns"])


def test_the_first_builds_last_schema_has_a_subset_of_the_schemas_columns(
    backend: str, fresh_url: Callable[[str], str]
) -> None:
    """What ``migrate-db`` relies on to copy from it: each of its columns is one of ours."""
    old, new = fresh_url("old.db"), fresh_url("new.db")
    build(old, earlier_files(backend, line="core"))
    build(new, initial_files(backend)[:1])
    assert _columns(old) <= _columns(new)


def test_a_new_database_gets_the_one_schema(backend: str, fresh_url: Callable[[str], str]) -> None:
    url, reference = fresh_url("taskloom.db"), fresh_url("reference.db")
    with taskloom.connect(url) as tl:
        tl.board("t").add("x")
        tl.queue.add("job")
    build(reference, initial_files(backend))
    assert _ledger(url) == _records(initial_files(backend))
    assert schema(url) == schema(reference)


def test_a_database_of_an_earlier_schema_file_is_migrated_as_it_opens(
    backend: str, fresh_url: Callable[[str], str]
) -> None:
    """A database made when ``0001_schema.sql`` was the last file gets the files after it."""
    url, reference = fresh_url("taskloom.db"), fresh_url("reference.db")
    build(url, initial_files(backend)[:1])
    with taskloom.connect(url) as tl:
        tl.queue.add("job")
    build(reference, initial_files(backend))
    assert _ledger(url) == _records(initial_files(backend))
    assert schema(url) == schema(reference)


def _earlier(url: str, dialect: str, upto: int = 11, line: str = "core") -> None:
    """A database an earlier development build of ``line`` made, migrated up to ``upto``."""
    build(url, earlier_files(dialect, upto=upto, line=line))


def _refusal(url: str, schema_number: str, last: str = "0011") -> str:
    store = open_store(url)
    store.close()
    where = store.path if isinstance(store, SqliteStore) else store.url
    made = (
        f"the database {where} was made by an earlier development build of taskloom"
        f" (schema {schema_number})"
    )
    if schema_number == last:
        return (
            f"{made}: copy it into a new database with `taskloom migrate-db --from {store.url}"
            " --to NEW_URL`, or delete it"
        )
    return (
        f"{made}, which this taskloom neither opens nor copies (it copies that build's last"
        f" schema, {last}): delete it"
    )


@pytest.mark.parametrize(
    ("line", "upto"), [("core", 11), ("core", 8), ("initial", 0), ("initial", 4)]
)
def test_an_earlier_builds_database_is_refused_by_reads_and_writes_in_one_line(
    backend: str, fresh_url: Callable[[str], str], line: str, upto: int
) -> None:
    """``upto`` 0: the line's last schema."""
    url = fresh_url("old.db")
    last = LAST[line][backend]
    upto = upto or last
    _earlier(url, backend, upto, line)
    before = schema(url)
    expected = _refusal(url, f"{upto:04d}", f"{last:04d}")
    for args in (["board", "list", "t"], ["board", "add", "t", "x"], ["tasks", "stats"]):
        result = run(*args, "--db", url)
        assert (result.returncode, result.stderr) == (1, f"Error: {expected}\n"), args
    for write in (False, True):
        with (
            taskloom.connect(url) as tl,
            pytest.raises(taskloom.StoreError) as caught,
            tl.store.write() if write else tl.store.read(),
        ):
            pass
        assert str(caught.value) == expected
    assert schema(url) == before  # left as it was: not migrated
    assert _ledger(url) == _records(earlier_files(backend, upto=upto, line=line))


def _fill_earlier(url: str, dialect: str, scratch: str) -> dict[str, Any]:
    """An earlier build's database at its last schema, with rows as its triggers wrote them:
    task ``a`` added and claimed while task events were whole tasks, then arrays (left out
    by a copy), completed and task ``b`` added once they were columns; and the boards and
    their events of ``scratch``, a database this build filled."""
    whole, arrays = 5, {"sqlite": 8, "postgres": 9}[dialect]
    build(url, earlier_files(dialect, upto=whole))
    execute(url, "INSERT INTO tasks (id, title, created_at, changed_at) VALUES ('a', 'A', 1, 1)")
    build(url, earlier_files(dialect, after=whole, upto=arrays))
    execute(
        url,
        "UPDATE tasks SET status = 'in_progress', claimed_by = 'w', claimed_at = 2,"
        " lease_expires_at = 32, lease_token = 'k', attempts = 1, changed_at = 2 WHERE id = 'a'",
    )
    build(url, earlier_files(dialect, after=arrays))
    execute(
        url,
        "UPDATE tasks SET status = 'completed', completed_at = 3.5, result = 'done',"
        " lease_expires_at = NULL, lease_token = NULL, changed_at = 3.5 WHERE id = 'a'",
    )
    execute(
        url,
        """INSERT INTO tasks (id, title, payload, created_at) VALUES ('b', 'B', '{"n": 1}', 4)""",
    )
    with taskloom.connect(scratch) as tl:
        for thread in ("x", "y"):
            card = tl.board(thread).add("first", plan=["p"])["card"]["id"]
            tl.board(thread).update_status(card, "in_progress")
        boards = {thread: tl.board(thread).list() for thread in ("x", "y")}
        events = [
            Event(TODO_STATE, thread, _whole(snap), created_at=snap["updated_at"])
            for thread, snap in boards.items()
        ]
    for thread, snap in boards.items():  # a board as the earlier builds stored it: whole
        execute(
            url,
            "INSERT INTO documents VALUES ('board', ?, ?, ?, ?)",
            (thread, snap["version"], encode(_whole(snap)), snap["updated_at"]),
        )
    for event in events:
        execute(
            url,
            "INSERT INTO events (type, thread_id, data, created_at) VALUES (?, ?, ?, ?)",
            (event.type, event.thread_id, encode(event.data), event.created_at),
        )
    return {"boards": boards, "events": [(e.type, e.thread_id, e.data) for e in events]}


def _whole(snap: dict[str, Any]) -> dict[str, Any]:
    """A board snapshot as the earlier builds made it: no ready count, cards without edges,
    metadata or numbers."""
    later = {"blocked_by", "metadata", "number"}
    cards = [{k: v for k, v in card.items() if k not in later} for card in snap["cards"]]
    return {**{k: v for k, v in snap.items() if k != "ready_count"}, "cards": cards}


def test_migrate_db_copies_an_earlier_builds_database_but_its_older_task_events(
    backend: str, fresh_url: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = fresh_url("old.db"), fresh_url("new.db")
    made = _fill_earlier(old, backend, fresh_url("scratch.db"))
    before = schema(old)
    assert main(["migrate-db", "--from", old, "--to", new]) == 0
    err = capsys.readouterr().err
    assert "left out 2 task events an earlier build stored in an older format" in err
    assert schema(old) == before  # only read
    assert _ledger(new) == _records(initial_files(backend))
    with taskloom.connect(new) as tl:
        assert {t: tl.board(t).list() for t in ("x", "y")} == made["boards"]
        a, b = tl.queue.get("a"), tl.queue.get("b")
        assert (a.status, a.result, a.attempts, a.claimed_by) == ("completed", "done", 1, "w")
        assert (b.status, b.payload) == ("ready", {"n": 1})
        with tl.store.read() as tx:
            events = tx.events_after(0)
        tasks = [e.data for e in events if e.type == TASK_STATE]
        assert tasks == [a.to_dict(), b.to_dict()]  # the completion, the add: as `get` shows
        others = [(e.type, e.thread_id, e.data) for e in events if e.type != TASK_STATE]
        assert others == made["events"]
        claimed = tl.queue.claim("w")  # the copy is a database of this build's
        assert claimed is not None and claimed.id == "b"
        # a board stored whole moves to rows on its next change, and reads the same
        added = tl.board("x").add("second")["card"]
        assert tl.board("x").list()["cards"] == [*made["boards"]["x"]["cards"], added]
        assert added["number"] == 2


def test_migrate_db_copies_a_database_of_the_latest_earlier_build(
    backend: str, fresh_url: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Its last schema is this build's (see above), so this build fills the database and its
    ledger is then made that build's: a work graph, a board, and every event of both."""
    old, new = fresh_url("old.db"), fresh_url("new.db")
    with taskloom.connect(old) as tl:
        tl.board("t").add("card", plan=["step"])
        first, _ = tl.queue.add("first", dedup_key="k1", group_key="g")
        tl.queue.add("second", depends_on=[first.id], payload={"n": 2})
        doomed, _ = tl.queue.add("doomed", priority=1)
        tl.queue.add("after doomed", depends_on_keys=["k9"], group_key="g")
        tl.queue.add("held back", depends_on=[doomed.id])
        claimed = tl.queue.claim("w")
        assert claimed is not None and claimed.id == doomed.id
        tl.queue.fail(claimed.id, claimed.lease_token or "", "boom", retry=False)
        tasks = [t.to_dict() for t in tl.queue.list()]
        board = tl.board("t").list()
        with tl.store.read() as tx:
            events = [(e.type, e.thread_id, e.data) for e in tx.events_after(0)]
    assert any(t["status"] == "blocked" for t in tasks)
    execute(old, "DELETE FROM schema_migrations")
    for version, name in _records(earlier_files(backend, line="initial")):
        execute(old, "INSERT INTO schema_migrations VALUES (?, ?)", (version, name))
    with pytest.raises(taskloom.StoreError, match="earlier development build"):
        taskloom.connect(old).queue.stats()
    assert main(["migrate-db", "--from", old, "--to", new]) == 0
    capsys.readouterr()
    assert _ledger(new) == _records(initial_files(backend))
    with taskloom.connect(new) as tl:
        assert [t.to_dict() for t in tl.queue.list()] == tasks
        assert tl.board("t").list() == board
        with tl.store.read() as tx:
            assert [(e.type, e.thread_id, e.data) for e in tx.events_after(0)] == events
        ready = tl.queue.claim("w")
        assert ready is not None and ready.title == "first"


@pytest.mark.parametrize(("line", "upto"), [("core", 8), ("initial", 3)])
def test_migrate_db_refuses_an_earlier_schema_than_the_last(
    backend: str,
    fresh_url: Callable[[str], str],
    capsys: pytest.CaptureFixture[str],
    line: str,
    upto: int,
) -> None:
    old, new = fresh_url("old.db"), fresh_url("new.db")
    _earlier(old, backend, upto, line)
    assert main(["migrate-db", "--from", old, "--to", new]) == 1
    last = f"{LAST[line][backend]:04d}"
    assert capsys.readouterr().err == f"Error: {_refusal(old, f'{upto:04d}', last)}\n"


def test_migrate_db_refuses_to_copy_into_an_earlier_builds_database(
    backend: str, fresh_url: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    source, old = fresh_url("source.db"), fresh_url("old.db")
    with taskloom.connect(source) as tl:
        tl.board("t").add("x")
    _earlier(old, backend)
    assert main(["migrate-db", "--from", source, "--to", old]) == 1
    assert capsys.readouterr().err == f"Error: {_refusal(old, '0011')}\n"


def test_sqlite_row_triggers_on_tasks_run_one_statement_without_a_query(tmp_path: Path) -> None:
    """SQLite sets up a row trigger's whole program for every row a statement changes, even
    when its WHEN clause is false: a trigger on ``tasks`` runs one plain statement, and work
    that reads other rows goes to the view ``task_ends`` (an INSTEAD OF trigger)."""
    url = f"sqlite:///{tmp_path / 'taskloom.db'}"
    with taskloom.connect(url) as tl:
        tl.queue.add("job")
    triggers = execute(url, "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    on_tasks = {name: sql for name, sql in triggers if " ON tasks" in sql}
    assert "tasks_block_dependents" in on_tasks and "tasks_event_update" in on_tasks
    for name, sql in on_tasks.items():
        body = sql.split("BEGIN", 1)[1].rsplit("END", 1)[0].strip()
        assert body.count(";") == 1 and "SELECT" not in body.upper(), name
    blocking = dict(triggers)["task_ends_block_dependents"]
    assert "INSTEAD OF INSERT ON task_ends" in blocking and "WITH RECURSIVE" in blocking
