"""``taskloom serve`` as its own process, fed what a careless network or a careless deploy
sends: a client gone mid-body, a database it may read but not write."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import httpx
import pytest

import taskloom
from taskloom.errors import StoreError
from taskloom.store.pg_url import join_url
from tests.conftest import subprocess_env
from tests.test_serve_processes import (
    assert_logged_no_error,
    free_port,
    running,
    wait_until_serving,
)

HALF_BODIES = [
    b"POST /api/threads/t/goal/pause HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"reason": "hal',
    b"POST /api/tasks/nope/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{",
    b"POST /api/threads/t/cards/c1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 40\r\n\r\n",
]


def test_a_client_gone_mid_body_leaves_no_traceback(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'taskloom.db'}"
    with taskloom.connect(url) as tl:
        tl.board("t").add("first")
    port = free_port()
    with (tmp_path / "stderr.txt").open("w+") as stderr:
        with running(port, url, stderr=stderr) as proc:
            base = f"http://127.0.0.1:{port}"
            wait_until_serving(proc, base)
            for head_and_half in HALF_BODIES:
                with socket.create_connection(("127.0.0.1", port)) as sock:
                    sock.sendall(head_and_half)
            # The server still answers, and what it was sent whole it does.
            answer = httpx.post(f"{base}/api/threads/t/goal/pause", json={}, timeout=30)
            assert answer.status_code in (200, 404, 409), answer.text
            proc.send_signal(signal.SIGINT)  # a clean stop finishes every request first
            assert proc.wait(30) == 0
        assert_logged_no_error(stderr, "ClientDisconnect")


@contextlib.contextmanager
def read_only(db_url: str, backend: str) -> Iterator[str]:
    """The URL of the same database, now readable and not writable: on SQLite the file made
    immutable (``chattr +i``, which binds root too) or, for a user who is not root, read-only;
    on PostgreSQL a session whose transactions are read-only."""
    if backend == "postgres":
        parts = urlsplit(db_url)
        query = [
            (k, f"{v} -cdefault_transaction_read_only=on" if k == "options" else v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
        ]
        yield join_url(parts._replace(query=urlencode(query, quote_via=quote)))
        return
    path = Path(db_url.removeprefix("sqlite:///"))
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0:
        try:
            yield db_url
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        return
    if os.geteuid() == 0:
        pytest.skip("chattr +i is refused here, and root writes a read-only file anyway")
    path.chmod(0o444)
    try:
        yield db_url
    finally:
        path.chmod(0o644)


def test_serve_refuses_a_database_it_cannot_write(db_url: str, backend: str) -> None:
    with taskloom.connect(db_url) as tl:
        tl.board("t").add("first")  # the database exists, whole, and closed (no -wal left)
    port = free_port()
    with read_only(db_url, backend) as url:
        with taskloom.connect(url) as tl:  # what a person sees: it reads, and no write works
            assert tl.board("t").list()["cards"][0]["title"] == "first"
            with pytest.raises(StoreError):
                tl.board("t").add("second")
        done = subprocess.run(
            [sys.executable, "-m", "taskloom", "serve", "--port", str(port), "--db", url],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: cannot write the database"), lines
    assert "panel on" not in done.stderr and not done.stdout
    with socket.socket() as probe:  # nothing was left listening
        assert probe.connect_ex(("127.0.0.1", port)) != 0
