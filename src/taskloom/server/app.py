"""``create_app(tl)``: the panel, the JSON API and the SSE stream, wired from module-level
handlers (:mod:`taskloom.server.routes`).

Who may ask, and from where, is checked in front of every route
(:mod:`taskloom.server.security`): with a token configured every data request carries it
(``Authorization: Bearer …``, or ``?token=`` for EventSource), compared in constant time.
While the server runs, retention prunes the outbox and purges expired stashed results.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from taskloom._pools import REQUESTS
from taskloom.client import Taskloom
from taskloom.domain.errors import TaskloomError
from taskloom.server import routes
from taskloom.server.hub import EventHub
from taskloom.server.listing import ThreadListing
from taskloom.server.routes import SHUTDOWN_GRACE_S, STATIC, Served
from taskloom.server.security import RequestGuard
from taskloom.store.retention import (
    BATCH,
    BATCH_PAUSE_S,
    MAX_AGE,
    RetentionPolicy,
    apply_policy,
    prune_stash_log,
)
from taskloom.store.stash import purge_stash

if TYPE_CHECKING:
    from taskloom.mcp import McpConfig

__all__ = ["MAX_RETAIN_AGE", "PRUNE_BATCH", "SHUTDOWN_GRACE_S", "Retention", "create_app"]


class PanelFiles(StaticFiles):
    """The panel's static files. Its scripts are ES modules, which a browser runs only when
    served as JavaScript (the page sends ``nosniff``): ``.js`` is ``text/javascript`` (RFC
    9239), whatever the platform's table of types says."""

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        if os.fspath(full_path).endswith(".js"):
            response.headers["content-type"] = "text/javascript; charset=utf-8"
        return response


log = logging.getLogger("taskloom.server")

MAX_RETAIN_AGE = MAX_AGE
"""The longest age limit retention takes (100 years, the queue's longest duration)."""
PRUNE_BATCH = BATCH
"""The most events one prune transaction deletes: other writers wait for one batch at most,
and so does a server that stops while it prunes."""


