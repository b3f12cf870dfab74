"""Two ``taskloom serve`` processes on one database: each streams what the other wrote.

This is the load-balancer setup of docs/postgres.md: a browser connected to either process
sees a change made through the other (and through any other writer), on both backends.
"""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx
import pytest

import taskloom
from tests.conftest import subprocess_env
from tests.test_server import body_id, browser_events, read_events, seq, sse_frames


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_serve(
    port: int, db: str, *args: str, stderr: IO[str] | int = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    """``taskloom serve`` on ``port`` over ``db`` in its own process: its standard output
    dropped, its errors to ``stderr``."""
    return subprocess.Popen(
        [sys.executable, "-m", "taskloom", "serve", "--port", str(port), "--db", db, *args],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )


@contextlib.contextmanager
def running(
    port: int, db: str, *args: str, stderr: IO[str] | int = subprocess.DEVNULL
) -> Iterator[subprocess.Popen[bytes]]:
    """:func:`start_serve` for the block; killed after it if it still runs."""
    proc = start_serve(port, db, *args, stderr=stderr)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def assert_logged_no_error(stderr: IO[str], *also: str) -> None:
    """What the server wrote to ``stderr`` holds no traceback, no ``ERROR`` and none of
    ``also``."""
    stderr.seek(0)
    logged = stderr.read()
    for word in ("Traceback", "ERROR", *also):
        assert word not in logged, logged


def wait_until_serving(proc: subprocess.Popen[bytes], base: str) -> None:
    """Until ``taskloom serve`` answers at ``base`` (or fail if it died)."""
    while True:
        assert proc.poll() is None, "taskloom serve exited"
        try:
            httpx.get(f"{base}/api/threads", timeout=1)
            return
        except httpx.TransportError:
            threading.Event().wait(0.1)


@pytest.fixture
def two_servers(db_url: str) -> Iterator[list[str]]:
    with taskloom.connect(db_url) as tl:
        tl.board("t").add("first")  # create the schema before two processes race to
    ports = [free_port(), free_port()]
    procs = [start_serve(p, db_url) for p in ports]
    try:
        for proc, port in zip(procs, ports, strict=True):
            wait_until_serving(proc, f"http://127.0.0.1:{port}")
        yield [f"http://127.0.0.1:{p}" for p in ports]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


@pytest.mark.slow
def test_each_server_streams_what_the_other_wrote(two_servers: list[str], db_url: str) -> None:
    with taskloom.connect(db_url) as tl:
        card = tl.board("t").list()["cards"][0]["id"]
    first = read_events(f"{two_servers[0]}/api/events?thread=t", 1)[0]
    cursor = body_id(first)  # the head, which the opening's snapshots were at
    for writer, reader in [(0, 1), (1, 0)]:
        got: list[dict[str, str]] = []
        url = f"{two_servers[reader]}/api/events?thread=t"
        thread = threading.Thread(
            target=lambda u=url, c=cursor, out=got: out.extend(
                read_events(u, 1, headers={"last-event-id": c})
            )
        )
        thread.start()
        status = "in_progress" if writer == 0 else "done"
        response = httpx.post(
            f"{two_servers[writer]}/api/threads/t/cards/{card}/status",
            json={"status": status},
            timeout=30,
        )
        assert response.status_code == 200, response.text
        thread.join(30)
        assert len(got) == 1 and seq(got[0]["id"]) > seq(cursor)
        assert json.loads(got[0]["data"])["data"]["cards"][0]["status"] == status
        cursor = got[0]["id"]


@pytest.mark.slow
def test_sigint_ends_open_streams_cleanly(tmp_path: Path) -> None:
    """Ctrl+C with streams open: each stream's response is completed (the client sees the
    end of the body, not a cut connection) and uvicorn logs no ``ERROR`` for it."""
    url = f"sqlite:///{tmp_path / 'taskloom.db'}"
    with taskloom.connect(url) as tl:
        tl.board("t").add("first")
    port = free_port()
    with (tmp_path / "stderr.txt").open("w+") as stderr:
        with running(port, url, stderr=stderr) as proc:
            base = f"http://127.0.0.1:{port}"
            wait_until_serving(proc, base)
            opened = threading.Barrier(3, timeout=30)
            ended: list[str] = []

            def watch(path: str) -> None:
                try:
                    with httpx.stream("GET", f"{base}{path}", timeout=30) as response:
                        lines = response.iter_lines()
                        next(lines)  # the opening snapshot has arrived: the stream is open
                        opened.wait()
                        for _ in lines:
                            pass
                    ended.append("clean")
                except httpx.HTTPError as exc:
                    ended.append(f"{type(exc).__name__}: {exc}")

            watchers = [
                threading.Thread(target=watch, args=(path,), daemon=True)
                for path in ("/api/events", "/api/events?thread=t")
            ]
            for watcher in watchers:
                watcher.start()
            opened.wait()
            proc.send_signal(signal.SIGINT)
            assert proc.wait(20) == 0
            for watcher in watchers:
                watcher.join(10)
            assert ended == ["clean", "clean"]
        assert_logged_no_error(stderr)


def test_a_client_that_stopped_reading_does_not_keep_the_server_from_stopping(
    tmp_path: Path,
) -> None:
    """A stalled tab or a dead network path: a stream client that never reads while events
    fill its socket. SIGTERM must still stop the server (a deploy, a systemd stop), not wait
    for that client for ever."""
    url = f"sqlite:///{tmp_path / 'stalled.db'}"
    with taskloom.connect(url) as tl:
        tl.board("t").add("first")
    port = free_port()
    with running(port, url) as proc, socket.socket() as stalled:
        wait_until_serving(proc, f"http://127.0.0.1:{port}")
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", port))
        stalled.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        with taskloom.connect(url) as tl:
            for i in range(20):  # megabytes of snapshots the client never reads
                tl.board("t").add(f"card {i}", notes="n" * 20_000)
        threading.Event().wait(1)  # the server has the events queued for the client
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(60)
        except subprocess.TimeoutExpired:
            code = None
        assert code is not None, "taskloom serve was still running 60 s after SIGTERM"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signalled_server_shuts_down_and_exits_0(tmp_path: Path, signum: int) -> None:
    """A stop by the supervisor (systemd, docker: SIGTERM) or by Ctrl+C: the open stream is
    ended, the server shuts down, and it exits 0. uvicorn raised the signal it caught again
    after its graceful shutdown, so the process died of SIGTERM and its supervisor saw a
    crash."""
    url = f"sqlite:///{tmp_path / 'stop.db'}"
    port = free_port()
    with (tmp_path / "stderr.txt").open("w+") as stderr:
        with running(port, url, stderr=stderr) as proc:
            wait_until_serving(proc, f"http://127.0.0.1:{port}")
            events: queue.Queue[dict[str, str]] = queue.Queue()
            reader = stream_into(f"http://127.0.0.1:{port}/api/events?thread=t", events)
            assert events.get(timeout=30)["event"] == "opening"  # a stream is open
            proc.send_signal(signum)
            assert proc.wait(30) == 0
            reader.join(10)
            assert not reader.is_alive(), "the stream was not ended"
        assert_logged_no_error(stderr)


@pytest.mark.parametrize("pause", [0.05, 0.3, 0.6])
def test_a_second_ctrl_c_hurries_the_shutdown_in_one_line(tmp_path: Path, pause: float) -> None:
    """Ctrl-C, then Ctrl-C again ``pause`` seconds later: during the shutdown it hurries it
    (``Interrupted: …``, exit 130), once the server is down it changes nothing (exit 0). It
    logged the lifespan's CancelledError traceback, or (the interpreter winding down) killed
    the process by SIGINT without a word."""
    url = f"sqlite:///{tmp_path / 'stop.db'}"
    port = free_port()
    with (tmp_path / "stderr.txt").open("w+") as stderr:
        with running(port, url, stderr=stderr) as proc:
            wait_until_serving(proc, f"http://127.0.0.1:{port}")
            events: queue.Queue[dict[str, str]] = queue.Queue()
            stream_into(f"http://127.0.0.1:{port}/api/events?thread=t", events)
            assert events.get(timeout=30)["event"] == "opening"  # a stream is open
            proc.send_signal(signal.SIGINT)
            threading.Event().wait(pause)
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)
            code = proc.wait(30)
        stderr.seek(0)
        last = stderr.read().splitlines()[-1]
        assert code in (0, 130), code
        if code == 130:
            assert last == "Interrupted: the shutdown was hurried; open connections were cut."
        assert_logged_no_error(stderr)


