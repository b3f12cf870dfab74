"""``create_app(tl)``: the JSON API and the SSE stream, routes listed explicitly.

Errors from the library map to JSON with their ``http_status``; bad input is a 4xx that says
what is wrong, never a 500. With a token configured, every request must carry it
(``Authorization: Bearer …``, or ``?token=`` for EventSource), compared in constant time.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput, TaskloomError
from taskloom.server.sse import event_stream

Endpoint = Callable[[Request], Awaitable[Response]]


async def _body(request: Request) -> dict[str, Any]:
    try:
        data = json.loads(await request.body() or b"{}")
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInput("request body must be a JSON object")
    return data


def create_app(tl: Taskloom, *, token: str | None = None, poll_s: float = 0.1) -> Starlette:
    def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Awaitable[Any]:
        return asyncio.to_thread(fn, *args, **kwargs)

    async def threads(request: Request) -> Response:
        return JSONResponse(await call(tl.threads))

    async def board(request: Request) -> Response:
        return JSONResponse(await call(tl.board(request.path_params["thread"]).list))

    async def goal(request: Request) -> Response:
        return JSONResponse(await call(tl.goal(request.path_params["thread"]).get))

    async def card_decision(request: Request) -> Response:
        body = await _body(request)
        if not isinstance(body.get("approve"), bool):
            raise InvalidInput("`approve` must be true or false")
        handle = tl.board(request.path_params["thread"])
        return JSONResponse(
            await call(handle.decide_plan, request.path_params["card"], body["approve"])
        )

    async def card_status(request: Request) -> Response:
        body = await _body(request)
        if not isinstance(body.get("status"), str):
            raise InvalidInput("`status` is required")
        handle = tl.board(request.path_params["thread"])
        return JSONResponse(
            await call(handle.update_status, request.path_params["card"], body["status"])
        )

    async def goal_action(request: Request) -> Response:
        handle = tl.goal(request.path_params["thread"])
        action = request.path_params["action"]
        if action == "budget":
            body = await _body(request)
            budget = body.get("token_budget")
            if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool)):
                raise InvalidInput("`token_budget` must be an integer or null")
            return JSONResponse(await call(handle.set_budget, budget))
        if action not in ("pause", "resume"):
            raise InvalidInput(f"unknown goal action '{action}' (pause, resume, budget)")
        return JSONResponse(await call(getattr(handle, action)))

    async def tasks(request: Request) -> Response:
        status = request.query_params.get("status")
        items = await call(tl.queue.list, status=status, limit=500)
        return JSONResponse([t.to_dict() for t in items])

    async def task_stats(request: Request) -> Response:
        return JSONResponse(await call(tl.queue.stats))

    async def task(request: Request) -> Response:
        return JSONResponse((await call(tl.queue.get, request.path_params["task"])).to_dict())

    async def task_cancel(request: Request) -> Response:
        body = await _body(request)
        done = await call(tl.queue.cancel, request.path_params["task"], body.get("reason"))
        return JSONResponse(done.to_dict())

    async def events(request: Request) -> Response:
        raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
        if not raw.isdigit():
            raise InvalidInput("Last-Event-ID must be a non-negative integer")
        thread = request.query_params.get("thread") or None
        stream = event_stream(tl, after=int(raw), thread_id=thread, poll_s=poll_s)
        return EventSourceResponse(stream, ping=15)

    async def on_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, TaskloomError)
        return JSONResponse({"error": exc.code, "message": exc.message}, exc.http_status)

    async def on_value_error(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "invalid_input", "message": str(exc)}, 400)

    class TokenAuth(BaseHTTPMiddleware):
        async def dispatch(self, request: Request, call_next: Any) -> Response:
            if token is not None:
                given = request.headers.get("authorization", "").removeprefix("Bearer ")
                given = given or request.query_params.get("token", "")
                if not hmac.compare_digest(given.encode(), token.encode()):
                    return JSONResponse({"error": "unauthorized", "message": "token required"}, 401)
            response: Response = await call_next(request)
            return response

    routes = [
        Route("/api/threads", threads),
        Route("/api/threads/{thread}/board", board),
        Route("/api/threads/{thread}/goal", goal),
        Route("/api/threads/{thread}/goal/{action}", goal_action, methods=["POST"]),
        Route("/api/threads/{thread}/cards/{card}/decision", card_decision, methods=["POST"]),
        Route("/api/threads/{thread}/cards/{card}/status", card_status, methods=["POST"]),
        Route("/api/tasks", tasks),
        Route("/api/tasks/stats", task_stats),
        Route("/api/tasks/{task}", task),
        Route("/api/tasks/{task}/cancel", task_cancel, methods=["POST"]),
        Route("/api/events", events),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(TokenAuth)],
        exception_handlers={TaskloomError: on_error, ValueError: on_value_error},
    )
