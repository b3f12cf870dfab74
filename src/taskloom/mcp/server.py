"""The MCP server over the one tool registry (official ``mcp`` SDK, low-level server API).

Tools are listed from the toolbox's registry, so each tool is served with the same name,
description and schema as the OpenAI and Anthropic renderings; a server serves one profile
of them (:mod:`taskloom.tools.profiles`), and a tool outside it is unknown. The thread and
agent a call acts on come from the server's binding (:mod:`taskloom.mcp.binding`), never
from tool arguments; an error result becomes an MCP tool error (``isError``) with the reason
as text. Resources: the bound thread's board markdown and goal. Long calls of a client that
speaks the Tasks extension are MCP tasks (:mod:`taskloom.mcp.tasks`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.metadata
import json
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import is_version_at_least

from taskloom._pools import REQUESTS
from taskloom.domain.errors import InvalidInput, TaskloomError
from taskloom.domain.text import shown_id
from taskloom.mcp.binding import Binding, Bindings
from taskloom.mcp.runs import CallRunner, call_result
from taskloom.mcp.tasks import TaskSettings, TasksExtension, install
from taskloom.tools.registry import Choice
from taskloom.tools.spec import ToolContext, ToolResult, ToolSpec, error_result

if TYPE_CHECKING:
    from taskloom.client import Taskloom

BOARD_URI = "taskloom://board"
GOAL_URI = "taskloom://goal"
RESOURCE_NOT_FOUND = -32002
"""``resources/read`` of a URI the server does not have: -32002 up to protocol 2025-11-25;
from 2026-07-28 the spec says invalid params (SEP-2164) and clients accept both."""


@dataclass(frozen=True, slots=True)
class McpConfig:
    """A server's settings: the tools it serves (over HTTP, those a request names in its
    headers, else these), and its MCP tasks' lifetime and poll interval."""

    tools: Choice = None
    tasks: TaskSettings = field(default_factory=TaskSettings)


def build_server(
    tl: Taskloom, ctx: ToolContext | None, config: McpConfig | None = None
) -> Server[Any]:
    """An MCP server bound to one thread (``ctx``), or, with ``ctx=None``, to whatever each
    HTTP request's headers name (:func:`build_with_runner`'s server)."""
    return build_with_runner(tl, ctx, config)[0]


def build_with_runner(
    tl: Taskloom, ctx: ToolContext | None, config: McpConfig | None = None
) -> tuple[Server[Any], CallRunner]:
    """An MCP server as :func:`build_server` builds it, and the runner of its slow calls,
    which its transport stops as the server ends (:meth:`CallRunner.stop`).

    The SDK runs every request as its own task, so tool calls piped in together would run
    at once and land in any order. Each session's tool calls, resource reads and
    ``tasks/*`` requests take its lock first, before any ``await``: asyncio's lock is first
    come, first served, so they apply in the order received. Over stdio the session is the
    process; over HTTP it is the ``Mcp-Session-Id`` (none for protocol 2026-07-28: each
    request is its own), so sessions (other agents) never wait for each other's order."""
    config = config or McpConfig()
    bindings = Bindings(None if ctx is None else Binding(ctx, config.tools), config.tools)
    stdio_lock = asyncio.Lock()
    session_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def locked(request_ctx: Any) -> asyncio.Lock:
        if bindings.fixed:
            return stdio_lock
        session = bindings.session(request_ctx)
        if session is None:  # stateless: each request is its own session
            return asyncio.Lock()
        lock = session_locks.get(session)
        if lock is None:  # held only while a call of the session runs or waits
            lock = session_locks[session] = asyncio.Lock()
        return lock

    async def list_tools(request_ctx: Any, params: Any) -> types.ListToolsResult:
        _one_page(params)
        try:
            specs = tl.tools.specs(profile=bindings.of(request_ctx).tools)
        except InvalidInput as exc:
            if _http_method(request_ctx) == "tools/call":
                # The SDK lists the tools to check a call's Mcp-Param headers and logs a
                # failed listing with its traceback: nothing is listed, and the call itself
                # answers with the error.
                return types.ListToolsResult(tools=[])
            raise MCPError(types.INVALID_PARAMS, exc.message) from None
        return types.ListToolsResult(tools=[listed(s) for s in specs])

    def run_call(name: str, arguments: dict[str, Any], binding: Binding) -> ToolResult:
        spec = tl.tools.chosen(binding.tools).get(name)
        if spec is not None and spec.needs_thread and not binding.ctx.thread_id:
            return error_result(f"tool '{name}' needs a thread: {_THREAD_HELP}")
        return tl.tools.dispatch(name, arguments, binding.ctx, profile=binding.tools)

    async def call_tool(
        request_ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        async with locked(request_ctx):  # first: no await may come before it
            try:
                binding = bindings.of(request_ctx)
                arguments = params.arguments or {}
                result = await until_given_up(
                    binding, lambda b: run_call(params.name, arguments, b), runner.giving_up
                )
            except InvalidInput as exc:
                result = error_result(exc.message)
        return call_result(result)

    async def list_resources(_: Any, params: Any) -> types.ListResourcesResult:
        _one_page(params)
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=BOARD_URI, name="board", mime_type="text/markdown"),
                types.Resource(uri=GOAL_URI, name="goal", mime_type="application/json"),
            ]
        )

    async def list_resource_templates(_: Any, params: Any) -> types.ListResourceTemplatesResult:
        """None: the two resources are fixed. Answered, not "method not found", as the
        server says it serves resources, and SDK clients that list templates then failed."""
        _one_page(params)
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def read_resource(request_ctx: Any, params: types.ReadResourceRequestParams) -> Any:
        async with locked(request_ctx):  # after the session's earlier calls, in order
            return await _read_resource(request_ctx, params)

    async def _read_resource(request_ctx: Any, params: types.ReadResourceRequestParams) -> Any:
        # Errors are JSON-RPC errors with the spec's codes (MCPError: no traceback logged).
        uri = str(params.uri)
        if uri not in (BOARD_URI, GOAL_URI):
            modern = is_version_at_least(request_ctx.protocol_version, "2026-07-28")
            code = types.INVALID_PARAMS if modern else RESOURCE_NOT_FOUND
            # A URI is cut as every not-found text cuts what it repeats (a client may send one
            # kilobytes long).
            shown = shown_id(uri)
            message = f"unknown resource '{shown}' ({BOARD_URI}, {GOAL_URI})"
            raise MCPError(code, message, {"uri": shown})
        try:
            thread = bindings.of(request_ctx).ctx.thread_id
        except InvalidInput as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message) from None
        if thread is None:
            raise MCPError(types.INVALID_PARAMS, f"reading {uri} needs a thread: {_THREAD_HELP}")
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

    server: Server[Any] = Server(
        "taskloom",
        version=package_version(),
        instructions="Durable todo board, goal, queue and stash for this thread.",
        on_list_tools=list_tools,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
    )
    extension = TasksExtension(tl, bindings, locked, config.tasks)
    runner = extension.runner
    install(server, extension, call_tool)
    return server, runner