@contextlib.contextmanager
def serving(db_url: str, *args: str) -> Iterator[str]:
    """A ``taskloom serve`` process on ``db_url``: its base URL, while the block runs."""
    port = free_port()
    proc = start_serve(port, db_url, *args)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(proc, base)
        yield base
    finally:
        proc.terminate()
        proc.wait(10)


def stream_into(url: str, into: queue.Queue[dict[str, str]]) -> threading.Thread:
    """Read the SSE stream at ``url`` on a thread of its own, each event (markers too) put on
    ``into`` as a browser dispatches it."""

    def read() -> None:
        with contextlib.suppress(httpx.HTTPError), httpx.stream("GET", url, timeout=None) as got:
            for event in browser_events(sse_frames(got.iter_lines()), "", markers=True):
                into.put(event)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_a_write_through_one_server_reaches_the_streams_of_another(db_url: str) -> None:
    """Two servers on one PostgreSQL, as behind a load balancer. The reader is told never to
    poll (``--poll 86400``): what it streams, the writers' NOTIFY woke it for."""
    with taskloom.connect(db_url) as tl:
        card = tl.board("t").add("first")["cards"][0]["id"]
    with serving(db_url) as writer, serving(db_url, "--poll", "86400") as reader:
        events: queue.Queue[dict[str, str]] = queue.Queue()
        stream_into(f"{reader}/api/events?thread=t", events)
        opening = [events.get(timeout=30)["event"] for _ in range(3)]
        assert opening == ["opening", "todo_state", "opened"]  # the reader's hub listens now
        for status in ("in_progress", "done"):
            answer = httpx.post(
                f"{writer}/api/threads/t/cards/{card}/status", json={"status": status}, timeout=30
            )
            assert answer.status_code == 200, answer.text
            got = events.get(timeout=30)
            assert got["event"] == "todo_change"  # the change alone: the one card it changed
            assert [(c["id"], c["status"]) for c in json.loads(got["data"])["data"]["cards"]] == [
                (card, status)
            ]
        # A writer that is no server at all (the CLI, a worker) wakes it too.
        subprocess.run(
            [sys.executable, "-m", "taskloom", "board", "add", "t", "cli", "--db", db_url],
            env=subprocess_env(),
            check=True,
            capture_output=True,
        )
        got = events.get(timeout=30)
        assert got["event"] == "todo_change"
        assert [c["title"] for c in json.loads(got["data"])["data"]["cards"]] == ["cli"]
