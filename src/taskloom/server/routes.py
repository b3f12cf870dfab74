"""The HTTP API's handlers: one function per route, each reading what it serves from
``request.app.state.served`` (a :class:`Served`, set by :func:`taskloom.server.app.create_app`).

Errors from the library map to JSON with their ``http_status``; bad input is a 4xx that says
what is wrong, never a 500. Every change a person makes through the API wakes the event hub,
so it streams at once.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import anyio
from sse_starlette.sse import EventSourceResponse
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response

from taskloom._pools import REQUESTS
from taskloom.client import Taskloom
from taskloom.domain.common import UNSET, parse_json_object
from taskloom.domain.errors import InvalidInput, RequestTimeout, TaskloomError, TooLarge
from taskloom.domain.text import plural, shown_id
from taskloom.domain.threads import check_thread_id
from taskloom.server.cursor import parse_cursor
from taskloom.server.hub import EventHub
from taskloom.server.listing import ThreadListing
from taskloom.server.sse import event_stream, open_stream

STATIC = Path(__file__).parent / "static"
MAX_BODY_BYTES = 1024 * 1024
"""A request body larger than this is refused before it is read whole (every action's body
is a few bytes); one announced larger (``Content-Length``) is refused unread."""
REQUEST_BODY_S = 30.0
"""How long a client may take to send a request's body once its head has arrived: a body
announced and never sent would hold its connection and handler for ever."""
MAX_BUDGET = 2**53 - 1
"""The largest token budget the API takes (the panel's too): any real budget, and the
largest integer every JSON reader holds exactly."""
SHOWN_FIELDS = 5
"""The most unknown fields a refusal names (each by its first characters, as an id is)."""
SHUTDOWN_GRACE_S = 5.0
"""How long an open stream has to end its response when the server shuts down."""

log = logging.getLogger("taskloom.server")


@dataclass(frozen=True, slots=True)
class Served:
    """What the routes serve: the library, the shared event hub, the cached thread list, and
    how often an idle stream is pinged."""

    tl: Taskloom
    hub: EventHub
    listing: ThreadListing
    ping_s: float


def _served(request: Request) -> Served:
    return cast(Served, request.app.state.served)


async def _act(request: Request, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A person's action: run it, then wake the event hub so the change streams at once."""
    result = await REQUESTS.run(fn, *args, **kwargs)
    _served(request).hub.poke()
    return result


async def _body(request: Request) -> dict[str, Any]:
    too_large = f"request body is larger than {MAX_BODY_BYTES} bytes"
    announced = request.headers.get("content-length", "")
    if _digits(announced) and int(announced) > MAX_BODY_BYTES:
        raise TooLarge(too_large)
    raw = bytearray()
    with anyio.move_on_after(REQUEST_BODY_S) as late:
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY_BYTES:
                raise TooLarge(too_large)
    if late.cancelled_caught:
        raise RequestTimeout(f"the request body did not arrive within {REQUEST_BODY_S:g} seconds")
    try:
        text = raw.decode() if raw else "{}"
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"request body is not UTF-8 text (byte {exc.start})") from None
    return parse_json_object(text, "request body")


def _digits(text: str) -> bool:
    """Whether ``text`` is a whole number ``int`` reads: ``str.isdigit`` takes "²" too."""
    return text.isascii() and text.isdigit()


EVERY_ROUTE_PARAMS = ("token",)
"""The query parameters every route takes: the token, for a client that cannot send headers
(a browser's ``EventSource``), read by :mod:`taskloom.server.security`."""


def _takes(request: Request, *names: str) -> None:
    """Refuse a query parameter the route does not take (``names``, and
    :data:`EVERY_ROUTE_PARAMS`): a misspelt one is never ignored in silence
    (``?stauts=ready`` would list every task)."""
    allowed = (*names, *EVERY_ROUTE_PARAMS)
    unknown = sorted({key for key in request.query_params if key not in allowed})
    if not unknown:
        return
    shown = [shown_id(name) for name in unknown[:SHOWN_FIELDS]]
    if len(unknown) > SHOWN_FIELDS:
        shown.append(f"and {len(unknown) - SHOWN_FIELDS} more")
    takes = f"{', '.join(names)} and {allowed[-1]}" if names else f"only {allowed[-1]}"
    raise InvalidInput(
        f"unknown query {plural(len(unknown), 'parameter')}: {', '.join(shown)}"
        f" (this route takes {takes})"
    )


def _param(request: Request, name: str, default: str | None = None) -> str | None:
    """A query parameter that takes one value: given twice it is refused, as a key given
    twice in a body is, never read as the last (``status=ready&status=dead`` would list the
    dead tasks alone)."""
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise InvalidInput(f"`{name}` is given {len(values)} times: it takes one value")
    return values[0] if values else default


def _flag(request: Request, name: str, default: str) -> bool:
    """A ``0``/``1`` query parameter. Any other value is refused, never read as one of the two
    (``tasks=false`` would send the tasks)."""
    value = _param(request, name, default)
    if value not in ("0", "1"):
        raise InvalidInput(f"`{name}` must be 0 or 1")
    return value == "1"


