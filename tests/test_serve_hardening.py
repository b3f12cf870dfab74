"""``taskloom serve`` as its own process, fed what a careless network or a careless deploy
sends: a client gone mid-body, a database it may read but not write."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

import taskloom
from tests.conftest import subprocess_env
from tests.test_serve_processes import free_port, wait_until_serving

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
    stderr = (tmp_path / "stderr.txt").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskloom", "serve", "--port", str(port), "--db", url],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    try:
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
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    stderr.seek(0)
    logged = stderr.read()
    stderr.close()
    assert "Traceback" not in logged and "ERROR" not in logged, logged
    assert "ClientDisconnect" not in logged, logged
