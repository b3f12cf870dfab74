"""What psycopg and its pool log reaches an application's log one line per record."""

from __future__ import annotations

import pytest

from tests.test_store_postgres import log_refused_pool


def test_the_pools_reconnect_warnings_are_one_line_each(caplog: pytest.LogCaptureFixture) -> None:
    """libpq's reason for a refused connection ends with its hint on a line of its own
    ("Is the server running on that host…"), which ``taskloom serve``'s log showed as a line
    of its own, apart from its record; it is joined to the record's one line."""
    log_refused_pool("app", caplog)
    messages = [r.getMessage() for r in caplog.records if "error connecting" in r.getMessage()]
    assert messages, caplog.text
    assert all("\n" not in m for m in messages), messages
    assert all("Connection refused Is the server running" in m for m in messages), messages
