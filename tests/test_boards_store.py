"""Board operations through the real store: snapshots, versions, events, persistence."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import taskloom
from taskloom.client import Taskloom
from taskloom.domain.errors import Conflict, InvalidInput, InvariantViolation, NotFound
from tests.conftest import damaged, run_together, subprocess_env


def events(tl: Taskloom, thread: str | None = None) -> list[taskloom.Event]:
    with tl.store.read() as tx:
        return tx.events_after(0, thread_id=thread)


def test_every_op_returns_a_snapshot_and_bumps_version(tl_fixed: Taskloom) -> None:
    b = tl_fixed.board("t1")
    snap = b.add("one")
    assert set(snap) >= {"thread_id", "version", "cards", "markdown", "summary", "card"}
    assert snap["version"] == 1
    cid = snap["card"]["id"]
    steps = [
        lambda: b.edit(cid, notes="hi"),
        lambda: b.update_status(cid, "awaiting_approval"),
        lambda: b.decide_plan(cid, True),
        lambda: b.claim_card(cid, ["ready"], "in_progress"),
        lambda: b.set_session_thread(cid, "run-1"),
        lambda: b.add("two"),
        lambda: b.replace([{"title": "only"}]),
        lambda: b.clear(),
    ]
    for expected_version, step in enumerate(steps, start=2):
        assert step()["version"] == expected_version
    assert b.list()["version"] == 9


def test_noop_does_not_bump_version_or_emit(tl_fixed: Taskloom) -> None:
    b = tl_fixed.board("t1")
    b.add("one")
    assert b.revise_plan()["version"] == 1
    assert len(events(tl_fixed)) == 1


def test_each_change_appends_one_change_event(tl_fixed: Taskloom) -> None:
    b = tl_fixed.board("t1")
    b.add("one")
    snap = b.add("two")
    evs = events(tl_fixed, "t1")
    assert [e.type for e in evs] == ["todo_change", "todo_change"]
    assert evs[-1].data == {
        "thread_id": "t1",
        "version": 2,
        "updated_at": snap["updated_at"],
        "cards": [snap["card"]],
        "removed": [],
        "summary": snap["summary"],
        "ready_count": 2,
    }
    assert evs[0].id is not None and evs[1].id is not None and evs[0].id < evs[1].id


def test_failed_op_changes_nothing(tl_fixed: Taskloom) -> None:
    b = tl_fixed.board("t1")
    b.add("one", status="in_progress")
    with pytest.raises(InvariantViolation):
        b.add("two", status="in_progress")
    assert b.list()["version"] == 1
    assert len(events(tl_fixed)) == 1
    with pytest.raises(NotFound):
        b.remove("nope")
    for wrong in (None, 5):  # a Python caller's wrong type is an input error, not a crash
        with pytest.raises(InvalidInput, match="a todo id is text"):
            b.remove(wrong)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="a todo id is text"):
            b.update_status(wrong, "done")  # type: ignore[arg-type]
    assert b.list()["version"] == 1


def test_a_move_that_refuses_awaiting_cards_reads_the_card_in_its_own_transaction(
    tl: Taskloom,
) -> None:
    """The panel's status route: a card a model sent to approval since the person looked is
    refused, as the move reads the card it changes, and a decided card moves."""
    b = tl.board("t1")
    card = b.add("Deploy", plan=["x"])["card"]["id"]
    shown = b.get().get(card)
    b.update_status(card, "awaiting_approval")
    assert shown.status.value == "todo"
    with pytest.raises(Conflict, match="awaiting approval: its plan takes a decision"):
        b.update_status(card, "done", refuse_awaiting=True)
    assert b.get().get(card).status.value == "awaiting_approval"
    b.decide_plan(card, approve=True)
    assert b.update_status(card, "done", refuse_awaiting=True)["card"]["status"] == "done"


def test_threads_are_isolated(tl: Taskloom) -> None:
    tl.board("a").add("for a")
    tl.board("b").add("for b")
    assert [c["title"] for c in tl.board("a").list()["cards"]] == ["for a"]
    assert {t["thread_id"] for t in tl.threads()} == {"a", "b"}


def test_thread_id_is_validated(tl: Taskloom) -> None:
    with pytest.raises(InvalidInput, match="thread id is required"):
        tl.board("  ")
    with pytest.raises(InvalidInput, match="longer than"):
        tl.board("x" * 201)
    for dots in (".", ".."):  # a URL path drops them: the panel could not act on the thread
        with pytest.raises(InvalidInput, match="a URL path drops it"):
            tl.board(dots)
    assert tl.board("...").list()["thread_id"] == "..."  # not a path segment browsers drop


@pytest.mark.parametrize("thread", [5, b"t1", ["t1"]])
def test_a_thread_id_that_is_not_text_is_refused_not_turned_into_one(
    tl: Taskloom, thread: object
) -> None:
    """``str()`` made one of anything: ``tl.board(b"t1")`` wrote to the thread "b't1'",
    not t1, and a number to a thread its digits name."""
    for handle in (tl.board, tl.goal, tl.guard):
        with pytest.raises(InvalidInput, match="a thread id is text, not"):
            handle(thread)  # type: ignore[arg-type]
    assert tl.threads() == []


def test_unknown_field_rejected(tl: Taskloom) -> None:
    with pytest.raises(InvalidInput, match="unknown card field: colour"):
        tl.board("t").add("x", colour="red")


def test_state_survives_reopen_and_ids_stay_unique(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    seen: set[str] = set()
    for _ in range(3):
        with taskloom.connect(url) as tl:
            for _ in range(5):
                seen.add(tl.board("t").add("card")["card"]["id"])
    with taskloom.connect(url) as tl:
        cards = tl.board("t").list()["cards"]
    assert len(cards) == 15
    assert {c["id"] for c in cards} == seen


def test_read_does_not_create_the_database(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "dir" / "db.sqlite"
    with taskloom.connect(f"sqlite:///{target}") as tl:
        assert tl.board("t").list()["cards"] == []
        assert tl.threads() == []
        assert not target.parent.exists()
        tl.board("t").add("first write")
    assert target.exists()


def test_default_location_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with taskloom.connect() as tl:
        tl.board("t").add("x")
    assert (tmp_path / ".taskloom" / "taskloom.db").exists()
    monkeypatch.setenv("TASKLOOM_URL", f"sqlite:///{tmp_path / 'env.db'}")
    with taskloom.connect() as tl:
        tl.board("t").add("x")
    assert (tmp_path / "env.db").exists()


def test_database_is_wal_with_migrations(sqlite_url: str) -> None:
    with taskloom.connect(sqlite_url) as tl:
        tl.board("t").add("x")
    conn = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT min(version) FROM schema_migrations").fetchone()[0] == 1


def test_bad_urls_are_clear_errors() -> None:
    with pytest.raises(InvalidInput, match="unsupported database URL scheme 'mysql'"):
        taskloom.connect("mysql://x")
    with pytest.raises(InvalidInput, match="libpq connection string"):
        taskloom.connect("user=postgres dbname=app")
    with pytest.raises(InvalidInput, match="in-memory"):
        taskloom.connect("sqlite:///:memory:")
    for half_url in ("postgresql:/postgres@localhost/db", "postgresql:db", "postgres:db"):
        with pytest.raises(InvalidInput, match="not a valid PostgreSQL URL"):
            taskloom.connect(half_url)
    with pytest.raises(InvalidInput, match="three slashes"):
        taskloom.connect("sqlite://relative.db")


def test_a_bare_path_named_like_a_scheme_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("sqlite", "postgres"):
        with taskloom.connect(name) as tl:
            tl.board("t").add("x")
        assert (tmp_path / name).is_file()


def test_url_schemes_are_not_case_sensitive(tmp_path: Path) -> None:
    with taskloom.connect(f"SQLite:///{tmp_path / 'x.db'}") as tl:
        tl.board("t").add("x")
    assert (tmp_path / "x.db").exists()
    store = taskloom.connect("POSTGRESQL://u@h/db").store
    assert store.dialect == "postgres"
    store.close()


def test_corrupt_file_is_a_store_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database" * 100)
    with taskloom.connect(f"sqlite:///{bad}") as tl, pytest.raises(taskloom.StoreError):
        tl.board("t").add("x")


def test_a_database_that_cannot_be_created_is_a_store_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    path = tmp_path / "file" / "sub" / "x.db"
    with (
        taskloom.connect(f"sqlite:///{path}") as tl,
        pytest.raises(taskloom.StoreError, match=f"cannot open the database {path}: "),
    ):
        tl.queue.add("x")
    with (
        taskloom.connect(f"sqlite:///{tmp_path}") as tl,  # a directory
        pytest.raises(taskloom.StoreError, match=f"cannot open the database {tmp_path}"),
    ):
        tl.board("t").add("x")


def test_a_file_deleted_or_replaced_under_a_process_is_an_error_not_lost_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("taskloom.store.sqlite.FILE_CHECK_S", 0.0)  # check on every call
    url = f"sqlite:///{tmp_path / 'x.db'}"
    with taskloom.connect(url) as tl:
        tl.board("t").add("one")
        for name in ("x.db", "x.db-wal", "x.db-shm"):
            (tmp_path / name).unlink(missing_ok=True)
        with taskloom.connect(url) as other:
            other.board("t").add("two, in the new file")
        for call in (lambda: tl.board("t").add("would be lost"), tl.board("t").list):
            with pytest.raises(taskloom.StoreError, match="was deleted or replaced while"):
                call()
    with taskloom.connect(url) as fresh:
        assert [c["title"] for c in fresh.board("t").list()["cards"]] == ["two, in the new file"]


def test_a_damaged_small_file_is_refused_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    damaged(path)
    with (
        taskloom.connect(f"sqlite:///{path}") as tl,
        pytest.raises(taskloom.StoreError, match="integrity check failed") as caught,
    ):
        tl.board("t").list()
    assert "\n" not in str(caught.value)  # one line, however many problems the check lists


def test_a_full_disk_is_reported_as_such(sqlite_url: str) -> None:
    """SQLite rolls a transaction back itself when the disk is full; the second ROLLBACK
    failed ("no transaction is active") and its error replaced the one that said why."""
    with taskloom.connect(sqlite_url) as tl:
        tl.board("t").add("kept")
        conn = tl.store._conn()  # type: ignore[attr-defined]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")  # as if the disk were full now
        with pytest.raises(taskloom.StoreError, match="database or disk is full"):
            tl.guard("t").wrap("shell", "x" * 2_000_000)
        with pytest.raises(taskloom.StoreError, match="database or disk is full"):
            tl.queue.add_many({"title": f"job {i}", "body": "y" * 4000} for i in range(500))
        conn.execute("PRAGMA max_page_count = 1073741823")  # space freed
        tl.board("t").add("and more")
        assert [c["title"] for c in tl.board("t").list()["cards"]] == ["kept", "and more"]


def _open_and_write(path: str, thread: str, start: Any, results: Any) -> None:
    start.wait()
    try:
        with taskloom.connect(f"sqlite:///{path}") as tl:
            tl.board(thread).add("opened together")
        results.put("ok")
    except taskloom.TaskloomError as exc:
        results.put(f"{type(exc).__name__}: {exc}")


OLD_MIGRATIONS_TABLE = (
    "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
)


@pytest.mark.parametrize("legacy", [False, True])
def test_processes_opening_a_file_together_wait_their_turn(tmp_path: Path, legacy: bool) -> None:
    """Switching to WAL and creating the migrations table happened outside any transaction
    (SQLite calls no busy handler there), so of several processes opening a new file, or an
    old one in rollback-journal mode, some failed at once with StoreBusy."""
    failures = []
    for round_ in range(2):
        path = tmp_path / f"together-{round_}.db"
        if legacy:
            with sqlite3.connect(path) as old:
                old.execute(OLD_MIGRATIONS_TABLE)  # a taskloom file from before WAL
        args = [(str(path), f"t{i}") for i in range(8)]
        failures += [o for o in run_together(_open_and_write, args, 60) if o != "ok"]
    assert failures == []


def test_a_large_file_is_checked_on_request_not_on_every_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.db"
    damaged(path)
    monkeypatch.setattr("taskloom.store.sqlite.CHECK_ON_OPEN_BYTES", 4096)  # "large"
    with taskloom.connect(f"sqlite:///{path}") as tl:
        assert tl.board("t").list()["cards"] == []  # opens: what it reads is intact
        with pytest.raises(taskloom.StoreError, match="integrity check failed"):
            tl.store.check()


def test_busy_database_maps_to_store_busy(sqlite_url: str, monkeypatch) -> None:
    with taskloom.connect(sqlite_url) as tl:
        tl.board("t").add("x")
    monkeypatch.setattr("taskloom.store.sqlite.BUSY_TIMEOUT_MS", 50)
    blocker = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with taskloom.connect(sqlite_url) as other, pytest.raises(taskloom.StoreBusy):
            other.board("t").add("y")
    finally:
        blocker.execute("ROLLBACK")


def test_async_twin(tl: Taskloom) -> None:
    async def main() -> dict:
        board = tl.aio.board("t")
        await board.add("async card")
        result = await tl.aio.tools.dispatch(
            "todo", {"op": "list"}, taskloom.ToolContext(thread_id="t")
        )
        assert "async card" in result.content
        return await board.list()

    snap = asyncio.run(main())
    assert snap["cards"][0]["title"] == "async card"


def test_connect_async(db_url: str) -> None:
    async def main() -> int:
        atl = await taskloom.connect_async(db_url)
        await atl.board("t").add("x")
        threads = await atl.threads()
        await atl.close()
        return len(threads)

    assert asyncio.run(main()) == 1


def test_a_setting_through_the_async_client_reaches_the_queue(db_url: str) -> None:
    """``tl.queue.max_active = 2`` on the async client landed on the proxy: it read back 2
    and the cap stayed 10,000."""

    async def main() -> dict[str, int]:
        atl = await taskloom.connect_async(db_url)
        atl.queue.max_active = 2
        assert atl.sync.queue.max_active == 2
        for i in range(4):
            await atl.queue.add(f"t{i}", priority=i)
        stats: dict[str, int] = await atl.queue.stats()
        await atl.close()
        return stats

    assert asyncio.run(main())["ready"] == 2


def test_ids_grow_and_a_forked_child_makes_its_own() -> None:
    """Ids made by one process sort in the order made; a child forked while another thread
    held the id lock can still make ids and lease tokens, and never its parent's, and knows
    its own pid (claims record it)."""
    import os
    import select
    import signal
    import threading

    from taskloom import _runtime as ids
    from taskloom import _runtime as process

    made = [ids.new_id() for _ in range(2000)]
    tokens = {ids.new_token() for _ in range(200)}  # the parent holds random bytes read ahead
    assert len(tokens) == 200 and all(re.fullmatch(r"[0-9a-f]{32}", t) for t in tokens)
    assert made == sorted(made) and len(set(made)) == len(made)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with ids._lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: an id at once, or the parent's test times out
        os.write(write, f"{ids.new_id()} {ids.new_token()} {process.current_pid()}".encode())
        os._exit(0)
    release.set()
    holder.join()
    os.close(write)
    answered, _, _ = select.select([read], [], [], 10)
    if not answered:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert answered, "the forked child could not make an id"
    child_id, child_token, child_pid = os.read(read, 128).decode().split()
    parent_id = ids.new_id()
    assert len(child_id) == 36 and child_id != parent_id
    assert child_token != ids.new_token() and child_token not in tokens
    assert int(child_pid) == pid and process.current_pid() == os.getpid()


@pytest.mark.parametrize("text", ["a\x00b", "\ud800"])
def test_unstorable_text_is_refused_the_same_on_every_backend(tl: Taskloom, text: str) -> None:
    b = tl.board("t")
    cid = b.add("one")["card"]["id"]
    attempts = [
        lambda: b.add(text),
        lambda: b.edit(cid, notes=text),
        lambda: b.edit(cid, plan=["ok", text]),
        lambda: b.add("x", source_metadata={"from": text}),
        lambda: b.replace([{"title": "x", "evidence": [text]}]),
        lambda: b.set_session_thread(cid, text),
    ]
    for attempt in attempts:
        with pytest.raises(InvalidInput):
            attempt()
    assert b.list()["version"] == 1
    assert len(events(tl, "t")) == 1


def test_the_model_gate_is_only_on_the_model_handle(tl: Taskloom) -> None:
    host = tl.board("t")
    cid = host.add("Deploy", approval_mode="required", status="awaiting_approval")["card"]["id"]
    model = host.as_model()
    with pytest.raises(InvariantViolation, match="waiting for a person"):
        model.update_status(cid, "approved")
    with pytest.raises(InvariantViolation, match="waiting for a person"):
        model.claim_card(cid, ["awaiting_approval"], "in_progress")
    with pytest.raises(InvariantViolation, match="waiting for a person"):
        model.decide_plan(cid, True)
    assert host.list()["version"] == 1
    assert host.decide_plan(cid, True)["cards"][0]["status"] == "ready"
    assert model.update_status(cid, "in_progress")["cards"][0]["status"] == "in_progress"


def test_closing_a_store_another_thread_is_using_never_crashes(tmp_path: Path) -> None:
    """Run in a child process: closing a connection under a running statement used to kill
    the interpreter (a segfault), which no assertion in this process could report."""
    script = f"""