def listed(spec: ToolSpec) -> types.Tool:
    """A tool as ``tools/list`` gives it: the registry's name, description and schema, and
    what a call does as annotations (none for a tool that does not say)."""
    effect = spec.effect
    hints = (
        None
        if effect is None
        else types.ToolAnnotations(
            read_only_hint=effect.read_only,
            destructive_hint=effect.destructive,
            idempotent_hint=effect.idempotent,
            open_world_hint=effect.open_world,
        )
    )
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema(),
        annotations=hints,
    )


async def until_given_up(
    binding: Binding, call: Callable[[Binding], ToolResult], stopping: threading.Event
) -> ToolResult:
    """``call(binding)`` on a request thread, its context's ``cancelled`` true once the
    request is (``notifications/cancelled``, the client gone) or the server is ``stopping``:
    a tool that waits (``goal_wait``, ``task_wait``) stops at its next look and frees its
    thread, where it held one (and the end of the process) for up to its whole ``wait_s``.
    A cancelled request still waits for the call to stop, so the session's next call starts
    after it."""
    gave_up = threading.Event()

    def cancelled() -> bool:
        return gave_up.is_set() or stopping.is_set()

    given = Binding(dataclasses.replace(binding.ctx, cancelled=cancelled), binding.tools)
    running = asyncio.ensure_future(REQUESTS.run(call, given))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        gave_up.set()
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            await running
        raise


_THREAD_HELP = "send the X-Taskloom-Thread header naming the thread"


def _one_page(params: Any) -> None:
    """Refuse a list request's ``cursor``: every list here is one page, so no cursor was
    ever given out, and the spec answers an invalid one -32602 (a client that sent one got
    the first page again, as if it were the next)."""
    cursor = getattr(params, "cursor", None)
    if cursor is not None:
        shown = shown_id(str(cursor))
        raise MCPError(
            types.INVALID_PARAMS, f"invalid cursor '{shown}': every list here is one page"
        )


def _http_method(request_ctx: Any) -> str | None:
    """The ``Mcp-Method`` header of the HTTP request a request came in (``None`` over stdio,
    and for protocol 2025-11-25, which sends none)."""
    headers = getattr(request_ctx.request, "headers", None) or {}
    method = headers.get("mcp-method")
    return None if method is None else str(method)


def package_version() -> str:
    """The installed taskloom's version, for ``serverInfo`` (clients show and log it); the
    source's own when it runs uninstalled (from a checkout on ``PYTHONPATH``)."""
    try:
        return importlib.metadata.version("taskloom")
    except importlib.metadata.PackageNotFoundError:
        from taskloom import __version__

        return __version__
