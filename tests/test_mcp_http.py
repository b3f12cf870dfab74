"""``/mcp`` over streamable HTTP as a client sees it on the wire: a real ``taskloom serve``
on loopback, spoken to with raw HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.conftest import Server

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
