"""What psycopg and its pool log reaches an application's log one line per record."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from taskloom.store.postgres import PostgresStore


def test_the_pools_reconnect_warnings_are_one_line_each(caplog: pytest.LogCaptureFixture) -> None:
    """libpq's reason for a refused connection ends with its hint on a line of its own
    ("Is the server running on that host…"), which ``taskloom serve``'s log showed as a line
    of its own, apart from its record; it is joined to the record's one line."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed below: nothing listens there
    store = PostgresStore(f"postgresql://app@127.0.0.1:{port}/tl")
    with caplog.at_level(logging.WARNING, logger="psycopg.pool"):
        store.pool.open(wait=False)
        deadline = time.monotonic() + 10
        while "error connecting" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        store.close()
    messages = [r.getMessage() for r in caplog.records if "error connecting" in r.getMessage()]
    assert messages, caplog.text
    assert all("\n" not in m for m in messages), messages
    assert all("Connection refused Is the server running" in m for m in messages), messages
