"""``/mcp`` over streamable HTTP as a client sees it on the wire: a real ``taskloom serve``
on loopback, spoken to with raw HTTP."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

import taskloom
from tests.conftest import Server, subprocess_env

ACCEPT = "application/json, text/event-stream"
HELLO = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def _open_session(url: str) -> str:
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    opened = httpx.post(f"{url}/mcp", json=HELLO, headers=headers, timeout=30)
    assert opened.status_code == 200, opened.text
    return opened.headers["mcp-session-id"]


def test_a_get_stream_that_asks_to_resume_opens_a_new_stream(tmp_path: Path) -> None:
    """A client that reconnects its GET stream with ``Last-Event-ID`` (as SSE clients do)
    gets a new stream: the server keeps no events to replay. It was answered 500 with no
    body, and the server logged an ASGI error."""
    server = Server(f"sqlite:///{tmp_path / 'resume.db'}")
    server.start()
    try:
        session = _open_session(server.url)
        headers = {
            "Accept": "text/event-stream",
            "Mcp-Session-Id": session,
            "MCP-Protocol-Version": "2025-11-25",
            "Last-Event-ID": "0",
        }
        with httpx.stream("GET", f"{server.url}/mcp", headers=headers, timeout=30) as resumed:
            status, kind = resumed.status_code, resumed.headers.get("content-type", "")
            assert resumed.headers.get("mcp-session-id") == session
        assert status == 200 and kind.startswith("text/event-stream")
    finally:
        server.kill()


def _call(
    url: str, headers: dict[str, str], call: str | dict[str, Any], modern: bool
) -> dict[str, Any]:
    """A call (``todo add`` of ``call`` if it is text) as a 2025-11-25 session's or as a
    2026-07-28 request (its envelope, no handshake); its result."""
    add = {"name": "todo", "arguments": {"op": "add", "content": call}}
    params: dict[str, Any] = dict(add if isinstance(call, str) else call)
    sent = {"Accept": ACCEPT, "Content-Type": "application/json", **headers}
    if modern:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        sent.update({"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"})
        sent["Mcp-Name"] = params["name"]
    else:
        sent["MCP-Protocol-Version"] = "2025-11-25"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    answer = httpx.post(f"{url}/mcp", json=body, headers=sent, timeout=30)
    assert answer.status_code == 200, answer.text
    text = answer.text
    data = text.split("data: ", 1)[1] if text.startswith("event:") else text
    return dict(json.loads(data)["result"])


def test_a_2026_request_is_bound_by_its_own_headers_whatever_session_id_it_sends(
    tmp_path: Path,
) -> None:
    """A 2026-07-28 request has no session: one that carries a 2025-11-25 session's
    ``Mcp-Session-Id`` acts on the thread its own header names, and leaves that session's
    binding as it was. It was refused as the session's ("bound to thread …"), and could bind
    a session not yet bound to its own thread."""
    db = f"sqlite:///{tmp_path / 'modern.db'}"
    server = Server(db)
    server.start()
    try:
        bound, unbound = _open_session(server.url), _open_session(server.url)
        first = _call(server.url, {"Mcp-Session-Id": bound, "X-Taskloom-Thread": "a"}, "a1", False)
        modern = [
            _call(server.url, {"Mcp-Session-Id": s, "X-Taskloom-Thread": t}, f"{t}1", True)
            for s, t in ((bound, "b"), (unbound, "c"))
        ]
        again = {"Mcp-Session-Id": unbound, "X-Taskloom-Thread": "d"}
        later = _call(server.url, again, "d1", False)
    finally:
        server.kill()
    assert [r["isError"] for r in (first, *modern, later)] == [False] * 4, (modern, later)
    with taskloom.connect(db) as tl:
        boards = {t: [c["title"] for c in tl.board(t).list()["cards"]] for t in "abcd"}
    assert boards == {"a": ["a1"], "b": ["b1"], "c": ["c1"], "d": ["d1"]}


def test_a_body_that_starts_with_a_byte_order_mark_is_served(tmp_path: Path) -> None:
    """A POSTed message with a byte order mark before it is served, as over stdio; it was
    refused -32600 ("not a JSON-RPC message")."""
    server = Server(f"sqlite:///{tmp_path / 'bom.db'}")
    server.start()
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    try:
        body = "\ufeff" + json.dumps(HELLO)
        opened = httpx.post(f"{server.url}/mcp", content=body.encode(), headers=headers)
    finally:
        server.kill()
    assert opened.status_code == 200 and "mcp-session-id" in opened.headers, opened.text


def test_a_long_call_on_a_thread_the_tools_refuse_is_refused_at_once(tmp_path: Path) -> None:
    """A ``goal_wait`` of a client that takes tasks, sent with a thread header the tools
    refuse (a tab in it), is answered at once with the tool's error, as without a task;
    it was queued as a task, its record naming that thread, to fail later."""
    db = f"sqlite:///{tmp_path / 'bad-thread.db'}"
    server = Server(db)
    server.start()
    try:
        params: dict[str, Any] = {"name": "goal_wait", "arguments": {"wait_s": 1}}
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
        }
        headers = {
            "Accept": ACCEPT,
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "goal_wait",
            "X-Taskloom-Thread": "a\tb",
            "X-Taskloom-Tools": "all",
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        answer = httpx.post(f"{server.url}/mcp", json=body, headers=headers, timeout=30)
    finally:
        server.kill()
    result = answer.json()["result"]
    assert result["resultType"] == "complete" and result["isError"], result
    assert "control characters" in result["content"][0]["text"]
    with taskloom.connect(db) as tl:
        assert tl.queue.list() == []


def _serve_logged(tmp_path: Path, db: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    """``taskloom serve`` on a free port, its log (stderr) in a file; once it answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path / "serve.log"
    with log.open("w", encoding="utf-8") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-m", "taskloom", "serve", f"--port={port}", f"--db={db}"],
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env=subprocess_env(),
        )
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/threads", timeout=5)
            return proc, port, log
        except httpx.TransportError:
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("the server never started") from None
            time.sleep(0.1)


