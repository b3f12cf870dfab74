"""``create_app(tl)``: the JSON API and the SSE stream, routes listed explicitly.

Errors from the library map to JSON with their ``http_status``; bad input is a 4xx that says
what is wrong, never a 500. Who may ask, and from where, is checked in front of every route
(:mod:`taskloom.server.security`): with a token configured every data request carries it
(``Authorization: Bearer …``, or ``?token=`` for EventSource), compared in constant time.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from taskloom.client import Taskloom
from taskloom.domain.card import CardStatus
from taskloom.domain.common import UNSET
from taskloom.domain.errors import Conflict, InvalidInput, TaskloomError, TooLarge
from taskloom.domain.threads import check_thread_id
from taskloom.server.cursor import parse_cursor
from taskloom.server.hub import EventHub
from taskloom.server.listing import ThreadListing
from taskloom.server.pool import REQUESTS
from taskloom.server.security import RequestGuard
from taskloom.server.sse import event_stream, open_stream
from taskloom.store.outbox import prune_events
from taskloom.store.stash import purge_stash

STATIC = Path(__file__).parent / "static"

Endpoint = Callable[[Request], Awaitable[Response]]

log = logging.getLogger("taskloom.server")


MAX_BODY_BYTES = 1024 * 1024
"""A request body larger than this is refused before it is read whole (every action's body
is a few bytes)."""
MAX_BUDGET = 2**53
"""The largest token budget the API takes: any real budget, and every JSON reader's exact
integers."""
MAX_RETAIN_AGE = timedelta(days=36525)
"""The longest age limit retention takes (100 years, the queue's longest duration)."""
PRUNE_BATCH = 5000
"""The most events one prune transaction deletes: other writers wait for one batch at most,
and so does a server that stops while it prunes."""
SHUTDOWN_GRACE_S = 5.0
"""How long an open stream has to end its response when the server shuts down."""


async def _body(request: Request) -> dict[str, Any]:
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise TooLarge(f"request body is larger than {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(raw or b"{}")
    except ValueError as exc:  # also bytes that are not UTF-8
        raise InvalidInput(f"request body is not valid JSON: {exc}") from None
    except RecursionError:
        raise InvalidInput("request body is nested too deeply") from None
    if not isinstance(data, dict):
        raise InvalidInput("request body must be a JSON object")
    return data


def _digits(text: str) -> bool:
    """Whether ``text`` is a whole number ``int`` reads: ``str.isdigit`` takes "²" too."""
    return text.isascii() and text.isdigit()


def _only(body: dict[str, Any], allowed: set[str]) -> dict[str, Any]:
    """``body``, refused if it has a field the route does not take: a misspelt field must not
    be ignored in silence (``{"reasn": …}`` paused without the reason)."""
    unknown = body.keys() - allowed
    if unknown:
        raise InvalidInput(f"unknown field(s): {', '.join(sorted(unknown))}")
    return body


def _public(task: dict[str, Any]) -> dict[str, Any]:
    """A task as viewers see it: the lease token is the worker's capability, not theirs."""
    return {**task, "lease_token": None}


def create_app(
    tl: Taskloom,
    *,
    token: str | None = None,
    poll_s: float = 0.025,
    ping_s: float = 15,
    retain_events: int | None = None,
    retain_age: timedelta | None = None,
    prune_every_s: float = 60,
    mcp: bool = True,
    loopback_only: bool = True,
) -> Starlette:
    """The panel, the JSON API and ``/api/events``.

    ``retain_events``/``retain_age`` turn on a pruning of the outbox every ``prune_every_s``
    while the server runs (readers whose cursor was pruned get fresh snapshots); a prune
    that fails (a busy database) is logged as a warning and tried again next time. ``mcp``
    mounts the streamable-HTTP MCP endpoint at ``/mcp`` (it runs in the app's lifespan).
    """
    if retain_events is not None and retain_events < 1:
        raise ValueError("retain_events must be at least 1 (or None: no count limit)")
    if retain_age is not None and not timedelta(0) < retain_age <= MAX_RETAIN_AGE:
        raise ValueError(f"retain_age must be more than 0 and at most {MAX_RETAIN_AGE.days} days")
    hub = EventHub(tl.store, poll_s=poll_s)
    listing = ThreadListing(tl.store, tl.threads)
    mcp_manager = None
    if mcp:
        from taskloom.mcp import http_session_manager

        mcp_manager = http_session_manager(tl)

    async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await REQUESTS.run(fn, *args, **kwargs)

    async def act(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A human action: run it, then wake the event hub so the change streams at once."""
        result = await REQUESTS.run(fn, *args, **kwargs)
        hub.poke()
        return result

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def stash(request: Request) -> Response:
        return JSONResponse(await call(tl.guard(request.path_params["thread"]).results))

    async def threads(request: Request) -> Response:
        return Response(await call(listing.get), media_type="application/json")

    async def board(request: Request) -> Response:
        return JSONResponse(await call(tl.board(request.path_params["thread"]).list))

    async def goal(request: Request) -> Response:
        return JSONResponse(await call(tl.goal(request.path_params["thread"]).get))

    async def card_decision(request: Request) -> Response:
        body = _only(await _body(request), {"approve", "seen"})
        if not isinstance(body.get("approve"), bool):
            raise InvalidInput("`approve` must be true or false")
        seen = body.get("seen")
        if seen is not None and not isinstance(seen, str):
            raise InvalidInput("`seen` is the card's updated_at, as shown")
        handle = tl.board(request.path_params["thread"])
        decide = functools.partial(handle.decide_plan, seen=seen)
        return JSONResponse(await act(decide, request.path_params["card"], body["approve"]))

    async def card_status(request: Request) -> Response:
        body = _only(await _body(request), {"status"})
        if not isinstance(body.get("status"), str):
            raise InvalidInput("`status` must be a status name, e.g. done")
        handle = tl.board(request.path_params["thread"])
        card = (await call(handle.get)).find(request.path_params["card"])
        if card is not None and card.status is CardStatus.AWAITING_APPROVAL:
            raise Conflict(
                f"card '{card.id}' is awaiting approval: decide on its plan with"
                " POST …/decision (approve or reject), not by its status"
            )
        return JSONResponse(
            await act(handle.update_status, request.path_params["card"], body["status"])
        )

    async def goal_action(request: Request) -> Response:
        handle = tl.goal(request.path_params["thread"])
        action = request.path_params["action"]
        if action == "budget":
            body = _only(await _body(request), {"token_budget", "time_budget_s"})
            if not body:  # a misspelt key must not clear the budget
                raise InvalidInput(
                    "`token_budget` or `time_budget_s` is required: a number, or null for none"
                )
            budget = body.get("token_budget", UNSET)
            if (
                budget is not UNSET
                and budget is not None
                and (
                    not isinstance(budget, int)
                    or isinstance(budget, bool)
                    or abs(budget) > MAX_BUDGET
                )
            ):
                raise InvalidInput(f"`token_budget` must be an integer up to {MAX_BUDGET}, or null")
            limit = body.get("time_budget_s", UNSET)  # checked by the goal itself
            return JSONResponse(await act(handle.set_budget, budget, time_budget_s=limit))
        if action == "pause":
            reason = _only(await _body(request), {"reason"}).get("reason")
            if reason is not None and not isinstance(reason, str):
                raise InvalidInput("`reason` must be text, or null")
            return JSONResponse(await act(handle.pause, reason))
        if action in ("resume", "clear"):
            _only(await _body(request), set())
            return JSONResponse(await act(getattr(handle, action)))
        raise InvalidInput(f"unknown goal action '{action}' (pause, resume, budget, clear)")

    async def tasks(request: Request) -> Response:
        query = request.query_params
        limit = query.get("limit", "200")
        if not _digits(limit) or not 1 <= int(limit) <= 1000:
            raise InvalidInput("`limit` must be an integer from 1 to 1000")
        items = await call(
            tl.queue.list,
            status=query.get("status") or None,
            agent=query.get("agent") or None,
            kinds=query.getlist("kind") or None,
            limit=int(limit),
        )
        return JSONResponse([_public(t.to_dict()) for t in items])

    async def task_stats(request: Request) -> Response:
        return JSONResponse(await call(tl.queue.stats))

    async def task(request: Request) -> Response:
        return JSONResponse(
            _public((await call(tl.queue.get, request.path_params["task"])).to_dict())
        )

    async def task_cancel(request: Request) -> Response:
        body = _only(await _body(request), {"reason"})
        done = await act(tl.queue.cancel, request.path_params["task"], body.get("reason"))
        return JSONResponse(_public(done.to_dict()))

    async def task_requeue(request: Request) -> Response:
        _only(await _body(request), set())
        done = await act(tl.queue.requeue, request.path_params["task"])
        return JSONResponse(_public(done.to_dict()))

    async def events(request: Request) -> Response:
        raw = request.headers.get("last-event-id") or request.query_params.get("after")
        after = None if raw is None else parse_cursor(raw)
        thread_id = request.query_params.get("thread") or None
        if thread_id is not None:
            thread_id = check_thread_id(thread_id)
        opened = await open_stream(hub, after=after, thread_id=thread_id)
        tasks = request.query_params.get("tasks", "1") != "0"
        # Set on server shutdown: the stream then ends and its response completes.
        stop = anyio.Event()
        stream = event_stream(hub, opened, thread_id=thread_id, tasks=tasks, stop=stop)
        return EventSourceResponse(
            stream, ping=ping_s, shutdown_event=stop, shutdown_grace_period=SHUTDOWN_GRACE_S
        )

    async def on_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, TaskloomError)
        if exc.http_status >= 500:  # the server's trouble, not the caller's: its log says so
            log.error("%s %s: %s", request.method, request.url.path, exc.message)
        return JSONResponse({"error": exc.code, "message": exc.message}, exc.http_status)

    async def on_value_error(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "invalid_input", "message": str(exc)}, 400)

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse({"error": code, "message": exc.detail}, exc.status_code)

    prunes_events = retain_events is not None or retain_age is not None

    async def retention() -> None:
        """Prune in batches (a stop waits for one at most), survive any failure. Stashed
        results past their TTL go too, whatever thread they belong to."""
        while True:
            try:
                while prunes_events and await call(
                    prune_events,
                    tl.store,
                    tl.now(),
                    keep=retain_events,
                    older_than=retain_age,
                    batch=PRUNE_BATCH,
                ):
                    pass
            except Exception as exc:  # a locked database, say: try again next time
                _retry_later("pruning the event log", exc)
            try:
                await call(purge_stash, tl.store, tl.now())
            except Exception as exc:
                _retry_later("purging expired stashed results", exc)
            await asyncio.sleep(prune_every_s)

    def _retry_later(what: str, exc: Exception) -> None:
        log.warning(
            "%s failed, retrying in %gs: %s: %s", what, prune_every_s, type(exc).__name__, exc
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        pruner = asyncio.create_task(retention())
        async with contextlib.AsyncExitStack() as stack:
            if mcp_manager is not None:
                await stack.enter_async_context(mcp_manager.run())
            try:
                yield
            finally:
                pruner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pruner
                await hub.stop()

    routes = [
        Route("/", index),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/api/threads", threads),
        Route("/api/threads/{thread:path}/board", board),
        Route("/api/threads/{thread:path}/goal", goal),
        Route("/api/threads/{thread:path}/stash", stash),
        Route("/api/threads/{thread:path}/goal/{action}", goal_action, methods=["POST"]),
        Route("/api/threads/{thread:path}/cards/{card}/decision", card_decision, methods=["POST"]),
        Route("/api/threads/{thread:path}/cards/{card}/status", card_status, methods=["POST"]),
        Route("/api/tasks", tasks),
        Route("/api/tasks/stats", task_stats),
        Route("/api/tasks/{task}", task),
        Route("/api/tasks/{task}/cancel", task_cancel, methods=["POST"]),
        Route("/api/tasks/{task}/requeue", task_requeue, methods=["POST"]),
        Route("/api/events", events),
    ]
    if mcp_manager is not None:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

        from taskloom.mcp import CheckedMessages

        # An ASGI app (not a function) as the endpoint: Starlette hands it the raw request.
        routes.append(Route("/mcp", CheckedMessages(StreamableHTTPASGIApp(mcp_manager))))
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(RequestGuard, token=token, loopback_only=loopback_only)],
        exception_handlers={
            TaskloomError: on_error,
            ValueError: on_value_error,
            HTTPException: on_http_error,
        },
    )