import threading, time, taskloom
tl = taskloom.connect("sqlite:///{tmp_path / "busy.db"}")
tl.queue.add("warm")
stop = time.monotonic() + 1.5
errors = []
def reader():
    while time.monotonic() < stop:
        try:
            tl.queue.list()
            tl.board("t").add("x")
            tl.board("t").clear()  # a board holds at most 1,000 cards
        except taskloom.TaskloomError as exc:
            errors.append(exc)
threads = [threading.Thread(target=reader) for _ in range(2)]
for t in threads:
    t.start()
while time.monotonic() < stop:
    tl.store.close()
    time.sleep(0.005)
for t in threads:
    t.join()
print("survived", len(errors))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
        env=subprocess_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("survived 0"), done.stdout


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"title": 5}, "must be text"),
        ({"title": "t", "plan": "abc"}, "list of text, not one text"),
        ({"title": "t", "source_metadata": {1: "x"}}, "keys must be text"),
        ({"title": "t", "source_metadata": {"x": {1, 2}}}, "not JSON"),
        ({"title": "t", "source_metadata": {"x": 2**70}}, "beyond 64 bits"),
        ({"title": "t", "source_metadata": {"x": float("nan")}}, "JSON cannot store"),
        ({"title": "t", "source_metadata": ["not", "an", "object"]}, "must be an object"),
    ],
)
def test_values_of_the_wrong_kind_are_input_errors(
    tl: Taskloom, fields: dict[str, object], message: str
) -> None:
    """The same refusal on both backends, before anything is stored: a raw AttributeError or
    TypeError used to escape, or a plan of one text was stored as its letters."""
    with pytest.raises(InvalidInput, match=message):
        tl.board("t").add(**fields)  # type: ignore[arg-type]
    assert tl.board("t").list()["cards"] == []


