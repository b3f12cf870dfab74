"""The HTTP protocol of ``taskloom serve`` against clients that never finish a request:
a header without end, a request head sent a byte at a time, a connection that says nothing.
Real sockets on loopback, against the protocol ``serve`` runs."""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from taskloom.client import Taskloom
from taskloom.server import http, routes
from taskloom.server.app import create_app
from tests.conftest import serving
from tests.test_server import read_events

HEAD_S = 0.5


@pytest.fixture
def server(tl: Taskloom, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, int]]:
    monkeypatch.setattr(http, "REQUEST_HEAD_S", HEAD_S)
    monkeypatch.setattr(routes, "REQUEST_BODY_S", HEAD_S)
    monkeypatch.setattr(http, "WRITE_STALL_S", HEAD_S)
    app = create_app(tl, poll_s=0.05)
    with serving(app, log_level="critical", http=http.DeadlineH11Protocol) as port:
        yield "127.0.0.1", port


def closed_by_server(sock: socket.socket, give_up_s: float = 30) -> bool:
    """Whether the server closes ``sock`` (an empty read, or a reset) before ``give_up_s``."""
    sock.settimeout(give_up_s)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def test_a_request_head_that_never_ends_is_closed(server: tuple[str, int]) -> None:
    """One byte, then nothing: the connection was kept for ever, and twenty thousand of them
    took every file descriptor."""
    with socket.create_connection(server) as quiet, socket.create_connection(server) as loris:
        loris.sendall(b"G")
        assert closed_by_server(loris) and closed_by_server(quiet)


def test_a_head_trickled_a_byte_at_a_time_is_closed_at_its_deadline(
    server: tuple[str, int],
) -> None:
    """uvicorn's keep-alive timer is reset by every byte: a trickle kept it off."""
    with socket.create_connection(server) as sock:
        sock.settimeout(0.05)
        closed = False
        for byte in b"GET / HTTP/1.1\r\nX-Slow: " + b"a" * 1000:
            try:
                sock.sendall(bytes([byte]))
                if sock.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
        assert closed


def test_a_huge_header_is_refused_and_others_are_served_meanwhile(
    server: tuple[str, int],
) -> None:
    """httptools read a 400 MiB header whole, the event loop busy all along."""
    url = f"http://{server[0]}:{server[1]}"
    with socket.create_connection(server) as big:
        big.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ")
        try:
            for _ in range(64):
                big.sendall(b"a" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert closed_by_server(big)
        assert httpx.get(f"{url}/api/threads", timeout=10).status_code == 200


def test_a_stream_outlives_the_head_deadline_and_keep_alive_works(
    tl: Taskloom, server: tuple[str, int]
) -> None:
    url = f"http://{server[0]}:{server[1]}"
    tl.board("t").add("first")
    with httpx.Client(timeout=10) as client:  # one connection, two requests
        assert client.get(f"{url}/api/threads").status_code == 200
        time.sleep(HEAD_S * 2)
        assert client.get(f"{url}/api/threads").status_code == 200

    def later() -> None:
        time.sleep(HEAD_S * 3)
        tl.board("t").add("second, after the deadline")

    writer = threading.Thread(target=later)
    writer.start()
    events = read_events(f"{url}/api/events?thread=t&tasks=0", 2)
    writer.join()
    assert "second, after the deadline" in events[1]["data"]


def answer_then_close(sock: socket.socket, give_up_s: float = 5) -> bytes:
    """What the server sends on ``sock`` before it closes it (``b""`` appended: timed out)."""
    sock.settimeout(give_up_s)
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except TimeoutError:
        return got + b"<no close>"
    return got


@pytest.mark.parametrize(
    ("length", "status"),
    [(b"1000000000", b"413 "), (b"100", b"408 ")],
)
def test_a_body_announced_and_not_sent_is_answered_and_closed(
    tl: Taskloom, server: tuple[str, int], length: bytes, status: bytes
) -> None:
    """A Content-Length of a gigabyte (or a hundred bytes) and one byte sent: the handler
    waited for the rest for ever, holding the connection. Past the limit it is refused
    unread; a body that stops arriving is refused at its deadline; either way the
    connection closes, so the rest of the body is never read."""
    tl.goal("t").set("Obj")
    url = f"http://{server[0]}:{server[1]}"
    with socket.create_connection(server) as sock:
        sock.sendall(
            b"POST /api/threads/t/goal/pause HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: " + length + b"\r\n\r\n{"
        )
        answer = answer_then_close(sock)
        assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]
        assert b"<no close>" not in answer
        assert httpx.get(f"{url}/api/threads/t/goal", timeout=10).json()["goal"]["status"] == (
            "active"
        )


