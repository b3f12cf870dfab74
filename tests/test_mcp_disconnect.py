"""A client of ``/mcp`` that goes mid-call (its connection closed before the answer) gives the
call up as ``notifications/cancelled`` does: a waiting tool stops at its next look, and its
request thread and its session's order are free again. A call answered as an MCP task goes on
whatever becomes of the request that made it."""

from __future__ import annotations

import functools
import json
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

import taskloom
from taskloom._pools import REQUESTS
from tests.mcp_tasks_client import envelope
from tests.test_mcp_http import ACCEPT, HELLO, _serve_logged

WAIT = {"name": "goal_wait", "arguments": {"wait_s": 300}}
BOUND = {"X-Taskloom-Thread": "release", "X-Taskloom-Tools": "all"}


def _modern(
    method: str, params: dict[str, Any], tasks: bool = False
) -> tuple[dict[str, str], bytes]:
    """The headers and body of a 2026-07-28 request bound to the thread ``release``."""
    name = params.get("name") or params.get("taskId")
    headers = {
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
        "Mcp-Name": str(name),
        **BOUND,
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method}
    body["params"] = {**params, "_meta": envelope(tasks)}
    return headers, json.dumps(body).encode()


def _answer(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    text = response.text
    data = text.split("data: ", 1)[1] if text.startswith("event:") else text
    return dict(json.loads(data))


def _within(deadline: float, post: Callable[[], httpx.Response]) -> dict[str, Any]:
    """The answer ``post`` gets within ``deadline`` seconds (far under the 300 s of the
    waits given up: SSE pings keep a connection's read timeout from ending it)."""
    got: list[httpx.Response] = []
    caller = threading.Thread(target=lambda: got.append(post()), daemon=True)
    caller.start()
    caller.join(deadline)
    assert got, f"no answer within {deadline} s"
    return _answer(got[0])


def _raw(port: int, headers: dict[str, str], body: bytes) -> socket.socket:
    """A POST to ``/mcp`` sent on a connection of its own, left open."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    conn.sendall(head.encode() + b"\r\n" + body)
    return conn


def _goal(db: str) -> None:
    with taskloom.connect(db) as tl:
        tl.goal("release").set("Ship v2.0")


def test_a_session_call_whose_client_goes_is_cancelled(tmp_path: Path) -> None:
    """A 2025-11-25 session's ``goal_wait`` (300 s), its client gone once the answer's SSE
    stream opened: the session's next call answers at once, where it waited behind the
    abandoned wait (the session's calls apply in order) for the whole 300 s."""
    db = f"sqlite:///{tmp_path / 'session.db'}"
    _goal(db)
    proc, port, log = _serve_logged(tmp_path, db)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json", **BOUND}
        opened = httpx.post(url, json=HELLO, headers=headers, timeout=30)
        headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        headers["MCP-Protocol-Version"] = "2025-11-25"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        httpx.post(url, json=initialized, headers=headers, timeout=30)
        wait = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": WAIT}
        with (
            httpx.Client(timeout=30) as client,
            client.stream("POST", url, json=wait, headers=headers) as stream,
        ):
            assert stream.status_code == 200
            time.sleep(1)  # the wait has begun; then the client goes
        get = {"name": "goal_get", "arguments": {}}
        after = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": get}
        post = functools.partial(httpx.post, url, json=after, headers=headers, timeout=30)
        answered = _within(60, post)
    finally:
        proc.kill()
        proc.wait()
    assert answered["id"] == 2 and "Ship v2.0" in answered["result"]["content"][0]["text"]
    said = log.read_text(encoding="utf-8")
    assert "ERROR" not in said and "Traceback" not in said, said


def test_2026_calls_whose_clients_go_free_their_threads(tmp_path: Path) -> None:
    """More 2026-07-28 ``goal_wait`` calls than the server has request threads, each client
    gone mid-wait, before the answer (a JSON answer) and once it was an SSE stream: a call
    after them answers at once, where it waited for a thread."""
    db = f"sqlite:///{tmp_path / 'modern.db'}"
    _goal(db)
    proc, port, log = _serve_logged(tmp_path, db)
    url = f"http://127.0.0.1:{port}/mcp"
    crowd = REQUESTS.workers + 1
    answers = []
    try:
        for streamed in (False, True):
            conns = [_raw(port, *_modern("tools/call", WAIT)) for _ in range(crowd)]
            if streamed:  # the server answers as SSE once the call has run a while
                heads = [conn.recv(4096) for conn in conns]
                assert all(b"text/event-stream" in head for head in heads), heads[0]
            else:
                time.sleep(1)
            for conn in conns:
                conn.close()
            headers, body = _modern("tools/call", {"name": "goal_get", "arguments": {}})
            post = functools.partial(httpx.post, url, content=body, headers=headers, timeout=30)
            answers.append(_within(60, post))
    finally:
        proc.kill()
        proc.wait()
    for answer in answers:
        assert "Ship v2.0" in answer["result"]["content"][0]["text"], answer
    said = log.read_text(encoding="utf-8")
    assert "ERROR" not in said and "Traceback" not in said, said


def test_a_task_goes_on_when_the_request_that_made_it_has_gone(tmp_path: Path) -> None:
    """A ``goal_wait`` answered as an MCP task, its client gone: the task keeps working and
    completes when the goal does."""
    db = f"sqlite:///{tmp_path / 'task.db'}"
    _goal(db)
    proc, port, log = _serve_logged(tmp_path, db)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        headers, body = _modern("tools/call", WAIT, tasks=True)
        with (
            httpx.Client(timeout=30) as client,
            client.stream("POST", url, content=body, headers=headers) as stream,
        ):
            created = json.loads(stream.read())["result"]
        assert created["resultType"] == "task", created
        get_headers, get = _modern("tasks/get", {"taskId": created["taskId"]})
        time.sleep(1)
        working = _answer(httpx.post(url, content=get, headers=get_headers, timeout=30))
        with taskloom.connect(db) as tl:
            tl.goal("release").complete()
        deadline = time.monotonic() + 30
        while True:
            done = _answer(httpx.post(url, content=get, headers=get_headers, timeout=30))
            if done["result"]["status"] != "working" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    assert working["result"]["status"] == "working", working
    assert done["result"]["status"] == "completed", done
    assert "The goal has ended" in json.dumps(done["result"]["result"])
    said = log.read_text(encoding="utf-8")
    assert "ERROR" not in said and "Traceback" not in said, said
