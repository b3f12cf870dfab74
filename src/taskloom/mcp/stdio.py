"""``taskloom mcp``: the MCP server on stdin and stdout, bound to one thread by its command line.

Every line read is answered: one that is not a JSON-RPC message gets a JSON-RPC error
(:func:`~taskloom.mcp.messages.read_line`), and the end of input waits for every request
read to be answered. A client of protocol 2025-11-25 opens with ``initialize``; one of
2026-07-28 sends each request with its own envelope and no handshake: the SDK serves the
era the first request opens. A request before either is answered with how to open the session.

SIGTERM and SIGINT end the server at once, the requests still running given up (a wait
stops at its next look) and answered as the SDK answers a closed session's; one noted before
the server started (``stopped``) ends it as soon as it starts. While its calls end, the
signals go back to the handlers they had before it started. However the
server ends, the slow calls it runs end as :func:`taskloom.mcp.runs.on_exit` says before
the process exits, and the process exits 0 with nothing on stderr.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import io
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from taskloom.mcp.messages import MAX_MESSAGE, read_line, too_long
from taskloom.mcp.server import McpConfig, build_with_runner

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from taskloom.client import Taskloom
    from taskloom.mcp.runs import CallRunner
    from taskloom.tools.spec import ToolContext


async def serve_stdio(
    tl: Taskloom,
    ctx: ToolContext,
    config: McpConfig | None = None,
    *,
    stopped: threading.Event | None = None,
) -> None:
    """Serve ``taskloom mcp`` on stdin/stdout until stdin ends and every request is answered.

    The SDK's stdio transport writes the answers (and points stray prints at stderr), but
    the lines are read by :func:`_read_stdin`, not by its reader: that one drops a line it
    cannot parse unanswered, so the client waits for an answer that never comes. (Unlike
    the SDK's reader, it leaves fd 0 in place; no tool reads stdin or starts a process.)
    SIGTERM or SIGINT ends it as the end of stdin does, without waiting for answers; so does
    ``stopped`` set (a signal noted before the server took them), and a client that stops
    reading stdout (its answers can no longer be delivered)."""
    server, runner = build_with_runner(tl, ctx, config)
    try:
        await _serve(server, runner, stopped)
    except* BrokenPipeError:  # the client stopped reading: no answer can reach it
        _discard_stdout()


def _discard_stdout() -> None:
    """Send what stdout still holds to the null device: its reader is gone, and the
    interpreter's last flush would fail again with "Exception ignored" on stderr."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


async def _serve(server: Server[Any], runner: CallRunner, stopped: threading.Event | None) -> None:
    """:func:`serve_stdio`'s session, the slow calls stopped however it ends."""
    no_input = anyio.wrap_file(io.StringIO())
    try:
        async with stdio_server(stdin=no_input) as (sdk_input, write):
            await sdk_input.aclose()
            unanswered, opening = _Unanswered(), _Opening()
            forward, read = anyio.create_memory_object_stream[SessionMessage](0)
            async with anyio.create_task_group() as tg:
                tg.start_soon(_read_stdin, forward, write)
                tg.start_soon(_until_signalled, tg.cancel_scope, stopped)
                await server.run(
                    _HoldEndOfInput(read, unanswered, opening),
                    _NoteAnswers(write, unanswered, opening),
                    server.create_initialization_options(),
                )
                tg.cancel_scope.cancel()  # the session is over: no more lines to read
    finally:
        runner.stop()


async def _until_signalled(scope: anyio.CancelScope, stopped: threading.Event | None) -> None:
    """Cancel ``scope`` (the session) at the first SIGTERM or SIGINT, or at once if
    ``stopped`` is set. Then the signals' handlers are the ones they had before (the event
    loop's receiver leaves SIGTERM killing the process outright, mid-way through ending the
    calls)."""
    stops = (signal.SIGTERM, signal.SIGINT)
    before = {signum: signal.getsignal(signum) for signum in stops}
    try:
        with anyio.open_signal_receiver(*stops) as signals:
            if stopped is not None and stopped.is_set():
                scope.cancel()
                return
            async for _ in signals:
                scope.cancel()
                return
    finally:
        for signum, handler in before.items():
            if handler is not None:  # one set outside Python: left as the receiver left it
                signal.signal(signum, handler)


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
    reader = _DaemonReader(_FdLines(stdin.fileno()))
    while (raw := await reader.next()) != b"":
        yield raw


class _FdLines:
    """The lines of a file descriptor, read with ``os.read``: no buffered reader, whose
    lock, held by a daemon thread blocked in a read, aborts the interpreter's exit."""

    CHUNK = 65_536

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._held = bytearray()
        self._scanned = 0  # bytes of ``_held`` known to hold no newline
        self._ended = False

    def line(self) -> bytes | None:
        """The next line (``b""`` at the end), or ``None`` for one over
        :data:`MAX_MESSAGE` bytes, dropped a chunk at a time, never held whole."""
        while True:
            end = self._held.find(b"\n", self._scanned)
            if end != -1:
                if end > MAX_MESSAGE:
                    self._drop(end + 1)
                    return None
                return self._take(end + 1)
            self._scanned = len(self._held)
            if self._scanned > MAX_MESSAGE:
                self._skip()
                return None
            if not self._fill():
                return self._take(len(self._held))

    def _fill(self) -> bool:
        if self._ended:
            return False
        chunk = os.read(self._fd, self.CHUNK)
        self._ended = not chunk
        self._held += chunk
        return bool(chunk)

    def _take(self, n: int) -> bytes:
        line = bytes(self._held[:n])
        del self._held[:n]
        self._scanned = 0
        return line

    def _drop(self, n: int) -> None:
        del self._held[:n]
        self._scanned = 0

    def _skip(self) -> None:
        """Drop the line too long to hold, up to its newline (or the end of input)."""
        self._held.clear()
        while self._fill():
            end = self._held.find(b"\n")
            if end != -1:
                self._drop(end + 1)
                return
            self._held.clear()
        self._scanned = 0


class _DaemonReader:
    """Lines of ``lines``, each read when asked for on a daemon thread of its own: a read
    waiting on a client that keeps stdin open never holds up the process's exit, as a
    thread of anyio's pool would (the interpreter waits for those)."""

    def __init__(self, lines: _FdLines) -> None:
        self._lines = lines
        self._asked = threading.Semaphore(0)
        self._loop = asyncio.get_running_loop()
        self._read: asyncio.Queue[bytes | Exception | None] = asyncio.Queue()
        threading.Thread(target=self._run, name="taskloom-mcp-stdin", daemon=True).start()

    async def next(self) -> bytes | None:
        """The next line (``b""`` at the end of input)."""
        self._asked.release()
        item = await self._read.get()
        if isinstance(item, Exception):
            raise item
        return item

    def _run(self) -> None:
        while True:
            self._asked.acquire()
            item: bytes | Exception | None
            try:
                item = self._lines.line()
            except OSError as exc:  # stdin closed under us: the reader's error, as ever
                item = exc
            try:
                self._loop.call_soon_threadsafe(self._read.put_nowait, item)
            except RuntimeError:
                return  # the loop has closed: nobody reads on
            if item == b"" or isinstance(item, Exception):
                return


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
