"""``taskloom serve`` on PostgreSQL while the database cannot be reached: real HTTP on
loopback, the database behind a TCP proxy that can refuse every new connection."""

from __future__ import annotations

import threading
import time
import uuid

import httpx
import pytest

import taskloom
from taskloom.server import hub
from taskloom.server.app import create_app
from taskloom.server.http import DeadlineH11Protocol
from tests.backends import terminate_app
from tests.conftest import serving
from tests.test_store_postgres import CuttingProxy


def listeners() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "taskloom-listen" and t.is_alive()]


def test_streams_refused_during_an_outage_leave_no_listener_behind(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first stream of a server starts its LISTEN, then reads the outbox's head. With the
    database down the read failed and the stream got its 503, but the LISTEN thread stayed,
    retrying, and the next stream started another: a panel retrying through an outage left
    one thread (and, once the database was back, one connection) per attempt."""
    monkeypatch.setattr(hub, "LISTEN_READY_S", 0.5)
    monkeypatch.setattr("taskloom.store.postgres.POOL_TIMEOUT_S", 3.0)
    proxy = CuttingProxy(pg_url)
    name = f"tl-outage-{uuid.uuid4().hex[:12]}"
    before = len(listeners())
    with taskloom.connect(f"{proxy.url}&application_name={name}") as tl:
        tl.board("t").add("before the outage")
        with serving(
            create_app(tl, mcp=False), log_level="critical", http=DeadlineH11Protocol
        ) as port:
            proxy.down = True
            terminate_app(pg_url, name)
            url = f"http://127.0.0.1:{port}/api/events?thread=t"
            for _ in range(3):
                assert httpx.get(url, timeout=30).status_code == 503
            time.sleep(0.2)
            assert len(listeners()) == before
            proxy.down = False
            with httpx.stream("GET", url, timeout=30) as stream:
                assert stream.status_code == 200
                assert len(listeners()) == before + 1  # one LISTEN, the hub's own
