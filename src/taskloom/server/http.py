"""The HTTP/1.1 protocol ``taskloom serve`` runs: uvicorn's h11 one, with a deadline on
each request's head; and its server, which exits normally after a graceful shutdown.

uvicorn's default (httptools) sets no limit on a header's size: one client sending a
400 MiB header would hold the event loop, every other request waiting, before any token is
checked. h11 refuses an unfinished request head past 16 KiB. Neither bounds the *time* a
head may take: a connection that sends one byte and then nothing would stay open for ever,
and enough of them take every file descriptor (slowloris). uvicorn's keep-alive timeout is
reset by every byte received, so a client trickling its head keeps it off. Here each
request's head must arrive whole within :data:`REQUEST_HEAD_S` of the
connection opening, or of the previous response ending; a slow *response* (an event stream)
is never cut.

A client that stops reading is dropped: once the socket's send buffer is full, the server
checks every :data:`WRITE_STALL_S` whether any of it has left, and a connection whose buffer
has not shrunk since the last check is aborted (its stream then ends as for a client gone,
freeing its unsent bytes and events). A slow reader keeps its stream, as long as it reads.

What is written to a connection already lost (a client reset it, or it was aborted) is
dropped before it reaches the transport: the server learns of the loss a moment later, and a
stream writes many frames meanwhile, each of which asyncio's own loop (where uvloop is
missing) would log as a warning.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from types import FrameType
from typing import Any, cast

from uvicorn import Config, Server
from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_HEAD_S = 10.0
"""How long a client may take to send a request's line and headers."""
WRITE_STALL_S = 30.0
"""How long a full send buffer may stay full without a byte taken before the connection is
dropped."""


class _LiveWrites:
    """A transport that drops what is written once it is closing: a connection is closed
    only after its last response, so what comes later is for a client already gone."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._transport.is_closing():
            self._transport.write(data)


class DeadlineH11Protocol(H11Protocol):
    """:class:`H11Protocol` closing a connection whose request head is late."""

    _head_timer: asyncio.TimerHandle | None = None
    _stall_timer: asyncio.TimerHandle | None = None
    _unsent = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(cast(asyncio.Transport, _LiveWrites(transport)))
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._stop_watching()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._unsent = self.transport.get_write_buffer_size()
        self._stop_watching()
        self._stall_timer = self.loop.call_later(WRITE_STALL_S, self._check_stall)

    def resume_writing(self) -> None:
        self._stop_watching()
        super().resume_writing()

    def _stop_watching(self) -> None:
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None

    def _check_stall(self) -> None:
        """Drop the connection if nothing left its send buffer since the last check; else
        check again later."""
        self._stall_timer = None
        unsent = self.transport.get_write_buffer_size()
        if unsent >= self._unsent:  # close() would wait for the buffer to be sent
            self.transport.abort()
            return
        self._unsent = unsent
        self._stall_timer = self.loop.call_later(WRITE_STALL_S, self._check_stall)

    def _unsupported_upgrade_warning(self) -> None:
        """Nothing to log: a request asking to upgrade (``curl --http2`` asks for ``h2c``) is
        answered over HTTP/1.1, as HTTP allows, and the server takes no WebSocket; uvicorn's
        two warnings per such request (the second advising a WebSocket library) would let any
        client fill the log."""

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before:  # a request's head arrived whole
            self._disarm()

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._arm()  # the next request's own deadline; a pipelined one disarms it at once
        super().on_response_complete()

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(REQUEST_HEAD_S, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self, *_: Any) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()


class CleanStopServer(Server):
    """uvicorn's server, ending normally after its graceful shutdown on SIGTERM or SIGINT:
    uvicorn's own raises the signal it caught again once shut down, so the process dies of
    it (status -15 for SIGTERM), and a supervisor (systemd, docker, a test runner) reads a
    clean stop as a crash. As in uvicorn, the first signal starts the graceful shutdown and
    a second SIGINT hurries it (:attr:`hurried`), and the tracebacks of what it cuts short
    (the app's lifespan, cancelled) are not logged: they are the hurry, not a fault.
    ``on_stop`` is called as the graceful shutdown starts."""

    def __init__(self, config: Config, on_stop: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self._on_stop = on_stop

    @property
    def hurried(self) -> bool:
        """Whether a second Ctrl-C cut the graceful shutdown short."""
        return self.force_exit

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
            logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL + 1)
        else:
            self.should_exit = True
            if self._on_stop is not None:
                self._on_stop()
