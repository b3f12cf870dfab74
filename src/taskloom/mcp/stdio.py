"""``taskloom mcp``: the MCP server on stdin and stdout, bound to one thread by its command line.

Every line read is answered: one that is not a JSON-RPC message gets a JSON-RPC error
(:func:`~taskloom.mcp.messages.read_line`), and the end of input waits for every request
read to be answered. A client of protocol 2025-11-25 opens with ``initialize``; one of
2026-07-28 sends each request with its own envelope and no handshake: the SDK serves the
era the first request opens. A request before either is answered with how to open the session.
"""

from __future__ import annotations

import collections
import dataclasses
import io
import sys
from collections.abc import AsyncIterator
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from taskloom.mcp.messages import MAX_MESSAGE, read_line, too_long
from taskloom.mcp.server import McpConfig, build_server

if TYPE_CHECKING:
    from taskloom.client import Taskloom
    from taskloom.tools.spec import ToolContext


async def serve_stdio(tl: Taskloom, ctx: ToolContext, config: McpConfig | None = None) -> None:
    """Serve ``taskloom mcp`` on stdin/stdout until stdin ends and every request is answered.

    The SDK's stdio transport writes the answers (and points stray prints at stderr), but
    the lines are read by :func:`_read_stdin`, not by its reader: that one drops a line it
    cannot parse unanswered, so the client waits for an answer that never comes. (Unlike
    the SDK's reader, it leaves fd 0 in place; no tool reads stdin or starts a process.)"""
    server = build_server(tl, ctx, config)
    no_input = anyio.wrap_file(io.StringIO())
    async with stdio_server(stdin=no_input) as (sdk_input, write):
        await sdk_input.aclose()
        unanswered, opening = _Unanswered(), _Opening()
        forward, read = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read_stdin, forward, write)
            await server.run(
                _HoldEndOfInput(read, unanswered, opening),
                _NoteAnswers(write, unanswered, opening),
                server.create_initialization_options(),
            )
            tg.cancel_scope.cancel()  # the session is over: no more lines to read


async def _read_stdin(messages: MemoryObjectSendStream[SessionMessage], write: Any) -> None:
    """Pass each JSON-RPC message on stdin to the session, in order; answer any other line
    on ``write`` at once, before reading the next, so no line goes unanswered. ``write`` is
    the transport's stream, not :class:`_NoteAnswers`: a refused line's id names no request
    the session owes an answer. Bytes that are not UTF-8 read as U+FFFD, as the SDK's reader
    reads them; a blank line holds no message and is skipped. A line over
    :data:`~taskloom.mcp.messages.MAX_MESSAGE` bytes is answered unread, and never held
    whole in memory."""
    async with messages:
        async for raw in _lines(sys.stdin.buffer):
            line = None if raw is None else raw.decode("utf-8", "replace")
            if line is not None and not line.strip():
                continue
            item = too_long() if line is None else read_line(line)
            try:
                if isinstance(item, SessionMessage):
                    await messages.send(item)
                else:  # refused: answered here, the session never sees it
                    await write.send(SessionMessage(item))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return  # the session ended before the input did


async def _lines(stdin: BinaryIO) -> AsyncIterator[bytes | None]:
    """Each line of ``stdin`` (``None`` for one over :data:`MAX_MESSAGE` bytes, skipped
    to its end) until its end; a last line without a newline included."""
    while raw := await anyio.to_thread.run_sync(stdin.readline, MAX_MESSAGE + 1):
        if len(raw) <= MAX_MESSAGE or raw.endswith(b"\n"):
            yield raw
            continue
        while (
            rest := await anyio.to_thread.run_sync(stdin.readline, MAX_MESSAGE)
        ) and not rest.endswith(b"\n"):
            pass  # the rest of the line, read and dropped a piece at a time
        yield None


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


ENVELOPE_KEY = "io.modelcontextprotocol/protocolVersion"
NOT_OPEN = (
    "Invalid request parameters: the session is not open: send `initialize` first"
    " (protocol 2025-11-25), or give each request its `_meta` envelope (protocol 2026-07-28)"
)


class _Opening:
    """Whether the session is open: an ``initialize`` answered with a result, or a request
    read with the 2026-07-28 envelope. Until then the SDK refuses every request but ``ping``
    with a bare "Invalid request parameters"; that answer is given as :data:`NOT_OPEN`,
    which says how to open the session."""

    def __init__(self) -> None:
        self._initialize_ids: set[str] = set()
        self._open = False

    def read(self, item: object) -> None:
        message = getattr(item, "message", None)
        if not isinstance(message, types.JSONRPCRequest):
            return
        if message.method == "initialize":
            self._initialize_ids.add(str(message.id))
        meta = (message.params or {}).get("_meta")
        if isinstance(meta, dict) and ENVELOPE_KEY in meta:
            self._open = True

    def answer(self, item: Any) -> Any:
        """``item``, or the same answer with :data:`NOT_OPEN` for the SDK's bare refusal of
        a request sent before the session is open."""
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCResponse) and str(message.id) in self._initialize_ids:
            self._open = True
        elif (
            not self._open
            and isinstance(message, types.JSONRPCError)
            and message.error.code == types.INVALID_PARAMS
            and message.error.message == "Invalid request parameters"
            and not message.error.data
        ):
            error = message.error.model_copy(update={"message": NOT_OPEN})
            return dataclasses.replace(item, message=message.model_copy(update={"error": error}))
        return item


class _Proxy:
    """A stream that passes everything to ``inner`` (``last_context`` and the like)."""

    def __init__(self, inner: Any, unanswered: _Unanswered, opening: _Opening) -> None:
        self._inner = inner
        self._unanswered = unanswered
        self._opening = opening

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
        self._opening.read(item)
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
        item = self._opening.answer(item)
        await self._inner.send(item)
        self._unanswered.sent(item)
