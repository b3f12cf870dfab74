"""PostgreSQL behind a connection pooler in transaction mode (PgBouncer): server sessions
are shared between clients, so what one session keeps (prepared statements) meets others.

The server here is the test server itself; a shared session is shown by preparing, on the
store's one connection, the statement names psycopg gives its own prepared statements, as
other clients of the same server session would have."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

import taskloom
from taskloom.domain.errors import InvalidInput, StoreError
from taskloom.server import hub
from tests.backends import needed_pg_server, pg_schema
from tests.pgbouncer import pgbouncer

pytestmark = pytest.mark.postgres

OTHERS = [f"_pg3_{n}" for n in range(50)]
"""The names psycopg gives a session's prepared statements, in turn."""


def _share_session(tl: taskloom.Taskloom) -> None:
    """Prepare :data:`OTHERS` on the store's one pooled connection (skipping the names its
    own statements hold already), as other clients of a pooler's server session would
    have."""
    tl.queue.add("first")  # opens the pool and makes the tables
    with tl.store.pool.connection() as conn:  # type: ignore[attr-defined]
        for name in OTHERS:
            with contextlib.suppress(psycopg.errors.DuplicatePreparedStatement):
                conn.execute(f"PREPARE {name} AS SELECT 1")


def test_a_shared_session_names_the_url_option(pg_url: str) -> None:
    """psycopg prepares a statement the fifth time it runs; behind a pooler that shares
    server sessions, the name clashes with another client's. The error says what to do."""
    with taskloom.connect(f"{pg_url}&pool_max=1") as tl:
        _share_session(tl)
        with pytest.raises(StoreError) as caught:
            for i in range(10):
                tl.queue.add(f"t{i}")
    assert "already exists" in str(caught.value)
    assert "add prepare_threshold=none to the URL" in str(caught.value)


def test_prepare_threshold_none_prepares_nothing(pg_url: str) -> None:
    """With ``prepare_threshold=none`` nothing is prepared, on the pooled connection or the
    notifier's, so clients sharing a server session never clash."""
    with taskloom.connect(f"{pg_url}&pool_max=1&prepare_threshold=none") as tl:
        _share_session(tl)
        for i in range(10):
            tl.queue.add(f"t{i}")
            task = tl.queue.claim("w", lease=60)
            assert task is not None
            tl.queue.done(task.id, task.lease_token or "")
            time.sleep(0.06)  # let the notifier send one notification a round
        assert tl.queue.stats()["completed"] == 10
        prepared = tl.store.autocommit("SELECT name FROM pg_prepared_statements", ())
        assert sorted(r["name"] for r in prepared) == sorted(OTHERS)  # only the others'
        notifier = tl.store.notifier._conn  # type: ignore[attr-defined]
        assert notifier is not None
        assert notifier.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()[0] == 0


def test_a_bad_prepare_threshold_is_refused_before_connecting() -> None:
    with pytest.raises(InvalidInput, match="prepare_threshold must be"):
        taskloom.connect("postgresql://nowhere.invalid/db?prepare_threshold=often")


@pytest.fixture
def pooled_url() -> Iterator[str]:
    """A URL through PgBouncer in transaction mode to a fresh schema."""
    server = needed_pg_server()
    with pg_schema(server) as url:
        schema = url.rsplit("search_path%3D", 1)[-1]
        with pgbouncer(server, schema) as pooled:
            yield pooled


def test_the_queue_works_through_a_transaction_pooler(pooled_url: str) -> None:
    """Two stores through PgBouncer: every task is completed once; locks and the outbox
    horizon (an advisory lock taken and let go in one statement) hold."""
    url = f"{pooled_url}?prepare_threshold=none&pool_max=2"
    with taskloom.connect(url) as producer, taskloom.connect(url) as worker:
        ids = {producer.queue.add(f"job {i}")[0].id for i in range(20)}
        done = []
        while (task := worker.queue.claim("w", lease=60)) is not None:
            worker.queue.done(task.id, task.lease_token or "", result="ok")
            done.append(task.id)
        assert sorted(done) == sorted(ids)
        assert producer.queue.stats()["completed"] == 20
        with producer.store.read() as tx:
            assert len(tx.events_after(0, limit=1000)) >= 40


def test_a_listener_behind_a_transaction_pooler_says_it_hears_nothing(
    pooled_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A LISTEN through transaction pooling succeeds and hears nothing: the listener says
    so in one warning and is not started (``None``, as where nothing can push), so a server
    polls at once instead of waiting for wake-ups that never come (its live updates would
    stall)."""
    ready = threading.Event()
    with taskloom.connect(f"{pooled_url}?prepare_threshold=none") as tl:
        tl.queue.add("makes the tables")
        with caplog.at_level(logging.WARNING, logger="taskloom.store"):
            stop = tl.store.listen(lambda _id: None, ready=ready.set)  # type: ignore[attr-defined]
        if stop is not None:
            stop()
    warnings = [r.getMessage() for r in caplog.records if "hears no" in r.getMessage()]
    assert len(warnings) == 1
    assert "PgBouncer" in warnings[0] and "direct or session-pooled connection" in warnings[0]
    assert stop is None
    assert not ready.is_set()


def test_a_server_behind_a_transaction_pooler_streams_changes(pooled_url: str) -> None:
    """``taskloom serve`` behind transaction pooling: its hub, told that nothing can push,
    reads for changes as often as on SQLite, and a change reaches a waiting stream."""
    with taskloom.connect(f"{pooled_url}?prepare_threshold=none") as tl:
        tl.board("t").add("first")
        stream = hub.EventHub(tl.store)

        async def run() -> None:
            await stream.start()
            try:
                assert stream.poll_s == hub.POLL_S
                cursor = stream.last
                await asyncio.to_thread(tl.board("t").add, "second")
                await asyncio.wait_for(stream.wait(cursor), 30)
                assert stream.last > cursor
            finally:
                await stream.stop()

        asyncio.run(run())


def test_a_direct_listener_is_ready(pg_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """The probe a new listener sends itself arrives on a direct connection."""
    ready = threading.Event()
    heard: list[int] = []
    with taskloom.connect(pg_url) as tl:
        tl.queue.add("makes the tables")
        stop = tl.store.listen(heard.append, ready=ready.set)  # type: ignore[attr-defined]
        try:
            assert ready.wait(30)
            tl.queue.add("wakes the listener")
            for _ in range(200):
                if heard:
                    break
                time.sleep(0.05)
        finally:
            stop()
    assert heard
    assert not [r for r in caplog.records if "hears no" in r.getMessage()]