def _limit(request: Request) -> int:
    """The ``limit`` query parameter of a listing: 1 to 1000, 200 if not given."""
    limit = _param(request, "limit", "200") or ""
    if not _digits(limit) or not 1 <= int(limit) <= 1000:
        raise InvalidInput("`limit` must be an integer from 1 to 1000")
    return int(limit)


def _only(body: dict[str, Any], allowed: set[str]) -> dict[str, Any]:
    """``body``, refused if it has a field the route does not take: a misspelt field is
    never ignored in silence (``{"reasn": …}`` would pause without the reason)."""
    unknown = body.keys() - allowed
    if unknown:
        names = [shown_id(name) for name in sorted(unknown)[:SHOWN_FIELDS]]
        if len(unknown) > SHOWN_FIELDS:
            names.append(f"and {len(unknown) - SHOWN_FIELDS} more")
        raise InvalidInput(f"unknown {plural(len(unknown), 'field')}: {', '.join(names)}")
    return body


def _public(task: dict[str, Any]) -> dict[str, Any]:
    """A task as viewers see it: the lease token is the worker's capability, not theirs."""
    return {**task, "lease_token": None}


async def index(request: Request) -> Response:
    """``GET /``: the web panel."""
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def threads(request: Request) -> Response:
    """``GET /api/threads``: every thread with a board or a goal."""
    _takes(request)
    return Response(await REQUESTS.run(_served(request).listing.get), media_type="application/json")


async def board(request: Request) -> Response:
    """``GET /api/threads/{thread}/board``: the thread's board snapshot."""
    _takes(request)
    handle = _served(request).tl.board(request.path_params["thread"])
    return JSONResponse(await REQUESTS.run(handle.list))


async def ready(request: Request) -> Response:
    """``GET /api/threads/{thread}/ready``: the board's cards that can start now; with
    ``explain=1``, why each other unfinished card cannot."""
    _takes(request, "explain")
    explain = _flag(request, "explain", "0")
    handle = _served(request).tl.board(request.path_params["thread"])
    return JSONResponse(await REQUESTS.run(functools.partial(handle.ready, explain=explain)))


async def goal(request: Request) -> Response:
    """``GET /api/threads/{thread}/goal``: the thread's goal snapshot."""
    _takes(request)
    handle = _served(request).tl.goal(request.path_params["thread"])
    return JSONResponse(await REQUESTS.run(handle.get))


async def stash(request: Request) -> Response:
    """``GET /api/threads/{thread}/stash``: the thread's stashed tool results."""
    _takes(request)
    guard = _served(request).tl.guard(request.path_params["thread"])
    return JSONResponse(await REQUESTS.run(guard.results))


async def card_decision(request: Request) -> Response:
    """``POST …/cards/{card}/decision``: approve or reject a card's plan (``seen``: the
    card's ``updated_at`` as shown, so a plan changed since is not decided blind)."""
    _takes(request)
    body = _only(await _body(request), {"approve", "seen"})
    if not isinstance(body.get("approve"), bool):
        raise InvalidInput("`approve` must be true or false")
    seen = body.get("seen")
    if seen is not None and not isinstance(seen, str):
        raise InvalidInput("`seen` is the card's updated_at, as shown")
    handle = _served(request).tl.board(request.path_params["thread"])
    decide = functools.partial(handle.decide_plan, seen=seen)
    return JSONResponse(await _act(request, decide, request.path_params["card"], body["approve"]))


async def card_status(request: Request) -> Response:
    """``POST …/cards/{card}/status``: move a card (not one awaiting approval: that takes a
    decision; ``seen``: the card's ``updated_at`` as shown, so a card changed since, by an
    agent or another window, is not moved blind)."""
    _takes(request)
    body = _only(await _body(request), {"status", "seen"})
    if not isinstance(body.get("status"), str):
        raise InvalidInput("`status` must be a status name, e.g. done")
    seen = body.get("seen")
    if seen is not None and not isinstance(seen, str):
        raise InvalidInput("`seen` is the card's updated_at, as shown")
    handle = _served(request).tl.board(request.path_params["thread"])
    move = functools.partial(handle.update_status, refuse_awaiting=True, seen=seen)
    return JSONResponse(await _act(request, move, request.path_params["card"], body["status"]))


async def goal_action(request: Request) -> Response:
    """``POST …/goal/{action}``: ``pause`` (with a reason), ``resume``, ``clear`` or
    ``budget``."""
    _takes(request)
    handle = _served(request).tl.goal(request.path_params["thread"])
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
                or not 0 < budget <= MAX_BUDGET
            )
        ):
            # One bound in every refusal: the library's own (2^63 - 1) is not this route's.
            raise InvalidInput(
                f"`token_budget` must be a positive integer up to {MAX_BUDGET}, or null"
            )
        limit = body.get("time_budget_s", UNSET)  # checked by the goal itself
        return JSONResponse(await _act(request, handle.set_budget, budget, time_budget_s=limit))
    if action == "pause":
        reason = _only(await _body(request), {"reason"}).get("reason")
        if reason is not None and not isinstance(reason, str):
            raise InvalidInput("`reason` must be text, or null")
        return JSONResponse(await _act(request, handle.pause, reason))
    if action in ("resume", "clear"):
        _only(await _body(request), set())
        return JSONResponse(await _act(request, getattr(handle, action)))
    raise InvalidInput(f"unknown goal action '{shown_id(action)}' (pause, resume, budget, clear)")


