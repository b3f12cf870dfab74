"""An MCP server over the one tool registry (official ``mcp`` SDK, low-level server API).

Tools are listed from the toolbox's registry, so every tool is served with the same name,
description and schema as the OpenAI/Anthropic renderings. The thread (and agent) a call acts
on is fixed by the server's configuration, never by tool arguments; an error result becomes
an MCP tool error (``is_error``) with the reason as text.
Resources: the bound thread's board markdown and goal.

Over stdio the binding is the command line (``taskloom mcp --thread T``), and every line read
is answered: one that is not a JSON-RPC message gets a JSON-RPC error (:func:`read_line`).
Over streamable HTTP (``/mcp`` on ``taskloom serve``) it is the request's
``X-Taskloom-Thread`` and ``X-Taskloom-Agent`` headers, which the client configures once per
connection; a call without a thread header gets a tool error for every tool that needs one.
"""

from __future__ import annotations

import asyncio
import collections
import importlib.metadata
import io
import json
import sys
import weakref
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import is_version_at_least
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from taskloom.client import Taskloom
from taskloom.domain.common import parse_json
from taskloom.domain.errors import InvalidInput, TaskloomError
from taskloom.server.pool import REQUESTS
from taskloom.tools.spec import ToolContext, error_result

BOARD_URI = "taskloom://board"
GOAL_URI = "taskloom://goal"


THREAD_HEADER = "x-taskloom-thread"
AGENT_HEADER = "x-taskloom-agent"
SESSION_HEADER = "mcp-session-id"
MAX_PINNED_SESSIONS = 10_000
MAX_HTTP_SESSIONS = 1_000
"""Open /mcp sessions at most (each ~35 KB until 30 minutes idle; the SDK allows 10,000):
five thousand initializes from any local process held 175 MB."""
"""How many HTTP sessions' bindings a server remembers (the least recently used go first)."""

# ``resources/read`` of a URI the server does not have: -32002 up to protocol 2025-11-25;
# from 2026-07-28 the spec says invalid params (SEP-2164) and clients accept both.
RESOURCE_NOT_FOUND = -32002


def _header(headers: Any, name: str, title: str) -> str | None:
    """A header's value as UTF-8 text, trimmed (``None`` if absent or blank).

    Starlette decodes header bytes as Latin-1, so ``é`` sent as UTF-8 would read as ``Ã©``,
    another thread than ``taskloom mcp --thread é``; Latin-1 gives the bytes back unchanged."""
    value = headers.get(name)
    if value is None:
        return None
    try:
        value = value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        raise InvalidInput(f"the {title} header is not valid UTF-8") from None
    return value.strip() or None


def context_from_headers(request: Any) -> ToolContext:
    """The binding of an HTTP request: its thread and agent headers (never tool arguments).
    Raises :class:`InvalidInput` if either is not UTF-8 text."""
    headers = getattr(request, "headers", None) or {}
    return ToolContext(
        thread_id=_header(headers, THREAD_HEADER, "X-Taskloom-Thread"),
        agent_id=_header(headers, AGENT_HEADER, "X-Taskloom-Agent"),
    )