@pytest.mark.parametrize(
    "thread",
    [
        "chat-\U0001f468\u200d\U0001f469\u200d\U0001f467",
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        "\u0645\u062d\u0627\u062f\u062b\u0629\u200f-1",
    ],
)
def test_joiners_and_direction_marks_are_part_of_a_thread_id(tl: Taskloom, thread: str) -> None:
    """An emoji sequence (ZWJ), Persian (ZWNJ) and Arabic (RLM) need them: refused, threads
    already stored under such ids could no longer be read, decided on or cleared."""
    tl.board(thread).add("card")
    assert tl.board(thread).list()["cards"][0]["title"] == "card"


@pytest.mark.parametrize(
    "thread", ["multi\nline", "tab\there", "c1\x9b", "a\u2028b", "x\u202egnp.exe", "a\u200bb"]
)
def test_a_thread_id_with_control_characters_is_refused(tl: Taskloom, thread: str) -> None:
    """A line break in an id made the panel's routes miss the thread (no one could approve its
    plans there), and showed it as "multi line", another thread's name."""
    with pytest.raises(InvalidInput, match=r"control characters.*U\+[0-9A-F]{4} at position"):
        tl.board(thread).add("card")
    assert tl.threads() == []


def test_claim_card_takes_one_status_and_a_second_in_progress_names_the_first(
    tl_fixed: Taskloom,
) -> None:
    """``claim_card(id, "todo")`` read "todo" letter by letter; the in-progress error gave
    only a count, so the model had to list the board to find the card to finish."""
    b = tl_fixed.board("t1")
    first = b.add("Write tests")["card"]["id"]
    second = b.add("Deploy")["card"]["id"]
    assert b.claim_card(first, "todo")["card"]["status"] == "in_progress"
    with pytest.raises(InvariantViolation) as err:
        b.claim_card(second, ["todo"])
    assert f"'Write tests' ({first}) is in progress already" in str(err.value)


