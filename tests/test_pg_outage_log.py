"""A PostgreSQL outage in a long-running process's log: one line when taskloom's pool loses
its connections, one when they are back, whatever the pool retries in between.

The outage is a TCP proxy to the test server that refuses every new connection, and the
store's own server sessions ended, as a server restart ends them; the server itself is not
touched."""

from __future__ import annotations

import logging
import time
import uuid

import pytest

import taskloom
from taskloom.domain.errors import StoreError
from tests.backends import terminate_app
from tests.test_store_postgres import CuttingProxy

pytestmark = pytest.mark.postgres


def _until(condition: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.05)


def test_an_outage_is_one_line_and_its_end_another(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Each connection the pool discarded was a line naming no reason (``discarding closed
    connection: <psycopg.Connection [BAD] at 0x…>``), and each reconnection attempt of each
    connection another: a dozen lines for a few seconds' restart, more the longer it lasts,
    and none when it ended."""
    proxy = CuttingProxy(pg_url)
    name = f"tl-outage-log-{uuid.uuid4().hex[:12]}"
    with taskloom.connect(f"{proxy.url}&application_name={name}&pool_min=3") as tl:
        tl.queue.add("before the outage")
        with caplog.at_level(logging.WARNING, logger="psycopg"):
            proxy.down = True
            terminate_app(pg_url, name)
            for _ in range(3):
                with pytest.raises(StoreError):
                    tl.queue.add("during the outage")
            # The pool retries each connection after 1, 2, 4… s: let it fail a few times.
            _until(lambda: "connection lost" in caplog.text, 10)
            time.sleep(4)
            proxy.down = False
            added = []

            def add() -> bool:
                try:
                    added.append(tl.queue.add("after the outage"))
                except StoreError:
                    return False
                return True

            _until(add)
            assert added
            _until(lambda: "is back" in caplog.text)
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("psycopg")]
    assert len(lines) == 2, lines
    assert lines[0].startswith("PostgreSQL connection lost: "), lines
    assert "reconnecting in the background" in lines[0]
    assert lines[1] == "PostgreSQL connection is back"
    assert "<psycopg.Connection" not in caplog.text


def test_another_pools_records_pass_unchanged(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Only taskloom's pools are told in one line: an application's own pool in the same
    process logs as psycopg made it."""
    psycopg_pool = pytest.importorskip("psycopg_pool")
    proxy = CuttingProxy(pg_url)
    proxy.down = True
    with caplog.at_level(logging.WARNING, logger="psycopg.pool"):
        pool = psycopg_pool.ConnectionPool(proxy.url, min_size=1, name="app", open=False)
        pool.open(wait=False)
        _until(lambda: caplog.text.count("error connecting in 'app'") >= 2, 10)
        pool.close()
    assert caplog.text.count("error connecting in 'app'") >= 2