def test_a_stream_client_that_stops_reading_is_dropped_and_others_go_on(
    tl: Taskloom, server: tuple[str, int]
) -> None:
    """A client that never read its event stream kept it waiting on the socket for ever,
    with the unsent frames and the stream's pending events in the server's memory."""
    url = f"http://{server[0]}:{server[1]}"
    tl.board("big0").add("start")
    with socket.socket() as stuck:
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(server)
        stuck.sendall(b"GET /api/events?tasks=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        stuck.settimeout(5)
        assert stuck.recv(1024).startswith(b"HTTP/1.1 200 ")
        for i in range(300):  # some 18 MB of events, past every buffer on the way
            tl.board(f"big{i % 20}").add(f"card {i}", notes="n" * 60_000)
        events = read_events(f"{url}/api/events?thread=big0&tasks=0&after=0", 16)
        assert "card 280" in events[-1]["data"]
        time.sleep(HEAD_S * 6)
        assert closed_by_server(stuck, give_up_s=5)


def test_stream_clients_that_vanish_mid_opening_leave_no_log_lines(
    tl: Taskloom, caplog: pytest.LogCaptureFixture
) -> None:
    """Where uvloop is missing (Windows), asyncio's own loop warned "socket.send() raised
    exception." for each frame a stream wrote in the moment between its client's reset and
    the server noticing it: a few dozen lines per client gone mid-opening, thousands in the
    log for a crowd of closed tabs."""
    for i in range(40):
        tl.board(f"big{i}").add(f"card {i}", notes="n" * 20_000)
    app = create_app(tl, poll_s=0.05)
    with (
        caplog.at_level(logging.WARNING, logger="asyncio"),
        serving(app, log_level="critical", http=http.DeadlineH11Protocol, loop="asyncio") as port,
    ):
        for _ in range(20):
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(b"GET /api/events?tasks=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                sock.settimeout(5)
                assert sock.recv(1).startswith(b"H")
                # A reset, not a close: the server's next send fails at once.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        time.sleep(0.5)
        assert httpx.get(f"http://127.0.0.1:{port}/api/threads", timeout=10).status_code == 200
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


class Kept(logging.Handler):
    """The messages of the records it is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_request_asking_to_upgrade_is_answered_without_a_log_line(tl: Taskloom) -> None:
    """``curl --http2`` on plain HTTP asks to upgrade to h2c: each such request logged two
    uvicorn warnings at ``serve``'s log level, the second telling the operator to install a
    WebSocket library this server has no use for."""
    handler = Kept()
    app = create_app(tl, mcp=False)
    # log_level "warning": as taskloom serve runs
    with serving(app, log_level="warning", http=http.DeadlineH11Protocol) as port:
        logging.getLogger("uvicorn.error").addHandler(handler)
        try:
            url = f"http://127.0.0.1:{port}/api/tasks/stats"
            for upgrade in ("h2c", "websocket"):
                answer = httpx.get(url, headers={"Connection": "Upgrade", "Upgrade": upgrade})
                assert answer.status_code == 200 and answer.json()["total"] == 0
        finally:
            logging.getLogger("uvicorn.error").removeHandler(handler)
    assert handler.messages == []
