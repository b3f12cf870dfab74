"""PostgreSQL behind a connection pooler in transaction mode (PgBouncer): server sessions
are shared between clients, so what one session keeps (prepared statements) meets others.

The server here is the test server itself; a shared session is shown by preparing, on the
store's one connection, the statement names psycopg gives its own prepared statements, as
other clients of the same server session would have."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import psycopg
import pytest

import taskloom
from taskloom.domain.errors import InvalidInput, StoreError
from tests.backends import needed_pg_server, pg_schema

pytestmark = pytest.mark.postgres

OTHERS = [f"_pg3_{n}" for n in range(50)]
"""The names psycopg gives a session's prepared statements, in turn."""


@pytest.fixture
def pg_url() -> Iterator[str]:
    server = needed_pg_server()
    with pg_schema(server) as url:
        yield url


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