def test_the_memory_of_removed_gated_plans_outlives_the_process(db_url: str) -> None:
    """The retired ids and titles lived only in one process's cache: another connection (a
    one-shot ``taskloom tool call``, a restart) let the model re-add the plan as done."""
    from taskloom import ToolContext

    ctx = ToolContext(thread_id="t")
    with taskloom.connect(db_url) as first:
        card = first.board("t").add("Deploy prod", status="awaiting_approval")["card"]
        assert not first.tools.dispatch("todo", {"op": "remove", "id": card["id"]}, ctx).is_error
    with taskloom.connect(db_url) as second:
        back = {"op": "add", "content": "Deploy prod", "status": "done"}
        assert second.tools.dispatch("todo", back, ctx).is_error
        same_id = {
            "merge": True,
            "todos": [{"id": card["id"], "content": "x", "status": "completed"}],
        }
        assert second.tools.dispatch("todo_list", same_id, ctx).is_error
        assert second.board("t").list()["cards"] == []
        assert "retired_titles" not in second.board("t").list()  # not shown to the model


def test_handles_built_from_a_runtime_share_the_facades_store_clock_and_ids(
    tl_fixed: Taskloom,
) -> None:
    """A handle needs the store, the clock and the id source, not the facade: one built on
    ``tl.runtime`` writes what the facade's handles read, with the same clock and ids."""
    from taskloom.boards import BoardHandle
    from taskloom.goals.handle import GoalHandle

    snap = BoardHandle(tl_fixed.runtime, "t").add("from a runtime")
    assert snap["card"]["id"] == "id-1"
    assert snap["card"]["created_at"] == "2026-01-01T12:00:00.000Z"
    assert tl_fixed.board("t").list()["cards"][0]["title"] == "from a runtime"
    GoalHandle(tl_fixed.runtime, "t").set("ship it")
    assert [row["thread_id"] for row in tl_fixed.threads()] == ["t"]
    assert tl_fixed.goal("t").get()["goal"]["objective"] == "ship it"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda b: b.replace("abc"), "replace takes a list of cards, not str"),
        (lambda b: b.replace(None), "replace takes a list of cards, not NoneType"),
        (lambda b: b.replace({"title": "x"}), "replace takes a list of cards, not dict"),
        (lambda b: b.replace([1]), "a card is a CardPatch or a dict of its fields, not int"),
        (lambda b: b.upsert("abc", prune=False), "upsert takes a list of cards, not str"),
        (lambda b: b.edit_many(None), "edit_many takes a dict of card ids"),
        (lambda b: b.edit_many([("x", {})]), "edit_many takes a dict of card ids"),
        (lambda b: b.edit_many({"x": 1}), "a card is a CardPatch or a dict of its fields"),
    ],
)
def test_whole_list_writes_of_the_wrong_shape_are_input_errors(
    tl: Taskloom, call: Callable[..., object], message: str
) -> None:
    """A raw ValueError, TypeError or AttributeError used to escape (a text was read as a
    list of its letters); the board is left as it was."""
    board = tl.board("t")
    board.add("keep me")
    with pytest.raises(InvalidInput, match=message):
        call(board)
    snap = board.list()
    assert (snap["version"], [c["title"] for c in snap["cards"]]) == (1, ["keep me"])