async def tasks(request: Request) -> Response:
    """``GET /api/tasks``: queue tasks, filtered by ``status``, ``agent`` and ``kind``."""
    _takes(request, "status", "agent", "kind", "limit")
    limit = _limit(request)
    items = await REQUESTS.run(
        _served(request).tl.queue.list,
        status=_param(request, "status") or None,
        agent=_param(request, "agent") or None,
        kinds=request.query_params.getlist("kind") or None,
        limit=limit,
    )
    return JSONResponse([_public(t.to_dict()) for t in items])


async def task_stats(request: Request) -> Response:
    """``GET /api/tasks/stats``: the queue's counts."""
    _takes(request)
    return JSONResponse(await REQUESTS.run(_served(request).tl.queue.stats))


async def task_ready(request: Request) -> Response:
    """``GET /api/tasks/ready``: what can run now (``count``, the first ``limit``) and what
    cannot, each task with why (``waiting``), for ``agent`` or any agent, of ``kind`` (given
    once or more) or any kind."""
    _takes(request, "agent", "kind", "limit")
    limit = _limit(request)
    tl = _served(request).tl
    kinds = request.query_params.getlist("kind") or None
    ready = functools.partial(tl.queue.ready, kinds=kinds, explain=True, limit=limit)
    found = await REQUESTS.run(ready, _param(request, "agent") or None)
    return JSONResponse(found.to_dict(tl.now().timestamp()))


async def task(request: Request) -> Response:
    """``GET /api/tasks/{task}``: one task."""
    _takes(request)
    found = await REQUESTS.run(_served(request).tl.queue.get, request.path_params["task"])
    return JSONResponse(_public(found.to_dict()))


async def task_cancel(request: Request) -> Response:
    """``POST /api/tasks/{task}/cancel``: cancel a task, with an optional reason."""
    _takes(request)
    body = _only(await _body(request), {"reason"})
    queue = _served(request).tl.queue
    done = await _act(request, queue.cancel, request.path_params["task"], body.get("reason"))
    return JSONResponse(_public(done.to_dict()))


async def task_requeue(request: Request) -> Response:
    """``POST /api/tasks/{task}/requeue``: put an ended task back in the queue."""
    _takes(request)
    _only(await _body(request), set())
    done = await _act(request, _served(request).tl.queue.requeue, request.path_params["task"])
    return JSONResponse(_public(done.to_dict()))


async def events(request: Request) -> Response:
    """``GET /api/events``: the live event stream (see :mod:`taskloom.server.sse`)."""
    _takes(request, "after", "thread", "tasks")
    served = _served(request)
    header = request.headers.get("last-event-id")
    after = None
    query_after = _param(request, "after")
    if header:
        after = parse_cursor(header)
    elif query_after is not None:
        after = parse_cursor(query_after, "`after`")
    thread_id = _param(request, "thread") or None
    if thread_id is not None:
        thread_id = check_thread_id(thread_id)
    with_tasks = _flag(request, "tasks", "1")
    opened = await open_stream(served.hub, after=after, thread_id=thread_id)
    # Set on server shutdown: the stream then ends and its response completes.
    stop = anyio.Event()
    stream = event_stream(served.hub, opened, thread_id=thread_id, tasks=with_tasks, stop=stop)
    return EventSourceResponse(
        stream, ping=served.ping_s, shutdown_event=stop, shutdown_grace_period=SHUTDOWN_GRACE_S
    )


async def on_error(request: Request, exc: Exception) -> Response:
    """A library error as JSON with its code and ``http_status``; a 5xx is logged. A body
    refused before it was read whole closes the connection: the rest of it is never read."""
    assert isinstance(exc, TaskloomError)
    if exc.http_status >= 500:  # the server's trouble, not the caller's: its log says so
        log.error("%s %s: %s", request.method, request.url.path, exc.message)
    unread = {"Connection": "close"} if isinstance(exc, (TooLarge, RequestTimeout)) else None
    return JSONResponse({"error": exc.code, "message": exc.message}, exc.http_status, unread)


async def on_disconnect(request: Request, exc: Exception) -> Response:
    """A client that went away before its request's body arrived whole: nobody is left to
    answer, and nothing went wrong on the server, so nothing is logged."""
    assert isinstance(exc, ClientDisconnect)
    return Response(status_code=400)


async def on_value_error(request: Request, exc: Exception) -> Response:
    """A ``ValueError`` as a 400 ``invalid_input``."""
    return JSONResponse({"error": "invalid_input", "message": str(exc)}, 400)


async def on_http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such route, wrong method) in the API's JSON shape, with
    their headers: a 405 names the methods the route takes (``Allow``)."""
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return JSONResponse({"error": code, "message": exc.detail}, exc.status_code, exc.headers)
