"""``/mcp`` on ``taskloom serve``: streamable HTTP, for clients of protocol 2025-11-25 (with a
session) and 2026-07-28 (without).

Each request's headers bind it (:mod:`taskloom.mcp.binding`): ``X-Taskloom-Thread``,
``X-Taskloom-Agent`` and ``X-Taskloom-Tools`` (or ``?tools=``). A call without a thread gets
a tool error naming the ``X-Taskloom-Thread`` header from every tool that needs one.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers

from taskloom.mcp.messages import BOM, MAX_MESSAGE, jsonrpc_error, read_line, too_long
from taskloom.mcp.server import McpConfig, build_with_runner

if TYPE_CHECKING:
    from taskloom.client import Taskloom
    from taskloom.mcp.runs import CallRunner

MAX_HTTP_SESSIONS = 1_000
"""Open /mcp sessions at most (each ~35 KB until 30 minutes idle; the SDK allows 10,000)."""


MAX_HTTP_MESSAGE = MAX_MESSAGE
"""The largest message ``/mcp`` reads (the SDK's own limit)."""


class CheckedMessages:
    """The ``/mcp`` endpoint, with a POSTed body checked as stdio checks a line
    (:func:`read_line`): a body that is not one JSON-RPC message is answered -32700 or -32600
    with a short reason, as over stdio, where the SDK answered -32602 ("invalid params")
    with its model's whole validation dump; a body that is not ``application/json`` is
    answered 415 in the same shape (the SDK answers it with a plain-text 400). A GET that
    resumes a stream (``Last-Event-ID``) opens a new one: the server keeps no events to
    replay, and the SDK answered it 500 without a body; its stream, ended as the server
    shuts down, is ended as a response (uvicorn logged an error for each one left open).
    A request of a 2025-11-25 session whose client goes (its response stream closed before
    the answer) is cancelled as ``notifications/cancelled`` cancels it (:func:`_dropped`):
    the SDK kept it running, its request thread and the session's order held up to its
    whole ``wait_s``; a 2026-07-28 request the SDK cancels itself.
    Every other request goes to ``app`` as sent."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            await _completed(self.app, _without(scope, LAST_EVENT_ID), receive, send)
            return
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        content_type = Headers(scope=scope).get("content-type", "").lower()
        if not content_type.startswith("application/json"):  # as the SDK tests it
            why = "send the message as Content-Type: application/json"
            refused = jsonrpc_error(None, types.INVALID_REQUEST, why)
            await self._answer(scope, receive, send, 415, refused)
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > MAX_HTTP_MESSAGE:
                await self._answer(scope, receive, send, 413, None)
                return
            if not message.get("more_body", False):
                break
        body = body.removeprefix(BOM.encode())  # ignored, as over stdio (the SDK refused it)
        try:
            checked = read_line(body.decode("utf-8"))
        except UnicodeDecodeError:
            checked = jsonrpc_error(None, types.PARSE_ERROR, "not UTF-8")
        if isinstance(checked, types.JSONRPCError):
            await self._answer(scope, receive, send, 400, checked)
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        message = checked.message
        if isinstance(message, types.JSONRPCRequest) and _in_session(scope):
            await _dropped(self.app, scope, replay, send, message.id)
            return
        await self.app(scope, replay, send)

    @staticmethod
    async def _answer(
        scope: Any, receive: Any, send: Any, status: int, error: types.JSONRPCError | None
    ) -> None:
        from starlette.responses import JSONResponse

        if error is None:
            error = too_long()
        content = error.model_dump(by_alias=True, mode="json", exclude_unset=True)
        await JSONResponse(content, status)(scope, receive, send)


LAST_EVENT_ID = b"last-event-id"
SESSION_ID = b"mcp-session-id"
PROTOCOL_VERSION = b"mcp-protocol-version"
CANCEL_GRACE = 5.0
"""Seconds a gone client's cancellation may take to reach its session (it is shielded from
a server shutting down, and must not hold that up for long)."""


def _in_session(scope: Any) -> bool:
    """Whether a POST goes to a 2025-11-25 session (the SDK routes any other protocol
    version it is sent to the 2026-07-28 entry, which has no session)."""
    headers = Headers(scope=scope)
    version = headers.get(PROTOCOL_VERSION.decode())
    return SESSION_ID.decode() in headers and (
        version is None or version in HANDSHAKE_PROTOCOL_VERSIONS
    )


async def _dropped(
    app: Any, scope: Any, receive: Any, send: Any, request_id: types.RequestId
) -> None:
    """Run ``app`` on a session's request; if its client disconnects before the answer is
    sent, cancel the request as the client's own ``notifications/cancelled`` would, posted
    to the session with the request's headers: the call's ``cancelled`` turns true, a wait
    stops at its next look, and the session's next call need not wait for it."""
    state = {"done": False, "gone": False}

    async def sending(message: Any) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            state["done"] = True
        await send(message)

    async def receiving() -> Any:
        message = await receive()
        if message["type"] == "http.disconnect" and not state["done"]:
            state["gone"] = True
        return message

    try:
        await app(scope, receiving, sending)
    finally:
        if state["gone"] and not state["done"]:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE):
                await _cancel(app, scope, request_id)


