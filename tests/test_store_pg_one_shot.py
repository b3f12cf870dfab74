"""A one-shot process's PostgreSQL store (a hook's): one plain connection, no pool, and the
same answers, around a dead connection too."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

import taskloom
from taskloom.domain.errors import StoreError
from taskloom.store import open_store
from taskloom.store.pg_single import OneConnection
from taskloom.store.postgres import PostgresStore
from tests.backends import needed_pg_server, pg_schema

pytestmark = pytest.mark.postgres


@pytest.fixture
def one_shot() -> Iterator[tuple[taskloom.Taskloom, str]]:
    """A Taskloom on a one-shot store in a fresh schema, and the schema's URL."""
    with pg_schema(needed_pg_server()) as url:
        store = open_store(url, one_shot=True)
        assert isinstance(store, PostgresStore) and isinstance(store.pool, OneConnection)
        with taskloom.Taskloom(store) as tl:
            yield tl, url


def test_the_queue_round_on_one_connection(one_shot: tuple[taskloom.Taskloom, str]) -> None:
    tl, _ = one_shot
    added, _ = tl.queue.add("Review PR 12")
    task = tl.queue.claim("a")
    assert task is not None and task.id == added.id
    assert tl.queue.done(task.id, task.lease_token or "", "merged").status == "completed"
    with tl.store.read() as tx:  # a snapshot exists: the events are read beside it
        assert tx.query("SELECT count(*) AS n FROM tasks")[0]["n"] == 1
        events = tx.events_after(0)
    assert [e.data["status"] for e in events] == ["ready", "in_progress", "completed"]
    assert tl.store.pool.get_stats() == {"pool_size": 1, "pool_available": 1}


def test_a_connection_the_server_ended_is_opened_again(
    one_shot: tuple[taskloom.Taskloom, str],
) -> None:
    tl, url = one_shot
    tl.queue.add("Review PR 12")
    with tl.store.read() as tx:
        pid = tx.query("SELECT pg_backend_pid() AS pid")[0]["pid"]
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert tl.queue.stats()["ready"] == 1
    assert tl.queue.stats()["ready"] == 1  # and kept
    with tl.store.read() as tx:
        assert tx.query("SELECT pg_backend_pid() AS pid")[0]["pid"] != pid
    assert tl.store.pool.get_stats() == {"pool_size": 1, "pool_available": 1}


def test_a_failed_transaction_leaves_the_connection_usable(
    one_shot: tuple[taskloom.Taskloom, str],
) -> None:
    tl, _ = one_shot
    tl.queue.add("Review PR 12")
    with pytest.raises(StoreError, match="no_such_table"), tl.store.read() as tx:
        tx.query("SELECT * FROM no_such_table")
    assert tl.queue.stats()["ready"] == 1


def test_a_url_that_cannot_work_fails_with_the_servers_reason() -> None:
    server = needed_pg_server()
    url = f"{server.rstrip('/').rsplit('/', 1)[0]}/taskloom_no_such_database"
    store = open_store(url, one_shot=True)
    with pytest.raises(StoreError, match=r"cannot connect to .*taskloom_no_such_database"):
        taskloom.Taskloom(store).queue.stats()
    store.close()