def build_server(tl: Taskloom, ctx: ToolContext | None) -> Server[Any]:
    """An MCP server bound to one thread (``ctx``), or, with ``ctx=None``, to whatever each
    HTTP request's headers name.

    The SDK runs every request as its own task, so tool calls piped in together would run
    at once and land in any order. Each session's tool calls and resource reads take its
    lock first, before any ``await``: asyncio's lock is first come, first served, so they
    apply in the order received. Over stdio the session is the process; over HTTP it is the
    ``Mcp-Session-Id``, so sessions (other agents) never wait for each other's order."""
    stdio_lock = asyncio.Lock()
    session_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def session_lock(request_ctx: Any) -> asyncio.Lock:
        if ctx is not None:
            return stdio_lock
        headers = getattr(request_ctx.request, "headers", None) or {}
        session = headers.get(SESSION_HEADER)
        if session is None:  # stateless: each request is its own session
            return asyncio.Lock()
        lock = session_locks.get(session)
        if lock is None:  # held only while a call of the session runs or waits
            lock = session_locks[session] = asyncio.Lock()
        return lock

    pinned: collections.OrderedDict[str, ToolContext] = collections.OrderedDict()

    def bound(request_ctx: Any) -> ToolContext:
        """The call's thread and agent: the process's over stdio; over HTTP, those the
        session's calls named first, which the rest of the session must repeat or leave out.
        A session that changed its thread header midway acted on another thread under its
        old session; one that changed its agent header claimed another agent's tasks."""
        if ctx is not None:
            return ctx
        found = context_from_headers(request_ctx.request)
        headers = getattr(request_ctx.request, "headers", None) or {}
        session = headers.get(SESSION_HEADER)
        if session is None:  # stateless: each request is its own session
            return found
        first = pinned.get(session, ToolContext())
        for header, was, now in (
            ("X-Taskloom-Thread", first.thread_id, found.thread_id),
            ("X-Taskloom-Agent", first.agent_id, found.agent_id),
        ):
            if was is not None and now is not None and was != now:
                raise InvalidInput(
                    f"this MCP session is bound to thread {first.thread_id!r} and agent"
                    f" {first.agent_id!r} by its first calls: its {header} header cannot"
                    " change: start a new session for another thread or agent"
                )
        both = ToolContext(
            thread_id=first.thread_id or found.thread_id,
            agent_id=first.agent_id or found.agent_id,
        )
        if both != ToolContext():  # something to pin
            pinned[session] = both
            pinned.move_to_end(session)
            while len(pinned) > MAX_PINNED_SESSIONS:
                pinned.popitem(last=False)
        return both

    async def list_tools(_: Any, __: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=s.name, description=s.description, input_schema=s.input_schema())
                for s in tl.tools.specs()
            ]
        )

    async def call_tool(
        request_ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        async with session_lock(request_ctx):  # first: no await may come before it
            try:
                call_ctx = bound(request_ctx)
            except InvalidInput as exc:
                result = error_result(exc.message)
            else:
                result = await REQUESTS.run(
                    tl.tools.dispatch, params.name, params.arguments or {}, call_ctx
                )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.content)],
            is_error=result.is_error,
        )

    async def list_resources(_: Any, __: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=BOARD_URI, name="board", mime_type="text/markdown"),
                types.Resource(uri=GOAL_URI, name="goal", mime_type="application/json"),
            ]
        )

    async def list_resource_templates(_: Any, __: Any) -> types.ListResourceTemplatesResult:
        """None: the two resources are fixed. Answered, not "method not found", as the
        server says it serves resources, and SDK clients that list templates then failed."""
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def read_resource(request_ctx: Any, params: types.ReadResourceRequestParams) -> Any:
        async with session_lock(request_ctx):  # after the session's earlier calls, in order
            return await _read_resource(request_ctx, params)

    async def _read_resource(request_ctx: Any, params: types.ReadResourceRequestParams) -> Any:
        # Errors are JSON-RPC errors with the spec's codes (MCPError: no traceback logged).
        uri = str(params.uri)
        if uri not in (BOARD_URI, GOAL_URI):
            modern = is_version_at_least(request_ctx.protocol_version, "2026-07-28")
            code = types.INVALID_PARAMS if modern else RESOURCE_NOT_FOUND
            raise MCPError(code, f"unknown resource {uri}", {"uri": uri})
        try:
            thread = bound(request_ctx).thread_id
        except InvalidInput as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message) from None
        if thread is None:
            missing = f"reading {uri} needs a thread: send the X-Taskloom-Thread header"
            raise MCPError(types.INVALID_PARAMS, missing)
        try:
            if uri == BOARD_URI:
                snap = await REQUESTS.run(tl.board(thread).list)
                text, mime = snap["markdown"], "text/markdown"
            else:
                goal = await REQUESTS.run(tl.goal(thread).get)
                text, mime = json.dumps(goal["goal"]), "application/json"
        except TaskloomError as exc:
            code = types.INVALID_PARAMS if isinstance(exc, InvalidInput) else types.INTERNAL_ERROR
            raise MCPError(code, exc.message) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, mime_type=mime, text=text)]
        )

    return Server(
        "taskloom",
        version=package_version(),
        instructions="Durable todo board, goal, queue and stash for this thread.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
    )


def package_version() -> str:
    """The installed taskloom's version, for ``serverInfo`` (clients show and log it); the
    source's own when it runs uninstalled (from a checkout on ``PYTHONPATH``)."""
    try:
        return importlib.metadata.version("taskloom")
    except importlib.metadata.PackageNotFoundError:
        from taskloom import __version__

        return __version__


async def serve_stdio(tl: Taskloom, ctx: ToolContext) -> None:
    """Serve ``taskloom mcp`` on stdin/stdout until stdin ends and every request is answered.

    The SDK's stdio transport writes the answers (and points stray prints at stderr), but
    the lines are read by :func:`_read_stdin`, not by its reader: that one drops a line it
    cannot parse unanswered, so the client waits for an answer that never comes. (Unlike
    the SDK's reader, it leaves fd 0 in place; no tool reads stdin or starts a process.)"""
    server = build_server(tl, ctx)
    no_input = anyio.wrap_file(io.StringIO())
    async with stdio_server(stdin=no_input) as (sdk_input, write):
        await sdk_input.aclose()
        unanswered = _Unanswered()
        forward, read = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read_stdin, forward, write)
            await server.run(
                _HoldEndOfInput(read, unanswered),
                _NoteAnswers(write, unanswered),
                server.create_initialization_options(),
            )
            tg.cancel_scope.cancel()  # the session is over: no more lines to read