def test_an_id_given_to_add_is_refused_not_dropped(tl: Taskloom) -> None:
    """``add("x", id="mine")`` made a card with another id, in silence: a host that keeps
    its own ids then lost track of the card."""
    board = tl.board("t")
    with pytest.raises(InvalidInput, match="add takes no id: the board gives each new card"):
        board.add("x", id="mine")
    assert board.list()["cards"] == []


def test_a_flag_given_as_text_is_refused_not_read_as_true(tl: Taskloom) -> None:
    """``decide_plan(id, "no")`` approved the plan and ``remove(id, force="no")`` forced the
    removal: a non-empty text is true to Python. Each flag takes True or False only."""
    board = tl.board("t")
    first = board.add("deploy", approval_mode="required", status="awaiting_approval")["card"]
    after = board.add("verify", blocked_by=[first["id"]])["card"]
    with pytest.raises(InvalidInput, match="approve is true or false, not 'no'"):
        board.decide_plan(first["id"], "no")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="force is true or false, not 'no'"):
        board.remove(first["id"], force="no")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="explain is true or false"):
        board.ready(explain="yes")  # type: ignore[arg-type]
    cards = {c["id"]: c for c in board.list()["cards"]}
    assert cards[first["id"]]["status"] == "awaiting_approval"
    assert cards[after["id"]]["blocked_by"] == [first["id"]]
    assert board.decide_plan(first["id"], False)["card"]["status"] == "rejected"


@pytest.mark.parametrize("url", [5, b"sqlite:///x.db", Path("x.db")])
def test_a_database_url_that_is_not_text_is_an_input_error(url: object) -> None:
    with pytest.raises(InvalidInput, match="the database URL must be text"):
        taskloom.connect(url)  # type: ignore[arg-type]