async def _cancel(app: Any, scope: Any, request_id: types.RequestId) -> None:
    """Post ``notifications/cancelled`` for ``request_id`` to the session ``scope`` names."""
    params = {"requestId": request_id, "reason": "the client closed the connection"}
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
    body = json.dumps(note).encode()
    sent = False

    async def receive() -> Any:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def discard(_: Any) -> None:
        return None

    headers = [(k, v) for k, v in scope.get("headers") or [] if k.lower() != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    with contextlib.suppress(Exception):  # the session has ended meanwhile: nothing runs
        await app({**scope, "headers": headers}, receive, discard)


async def _completed(app: Any, scope: Any, receive: Any, send: Any) -> None:
    """Run ``app``, then end the response it started and left unfinished (an SSE stream the
    SDK stops at shutdown without its last body)."""
    state = {"started": False, "done": False}

    async def sending(message: Any) -> None:
        if message["type"] == "http.response.start":
            state["started"] = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            state["done"] = True
        await send(message)

    await app(scope, receive, sending)
    if state["started"] and not state["done"]:
        with contextlib.suppress(OSError, RuntimeError):  # the client has gone meanwhile
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def _without(scope: Any, header: bytes) -> Any:
    """``scope`` without the request header ``header`` (a lower-case name)."""
    headers = scope.get("headers") or []
    kept = [(name, value) for name, value in headers if name.lower() != header]
    return scope if len(kept) == len(headers) else {**scope, "headers": kept}


def http_session_manager(tl: Taskloom, config: McpConfig | None = None) -> Any:
    """The streamable-HTTP MCP endpoint for ``taskloom serve`` (run it in the app lifespan).

    Which Host and Origin may reach it is the server's request guard's to say, as for every
    route (:mod:`taskloom.server.security`: on a loopback server, local names and pages only,
    so a web page elsewhere cannot reach the tools through the user's browser).
    """
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server, runner = build_with_runner(tl, None, config)
    manager = StreamableHTTPSessionManager(
        server, security_settings=security, max_sessions=MAX_HTTP_SESSIONS
    )
    return _StopsCalls(manager, runner)


class _StopsCalls:
    """The SDK's session manager (every attribute passed on), whose run (the app's
    lifespan) ends by stopping the server's slow calls
    (:meth:`~taskloom.mcp.runs.CallRunner.stop`)."""

    def __init__(self, manager: Any, runner: CallRunner) -> None:
        self._manager = manager
        self._runner = runner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._manager, name)

    def give_up(self) -> None:
        """The server starts to shut down: the calls that wait in their requests stop at
        their next look and answer, so their connections close before the shutdown's
        grace runs out (then they were cut off with a 500 and a traceback)."""
        self._runner.giving_up.set()

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        try:
            async with self._manager.run():
                yield
        finally:
            await anyio.to_thread.run_sync(self._runner.stop)