async def _read_stdin(messages: MemoryObjectSendStream[SessionMessage], write: Any) -> None:
    """Pass each JSON-RPC message on stdin to the session, in order; answer any other line
    on ``write`` at once, before reading the next, so no line goes unanswered. ``write`` is
    the transport's stream, not :class:`_NoteAnswers`: a refused line's id names no request
    the session owes an answer. Bytes that are not UTF-8 read as U+FFFD, as the SDK's reader
    reads them; a blank line holds no message and is skipped."""
    async with messages:
        async for raw in anyio.wrap_file(sys.stdin.buffer):
            line = raw.decode("utf-8", "replace")
            if not line.strip():
                continue
            item = read_line(line)
            try:
                if isinstance(item, SessionMessage):
                    await messages.send(item)
                else:  # refused: answered here, the session never sees it
                    await write.send(SessionMessage(item))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return  # the session ended before the input did


def read_line(line: str) -> SessionMessage | types.JSONRPCError:
    """The JSON-RPC message on one line of stdin, validated by the SDK's own model, or, for
    any other line, the error that answers it (a bare ``JSONRPCError``, where a client's
    own error response comes wrapped in a ``SessionMessage``).

    -32700 if the line is not JSON (id null); -32600 if it is JSON the model refuses (too
    deep, a lone surrogate escape, a number too long, not a JSON-RPC shape), with the
    request's id when there is one to send back. A request whose id is neither a string nor
    an integer is refused too: the model would take it for a notification, never answered."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _refusal(line, exc.errors()[0])
    if isinstance(message, types.JSONRPCNotification) and "id" in _loads(line):
        return _error(None, types.INVALID_REQUEST, "id must be a string or an integer")
    if isinstance(message, types.JSONRPCRequest):
        refused = _refused_request(line, message)
        if refused is not None:
            return refused
    return SessionMessage(message)


def _refused_request(line: str, request: types.JSONRPCRequest) -> types.JSONRPCError | None:
    """The error for a request the SDK would take wrongly or answer without a reason: a key
    given twice (``{"op": "list", "op": "add"}`` ran the add, where ``tool call`` refuses
    it), or ``tools/call`` params of the wrong shape (answered -32602 with empty data)."""
    try:
        parse_json(line, "the request")
    except InvalidInput as exc:
        return _error(request.id, types.INVALID_REQUEST, exc.message)
    if request.method != "tools/call":
        return None
    params = request.params or {}
    name, arguments = params.get("name"), params.get("arguments")
    why = None
    if not isinstance(name, str):
        why = f"params.name must be the tool's name (text), not {_kind(name)}"
    elif arguments is not None and not isinstance(arguments, dict):
        why = f"params.arguments must be an object, not {_kind(arguments)}"
        if isinstance(arguments, str):
            why += " (send the arguments themselves, not their JSON text)"
    return None if why is None else _error(request.id, types.INVALID_PARAMS, why)


def _kind(value: object) -> str:
    """A JSON value's kind, as a client's author names it."""
    if value is None:
        return "missing (or null)"
    names = {bool: "a boolean", str: "text", list: "a list", dict: "an object"}
    return names.get(type(value), "a number")


def _refusal(line: str, error: ErrorDetails) -> types.JSONRPCError:
    """The answer to ``line``, which the model refused with ``error`` (its first)."""
    try:
        value = _loads(line)
    except RecursionError:
        return _error(None, types.INVALID_REQUEST, "nested too deeply to read")
    except ValueError as exc:
        return _error(None, types.PARSE_ERROR, f"not JSON ({exc})")
    if error["type"] == "json_invalid":  # JSON Python reads but the model does not
        why = error["msg"].removeprefix("Invalid JSON: ")
        limits = "lone surrogate escapes, nesting over about 200 levels, numbers over 4300 digits"
        return _error(_request_id(value), types.INVALID_REQUEST, f"{why} (refused: {limits})")
    where = ".".join(str(part) for part in error["loc"][1:])  # [0]: the message kind tried
    why = f"{where}: {error['msg']}" if where else error["msg"]
    return _error(_request_id(value), types.INVALID_REQUEST, f"not a JSON-RPC message ({why})")


def _loads(line: str) -> Any:
    """``line`` parsed by Python's json, which reads what the model refuses (lone surrogate
    escapes, deeper nesting); an integer over Python's digit limit reads as a float, so its
    line can still be answered. Raises ``ValueError`` if it is not JSON."""
    return json.loads(line, parse_int=_int_or_float)


def _int_or_float(digits: str) -> int | float:
    try:
        return int(digits)
    except ValueError:  # more digits than Python converts
        return float(digits)


def _request_id(value: object) -> types.RequestId | None:
    """The id to answer a refused line with: a request's id, if it can be sent back.

    A response's id names one of the server's own requests, so an error for it is sent
    with id null; so is an id that is neither an integer nor UTF-8 text."""
    if not isinstance(value, dict) or "result" in value or "error" in value:
        return None
    request_id = value.get("id")
    if isinstance(request_id, int) and not isinstance(request_id, bool):
        return request_id
    if isinstance(request_id, str) and _is_utf8(request_id):
        return request_id
    return None


def _is_utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (a lone surrogate cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_KINDS = {types.PARSE_ERROR: "Parse error", types.INVALID_PARAMS: "Invalid params"}


def _error(request_id: types.RequestId | None, code: int, why: str) -> types.JSONRPCError:
    kind = _KINDS.get(code, "Invalid request")
    error = types.ErrorData(code=code, message=f"{kind}: {why}")
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


class _Unanswered:
    """The requests read from stdin and not answered yet, by id.

    At the end of its input the SDK ends the session and cancels the requests still running,
    so a client that writes its requests and closes stdin (``taskloom mcp < calls.jsonl``)
    lost the last answers (modelcontextprotocol/python-sdk#2678). The end of input is held
    back until every request has its answer, or was cancelled (which gets none). Ids are
    compared as text, as the SDK does (a cancellation may name request 7 as ``"7"``), and
    counted, so a client that reuses an id still gets both answers.
    """

    def __init__(self) -> None:
        self._ids: collections.Counter[str] = collections.Counter()
        self._changed = anyio.Event()

    def read(self, item: object) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCRequest):
            self._ids[str(message.id)] += 1
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"  # no answer will come
        ):
            self._settle((message.params or {}).get("requestId"))

    def sent(self, item: object) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._settle(message.id)

    def _settle(self, request_id: object) -> None:
        key = str(request_id)
        if self._ids[key] > 0:
            self._ids[key] -= 1
            self._changed.set()

    async def drained(self) -> None:
        while +self._ids:  # the ids still counted above zero
            self._changed = anyio.Event()
            await self._changed.wait()


class _Proxy:
    """A stream that passes everything to ``inner`` (``last_context`` and the like)."""

    def __init__(self, inner: Any, unanswered: _Unanswered) -> None:
        self._inner = inner
        self._unanswered = unanswered

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Any:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return bool(await self._inner.__aexit__(exc_type, exc, tb))


class _HoldEndOfInput(_Proxy):
    """The read stream; its end comes once every request read has been answered."""

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            await self._unanswered.drained()
            raise
        self._unanswered.read(item)
        return item

    def __aiter__(self) -> _HoldEndOfInput:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _NoteAnswers(_Proxy):
    """The write stream; notes each answer it sends."""

    async def send(self, item: Any, /) -> None:
        await self._inner.send(item)
        self._unanswered.sent(item)


MAX_HTTP_MESSAGE = 4 * 1024 * 1024
"""The largest message ``/mcp`` reads (the SDK's own limit)."""


class CheckedMessages:
    """The ``/mcp`` endpoint, with a POSTed body checked as stdio checks a line
    (:func:`read_line`): a body that is not one JSON-RPC message is answered -32700 or -32600
    with a short reason, as over stdio, where the SDK answered -32602 ("invalid params")
    with its model's whole validation dump. Every other request goes to ``app`` as sent."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
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
        try:
            checked = read_line(body.decode("utf-8"))
        except UnicodeDecodeError:
            checked = _error(None, types.PARSE_ERROR, "not UTF-8")
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

        await self.app(scope, replay, send)

    @staticmethod
    async def _answer(
        scope: Any, receive: Any, send: Any, status: int, error: types.JSONRPCError | None
    ) -> None:
        from starlette.responses import JSONResponse

        if error is None:
            error = _error(None, types.INVALID_REQUEST, f"over {MAX_HTTP_MESSAGE} bytes")
        content = error.model_dump(by_alias=True, mode="json", exclude_unset=True)
        await JSONResponse(content, status)(scope, receive, send)


def http_session_manager(tl: Taskloom) -> Any:
    """The streamable-HTTP MCP endpoint for ``taskloom serve`` (run it in the app lifespan).

    Which Host and Origin may reach it is the server's request guard's to say, as for every
    route (:mod:`taskloom.server.security`: on a loopback server, local names and pages only,
    so a web page elsewhere cannot reach the tools through the user's browser).
    """
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return StreamableHTTPSessionManager(
        build_server(tl, None), security_settings=security, max_sessions=MAX_HTTP_SESSIONS
    )