@dataclass(frozen=True, slots=True)
class Retention:
    """What the server prunes while it runs, every ``every_s``: the events the database's
    retention policy says go (:mod:`taskloom.store.retention`), or ``policy``'s if given (an
    override for this server alone), expired stashed results, and stash log lines older
    than :data:`~taskloom.store.retention.STASH_LOG_AGE`."""

    tl: Taskloom
    policy: RetentionPolicy | None
    every_s: float

    async def run(self) -> None:
        """Prune in batches (a stop waits for one at most), and survive any failure."""
        while True:
            try:
                while await self._prune() >= PRUNE_BATCH:
                    await asyncio.sleep(BATCH_PAUSE_S)  # other writers get in between
            except Exception as exc:  # a locked database, say: try again next time
                self._retry_later("pruning the event log", exc)
            try:
                await REQUESTS.run(purge_stash, self.tl.store, self.tl.now())
            except Exception as exc:
                self._retry_later("purging expired stashed results", exc)
            try:
                while await self._prune_stash_log() >= PRUNE_BATCH:
                    await asyncio.sleep(BATCH_PAUSE_S)
            except Exception as exc:
                self._retry_later("pruning the stash log", exc)
            await asyncio.sleep(self.every_s)

    async def _prune(self) -> int:
        """Delete one batch of events; how many it deleted."""
        return await REQUESTS.run(
            apply_policy, self.tl.store, self.tl.now(), policy=self.policy, batch=PRUNE_BATCH
        )

    async def _prune_stash_log(self) -> int:
        """Delete one batch of old stash log lines; how many it deleted."""
        return await REQUESTS.run(prune_stash_log, self.tl.store, self.tl.now(), batch=PRUNE_BATCH)

    def _retry_later(self, what: str, exc: Exception) -> None:
        log.warning(
            "%s failed, retrying in %gs: %s: %s", what, self.every_s, type(exc).__name__, exc
        )


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Run retention and the MCP session manager (if mounted) while the app serves; stop the
    event hub at the end."""
    served: Served = app.state.served
    retention: Retention = app.state.retention
    pruner = asyncio.create_task(retention.run())
    async with contextlib.AsyncExitStack() as stack:
        if app.state.mcp is not None:
            await stack.enter_async_context(app.state.mcp.run())
        try:
            yield
        finally:
            pruner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pruner
            await served.hub.stop()


def create_app(
    tl: Taskloom,
    *,
    token: str | None = None,
    poll_s: float | None = None,
    ping_s: float = 15,
    retain_events: int | None = None,
    retain_age: timedelta | None = None,
    prune_every_s: float = 60,
    mcp: bool = True,
    mcp_config: McpConfig | None = None,
    loopback_only: bool = True,
) -> Starlette:
    """The panel, the JSON API and ``/api/events``.

    While the server runs it applies the database's event retention every ``prune_every_s``
    (readers whose cursor was pruned get fresh snapshots); ``retain_events``/``retain_age``,
    if either is given, override it for this server alone (``None``: no such limit). A prune
    that fails (a busy database) is logged as a warning and tried again next time. ``poll_s``
    is how often the event hub reads when not woken (see :class:`EventHub`). ``mcp`` mounts
    the streamable-HTTP MCP endpoint at ``/mcp`` (it runs in the app's lifespan), with
    ``mcp_config``'s settings (its MCP tasks' lifetime and poll interval).
    """
    if retain_events is not None and retain_events < 1:
        raise ValueError("retain_events must be at least 1 (or None: no count limit)")
    if retain_age is not None and not timedelta(0) < retain_age <= MAX_RETAIN_AGE:
        raise ValueError(f"retain_age must be more than 0 and at most {MAX_RETAIN_AGE.days} days")
    table: list[BaseRoute] = [
        Route("/", routes.index),
        Mount("/static", PanelFiles(directory=STATIC), name="static"),
        Route("/api/threads", routes.threads),
        Route("/api/threads/{thread:path}/board", routes.board),
        Route("/api/threads/{thread:path}/goal", routes.goal),
        Route("/api/threads/{thread:path}/stash", routes.stash),
        Route("/api/threads/{thread:path}/ready", routes.ready),
        Route("/api/threads/{thread:path}/goal/{action}", routes.goal_action, methods=["POST"]),
        Route(
            "/api/threads/{thread:path}/cards/{card}/decision",
            routes.card_decision,
            methods=["POST"],
        ),
        Route(
            "/api/threads/{thread:path}/cards/{card}/status", routes.card_status, methods=["POST"]
        ),
        Route("/api/tasks", routes.tasks),
        Route("/api/tasks/stats", routes.task_stats),
        Route("/api/tasks/ready", routes.task_ready),
        Route("/api/tasks/{task}", routes.task),
        Route("/api/tasks/{task}/cancel", routes.task_cancel, methods=["POST"]),
        Route("/api/tasks/{task}/requeue", routes.task_requeue, methods=["POST"]),
        Route("/api/events", routes.events),
    ]
    mcp_manager: Any = None
    if mcp:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

        from taskloom.mcp import CheckedMessages, http_session_manager

        mcp_manager = http_session_manager(tl, mcp_config)
        # An ASGI app (not a function) as the endpoint: Starlette hands it the raw request.
        table.append(Route("/mcp", CheckedMessages(StreamableHTTPASGIApp(mcp_manager))))
    app = Starlette(
        routes=table,
        lifespan=lifespan,
        middleware=[Middleware(RequestGuard, token=token, loopback_only=loopback_only)],
        exception_handlers={
            TaskloomError: routes.on_error,
            ClientDisconnect: routes.on_disconnect,
            ValueError: routes.on_value_error,
            HTTPException: routes.on_http_error,
        },
    )
    hub = EventHub(tl.store, poll_s=poll_s)
    app.state.served = Served(tl, hub, ThreadListing(tl.store, tl.threads), ping_s)
    override = None
    if retain_events is not None or retain_age is not None:
        override = RetentionPolicy(keep=retain_events, older_than=retain_age)
    app.state.retention = Retention(tl, override, prune_every_s)
    app.state.mcp = mcp_manager
    return app
