"""The Store contract, run on every backend (``db_url`` is parametrized in conftest)."""

from __future__ import annotations

import threading

import pytest

import taskloom
from taskloom.client import Taskloom
from taskloom.domain.events import TODO_STATE, Event

WRITERS = 4
PER_WRITER = 40


def test_concurrent_threads_lose_no_update(tl: Taskloom) -> None:
    """Writers in threads (one connection each) serialise on the board; every add survives."""
    board = tl.board("shared")

    def work(name: str) -> None:
        for i in range(PER_WRITER):
            board.add(f"{name}-{i}")

    threads = [threading.Thread(target=work, args=(f"w{n}",)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = board.list()
    assert len(snap["cards"]) == WRITERS * PER_WRITER
    assert snap["version"] == WRITERS * PER_WRITER


def test_a_resuming_reader_never_skips_an_event(db_url: str) -> None:
    """A cursor-following reader, polling while writers commit, sees every event exactly once,
    in id order: no event commits late with an id below one already delivered."""
    done = threading.Event()
    seen: list[int] = []
    with taskloom.connect(db_url) as tl:
        tl.board("warmup").add("schema")

        def follow() -> None:
            cursor = 0
            while True:
                finished = done.is_set()
                with tl.store.read() as tx:
                    batch = tx.events_after(cursor)
                for event in batch:
                    assert event.id is not None
                    seen.append(event.id)
                    cursor = event.id
                if finished and not batch:
                    return

        def write(name: str) -> None:
            for i in range(PER_WRITER):
                tl.board(f"{name}-{i % 3}").add("x")

        reader = threading.Thread(target=follow)
        reader.start()
        writers = [threading.Thread(target=write, args=(f"w{n}",)) for n in range(WRITERS)]
        for t in writers:
            t.start()
        for t in writers:
            t.join()
        done.set()
        reader.join()
        with tl.store.read() as tx:
            every = [e.id for e in tx.events_after(0, limit=100_000)]
    assert seen == every
    assert seen == sorted(seen)


def test_rolled_back_write_leaves_no_event(tl: Taskloom) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom), tl.store.write() as tx:
        tx.append_event(Event(TODO_STATE, "t", {"n": 1}, created_at="2026-01-01T00:00:00Z"))
        raise Boom
    with tl.store.read() as tx:
        assert tx.events_after(0) == []
        assert tx.doc_version("board", "t") is None


def test_placeholders_and_literals(tl: Taskloom) -> None:
    """``?`` placeholders work the same everywhere; ``?`` and ``%`` inside literals stay text."""
    tl.board("t").add("x")
    with tl.store.read() as tx:
        row = tx.query_one("SELECT ? AS a, '?%' AS b, 7 % ? AS c", (1, 4))
        assert row == {"a": 1, "b": "?%", "c": 3}
        assert tx.query("SELECT '50%' AS p") == [{"p": "50%"}]
        docs = tx.query("SELECT kind, key, state FROM documents WHERE key = ?", ("t",))
        assert isinstance(docs[0]["state"], str)  # JSON comes back as text on every backend


def test_list_docs_orders_by_bytes(tl: Taskloom) -> None:
    for thread in ["b", "B", "a", "_", "Z"]:
        tl.board(thread).add("x")
    with tl.store.read() as tx:
        assert [d.key for d in tx.list_docs("board")] == ["B", "Z", "_", "a", "b"]


def test_bad_sql_is_a_store_error(tl: Taskloom) -> None:
    with pytest.raises(taskloom.StoreError), tl.store.read() as tx:
        tx.query("SELECT * FROM no_such_table")
    tl.board("t").add("still works afterwards")
    assert tl.board("t").list()["version"] == 1


def test_concurrent_adds_with_one_dedup_key_make_one_task(db_url: str) -> None:
    """Racing enqueuers of one dedup key all get the same live task, never an error."""
    with taskloom.connect(db_url) as tl:
        tl.queue.add("warmup")
        results: list[tuple[str, bool]] = []
        errors: list[BaseException] = []

        def add() -> None:
            try:
                for _ in range(10):
                    task, created = tl.queue.add("nightly build", dedup_key="nightly")
                    results.append((task.id, created))
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=add) for _ in range(WRITERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert len({tid for tid, _ in results}) == 1
    assert [created for _, created in results].count(True) == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda tl: tl.board("a\x00b").add("x"),
        lambda tl: tl.board("a\x00b").list(),
        lambda tl: tl.goal("g\x00").get(),
        lambda tl: tl.guard("t").wrap("to\x00ol", "output"),
        lambda tl: tl.queue.list(agent="a\x00"),
        lambda tl: tl.board("bad \udcff").list(),
    ],
)
def test_text_no_backend_can_store_is_refused_alike(tl: Taskloom, call) -> None:  # type: ignore[no-untyped-def]
    """A NUL (PostgreSQL text cannot hold one) or an undecodable byte is the caller's mistake
    on every backend, never a database error on one."""
    with pytest.raises(taskloom.InvalidInput):
        call(tl)


def test_the_event_head_comes_first_in_a_read(tl: Taskloom) -> None:
    """First in a read it matches the read's snapshot on every backend; later, PostgreSQL
    (whose snapshot then exists) refuses it with a clear error instead of a later head."""
    tl.board("t").add("one")
    with tl.store.read() as tx:
        head = tx.event_head()
        events = tx.events_after(0)
        if tl.store.dialect == "postgres":
            with pytest.raises(taskloom.InvalidInput, match="must come first"):
                tx.event_head()
    assert head == events[-1].id