def test_open_get_streams_end_cleanly_when_the_server_stops(tmp_path: Path) -> None:
    """SIGTERM to ``taskloom serve`` with clients' GET streams open: each stream ends as a
    complete response, and the server exits 0 with no error in its log. uvicorn logged
    "ASGI callable returned without completing response" for each stream."""
    proc, port, log = _serve_logged(tmp_path, f"sqlite:///{tmp_path / 'stop.db'}")
    streams: list[socket.socket] = []
    try:
        url = f"http://127.0.0.1:{port}"
        for session in (_open_session(url), _open_session(url)):
            stream = socket.create_connection(("127.0.0.1", port), timeout=30)
            head = f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            head += f"Accept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
            stream.sendall(head.encode())
            assert stream.recv(4096).startswith(b"HTTP/1.1 200")
            streams.append(stream)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        ends = [stream.recv(4096) for stream in streams]
    finally:
        proc.kill()
        for stream in streams:
            stream.close()
    assert all(end.endswith(b"0\r\n\r\n") for end in ends), ends  # the last chunk: complete
    said = log.read_text(encoding="utf-8")
    assert "ERROR" not in said and "Traceback" not in said, said


def test_plain_waits_answer_when_the_server_stops(tmp_path: Path) -> None:
    """SIGTERM to ``taskloom serve`` while ``goal_wait`` calls wait in their requests (no
    task), one of a 2025-11-25 session and one of a 2026-07-28 client: each stops at its
    next look and answers, and the server exits 0 at once with nothing wrong in its log.
    The 2026-07-28 one held the shutdown for its whole grace, then was cut off with a 500
    and a traceback; the session's lost its answer."""
    db = f"sqlite:///{tmp_path / 'waits.db'}"
    with taskloom.connect(db) as tl:
        tl.goal("release").set("Ship v2.0")
    proc, port, log = _serve_logged(tmp_path, db)
    url = f"http://127.0.0.1:{port}"
    answers: dict[str, dict[str, Any]] = {}
    wait = {"name": "goal_wait", "arguments": {"wait_s": 60}}

    def call(how: str, headers: dict[str, str]) -> None:
        answers[how] = _call(url, headers, wait, how == "2026")

    try:
        session = _open_session(url)
        both = {"X-Taskloom-Thread": "release", "X-Taskloom-Tools": "all"}
        callers = [
            threading.Thread(target=call, args=("2025", {**both, "Mcp-Session-Id": session})),
            threading.Thread(target=call, args=("2026", both)),
        ]
        for caller in callers:
            caller.start()
        time.sleep(1.5)  # both are waiting
        proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        status = proc.wait(timeout=30)
        took = time.monotonic() - started
        for caller in callers:
            caller.join(30)
    finally:
        proc.kill()
    assert status == 0 and took < 4, took
    assert set(answers) == {"2025", "2026"}, answers
    for answer in answers.values():
        assert not answer["isError"] and "The goal is still active" in answer["content"][0]["text"]
    said = log.read_text(encoding="utf-8")
    assert "ERROR" not in said and "Traceback" not in said, said
