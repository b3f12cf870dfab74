"""The MCP Tasks extension (``io.modelcontextprotocol/tasks``, protocol 2026-07-28), on the
queue.

A client that declares the extension on a ``tools/call`` (protocol 2026-07-28) gets an MCP
task for a call that can take long, and a plain result for every other call:

- a tool that waits on the queue (``task_delegate``, ``task_wait``: a spec with
  ``outcome``) does its quick part in the request; unless the queue task has ended already,
  the MCP task follows it, and its answer is ``outcome(task)`` once it has ended;
- a slow call (a spec whose ``slow`` says so: ``extract_from_result`` with a model to ask,
  ``goal_wait``) becomes a queue task that a worker of an MCP server runs
  (:mod:`taskloom.mcp.runs`).

The record of each MCP task is in the taskloom database (:mod:`taskloom.store.mcp_tasks`),
stored before the task is returned, so ``tasks/get`` from any server of the database (one
restarted meanwhile included) finds it with its result. A task belongs to the thread and
agent that made it: for any other caller its id is as unknown as one never made (JSON-RPC
-32602, one message for both). ``tasks/cancel`` cancels the queue task, and refuses a task
that has ended (-32602). A tool that fails is
``completed`` with an ``isError`` result; ``failed`` is kept for protocol errors (a call run
here that could not be run at all, or that a server ended mid-run and may not run twice:
:func:`~taskloom.mcp.runs.on_exit`). Nothing here asks the client for input: ``tasks/update``
is acknowledged and its responses ignored, as the extension says for requests not
outstanding.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field, ValidationError

from taskloom._pools import REQUESTS
from taskloom._runtime import new_token
from taskloom.domain.errors import InvalidInput, NotFound, TaskloomError
from taskloom.domain.queue import TERMINAL, Task, TaskStatus, iso_time
from taskloom.domain.status import words
from taskloom.domain.threads import check_thread_id
from taskloom.mcp.binding import Binding, Bindings
from taskloom.mcp.runs import CALL_KIND, RUNNER_AGENT, CallRunner, call_payload, call_result, wire
from taskloom.store import mcp_tasks
from taskloom.store.mcp_tasks import McpTaskRecord
from taskloom.tools.spec import ToolSpec, error_result

EXTENSION = "io.modelcontextprotocol/tasks"
NOT_FOUND = "Failed to retrieve task: task not found"
"""The one answer to an id that is unknown, expired, or another caller's."""
NAME_HEADER = "mcp-name"

Locked = Callable[[Any], Any]
"""The session lock of a request (:func:`taskloom.mcp.server.build_server`'s order)."""


@dataclass(frozen=True, slots=True)
class TaskSettings:
    """How long an MCP task and its result are kept (``None``: for ever), and how often a
    client is asked to poll it."""

    ttl_s: float | None = 86_400.0
    poll_interval_s: float = 1.0


class TaskIdParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskIdParams):
    input_responses: dict[str, Any] = Field(default_factory=dict)


class TasksExtension(Extension):
    """The extension's three methods, and the ``tools/call`` interceptor that answers a long
    call with a task."""

    identifier = EXTENSION

    def __init__(
        self,
        tl: Any,
        bindings: Bindings,
        locked: Locked,
        settings: TaskSettings,
    ) -> None:
        self._tl = tl
        self._bindings = bindings
        self._locked = locked
        self._settings = settings
        self.runner = CallRunner(tl)

    def methods(self) -> Sequence[MethodBinding]:
        """The extension's methods, served at protocol 2026-07-28 (its tasks exist there)."""
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        return (
            MethodBinding("tasks/get", TaskIdParams, self._get, modern),
            MethodBinding("tasks/update", UpdateParams, self._update, modern),
            MethodBinding("tasks/cancel", TaskIdParams, self._cancel, modern),
        )

    # --- tools/call -------------------------------------------------------------------------

    async def intercept_tool_call(
        self,
        params: types.CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        """A task for a long call of a client that declared the extension on this request;
        every other call goes on as usual. No ``await`` before the session's lock, so calls
        keep their order."""
        long = self._long(params, ctx)
        if long is None:
            return await call_next(ctx)
        spec, binding = long
        async with self._locked(ctx):
            try:
                if spec.outcome is not None:
                    return await self._follow(spec, params, binding)
                return await self._run_later(spec, params, binding)
            except TaskloomError as exc:  # the database failed: a tool error, as without a task
                return call_result(error_result(exc.message))

    def _long(
        self, params: types.CallToolRequestParams, ctx: ServerRequestContext[Any, Any]
    ) -> tuple[ToolSpec, Binding] | None:
        """The tool and binding of a call to answer with a task, or ``None``."""
        declared = ctx.session.client_capabilities
        extensions = declared.extensions if declared is not None else None
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or EXTENSION not in (
            extensions or {}
        ):
            return None  # the client cannot take a task: the call answers as ever
        try:
            binding = self._bindings.of(ctx)
            spec = self._tl.tools.chosen(binding.tools).get(params.name)
            if binding.ctx.thread_id is not None:  # one the tool refuses: refused at once
                check_thread_id(binding.ctx.thread_id)
        except TaskloomError:
            return None  # the call answers with the error
        if spec is None or (spec.needs_thread and not binding.ctx.thread_id):
            return None
        if spec.outcome is not None:
            return spec, binding
        if spec.slow is not None and spec.slow(self._tl.tools.env, binding.ctx):
            return spec, binding
        return None

    async def _follow(
        self, spec: ToolSpec, params: types.CallToolRequestParams, binding: Binding
    ) -> HandlerResult:
        """Do the call's quick part (``wait_s`` 0): its answer, if it has one at once, or a
        task that follows its queue task. Arguments the tool refuses as given (a ``wait_s``
        that is not a number from 0 to 300 included) get its error, as without a task."""
        given = params.arguments or {}
        # Arguments refused before the tool runs get the tool's own error text.
        arguments = given if _refused(spec, given) else {**given, "wait_s": 0}
        result = await REQUESTS.run(
            self._tl.tools.dispatch, spec.name, arguments, binding.ctx, profile=binding.tools
        )
        data = result.data if isinstance(result.data, dict) else {}
        if result.is_error or data.get("status") not in _LIVE:
            return call_result(result)
        return await REQUESTS.run(self._create, spec, binding, str(data["id"]), "follow")

    async def _run_later(
        self, spec: ToolSpec, params: types.CallToolRequestParams, binding: Binding
    ) -> HandlerResult:
        """A task whose call a worker runs. Arguments the tool refuses (a ``wait_s`` of -1, a
        ``thread_id``) get its error at once, as without a task; a call the queue cannot
        take (arguments over a task's payload limit) runs in the request, as any call."""
        given = dict(params.arguments or {})
        if not _refused(spec, given):
            task_id = new_token()
            try:
                queued, _ = await REQUESTS.run(
                    self._tl.queue.add,
                    f"MCP call: {spec.name}",
                    kind=CALL_KIND,
                    target_agent=RUNNER_AGENT,
                    payload=call_payload(task_id, spec.name, given, binding.ctx),
                )
            except InvalidInput:
                pass  # the queue cannot take it: it runs here, below
            else:
                created = await REQUESTS.run(
                    self._create, spec, binding, queued.id, "call", task_id
                )
                self.runner.kick()
                return created
        result = await REQUESTS.run(
            self._tl.tools.dispatch, spec.name, given, binding.ctx, profile=binding.tools
        )
        return call_result(result)

    def _create(
        self, spec: ToolSpec, binding: Binding, queue_task_id: str, kind: str, task_id: str = ""
    ) -> dict[str, Any]:
        """Store the record (committed before the task is returned), then the task."""
        now = self._tl.now().timestamp()
        ttl = self._settings.ttl_s
        record = McpTaskRecord(
            id=task_id or new_token(),
            thread_id=binding.ctx.thread_id or "",
            agent_id=binding.ctx.agent_id or "",
            tool=spec.name,
            queue_task_id=queue_task_id,
            kind=kind,
            status=mcp_tasks.WORKING,
            result=None,
            error=None,
            created_at=now,
            updated_at=now,
            expires_at=None if ttl is None else now + ttl,
            poll_ms=round(self._settings.poll_interval_s * 1000),
        )
        mcp_tasks.purge_expired(self._tl.store, now)
        mcp_tasks.insert(self._tl.store, record)
        return {"resultType": "task", **self._shown(record, "working", now, None)}

    # --- tasks/get, tasks/update, tasks/cancel ------------------------------------------------

    async def _get(
        self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams
    ) -> dict[str, Any]:
        async with self._locked(ctx):  # after the session's earlier requests, in order
            record = await self._owned(ctx, params.task_id)
            return {"resultType": "complete", **await REQUESTS.run(self._detail, record)}

    async def _update(
        self, ctx: ServerRequestContext[Any, Any], params: UpdateParams
    ) -> dict[str, Any]:
        async with self._locked(ctx):  # no input is ever asked for: none is outstanding
            await self._owned(ctx, params.task_id)
        return {"resultType": "complete"}

    async def _cancel(
        self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams
    ) -> dict[str, Any]:
        async with self._locked(ctx):
            record = await self._owned(ctx, params.task_id)
            await REQUESTS.run(self._cancel_record, record)
        return {"resultType": "complete"}

    async def _owned(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> McpTaskRecord:
        """The caller's own live task ``task_id``; the same error for any other id."""
        named = (getattr(ctx.request, "headers", None) or {}).get(NAME_HEADER)
        if named is not None and named != task_id:
            raise MCPError(types.HEADER_MISMATCH, "Mcp-Name header does not match params.taskId")
        try:
            owner = self._bindings.of(ctx).ctx
        except InvalidInput as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message) from None
        record = await REQUESTS.run(
            mcp_tasks.get, self._tl.store, task_id, self._tl.now().timestamp()
        )
        if record is None or (record.thread_id, record.agent_id) != (
            owner.thread_id or "",
            owner.agent_id or "",
        ):
            raise MCPError(types.INVALID_PARAMS, NOT_FOUND)
        return record

    def _cancel_record(self, record: McpTaskRecord) -> None:
        """Cancel a working task; one that has ended (before, or first in a race) is
        refused with ``-32602`` and its status, as the extension asks."""
        if record.status == mcp_tasks.WORKING:
            try:
                self._tl.queue.cancel(record.queue_task_id, "canceled by the MCP client")
            except (InvalidInput, NotFound):
                record = self._settled(record)  # it ended first: the task ends as the work did
            else:
                now = self._tl.now().timestamp()
                mcp_tasks.settle(self._tl.store, record.id, now, "cancelled")
                return
        raise MCPError(
            types.INVALID_PARAMS, f"Cannot cancel task: it has already ended ({record.status})"
        )

    def _detail(self, record: McpTaskRecord) -> dict[str, Any]:
        """The task as ``tasks/get`` answers it, its end recorded once the work has ended."""
        if record.status == mcp_tasks.WORKING:
            record = self._settled(record)
        if record.status == mcp_tasks.WORKING:
            message, changed = self._progress(record)
            return self._shown(record, "working", changed, message)
        shown = self._shown(record, record.status, record.updated_at, None)
        if record.result is not None:
            shown["result"] = json.loads(record.result)
        if record.error is not None:
            error = json.loads(record.error)
            shown["error"], shown["statusMessage"] = error, error["message"]
        return shown

    def _settled(self, record: McpTaskRecord) -> McpTaskRecord:
        """``record`` with its end recorded if its queue task has ended (a call that ran
        here records its own result; one that died after its last attempt failed)."""
        try:
            task = self._tl.queue.get(record.queue_task_id)
        except NotFound:
            task = None
        now = self._tl.now().timestamp()
        if task is not None and task.status not in TERMINAL:
            if record.kind == "call" and not self.runner.runs(task.id):
                self.runner.kick()  # this server takes it up if the one running it died
            return record
        status, result, error = self._end(record, task)
        mcp_tasks.settle(self._tl.store, record.id, now, status, result=result, error=error)
        return mcp_tasks.get(self._tl.store, record.id, now) or record

    def _end(self, record: McpTaskRecord, task: Task | None) -> tuple[str, str | None, str | None]:
        """How the call ended, in MCP's words (:mod:`taskloom.domain.status`): its status,
        its result and its error, as JSON text."""
        said = None if task is None else words(task.status)
        if said is not None and said.mcp == "cancelled":
            return "cancelled", None, None
        spec = self._tl.tools.registry.get(record.tool)
        if task is not None and record.kind == "follow" and spec is not None and spec.outcome:
            result = wire(call_result(spec.outcome(task)))  # an error result if it failed
            return "completed", json.dumps(result, ensure_ascii=False), None
        if task is None:
            why = "the queue task doing the work is gone (pruned)"
        elif task.status is TaskStatus.COMPLETED:  # recorded its result just now: read again
            fresh = mcp_tasks.get(self._tl.store, record.id, self._tl.now().timestamp())
            if fresh is not None and fresh.result is not None:
                return "completed", fresh.result, None
            why = "the call ended without a result"
        else:
            why = f"the call could not be run: {task.last_error or 'no error was given'}"
        error = {"code": types.INTERNAL_ERROR, "message": why}
        return "failed", None, json.dumps(error, ensure_ascii=False)

    def _progress(self, record: McpTaskRecord) -> tuple[str | None, float]:
        """What a working task's queue task is doing, with its state in A2A's words, and
        when it last changed (``lastUpdatedAt``: a poll changes nothing)."""
        try:
            task = self._tl.queue.get(record.queue_task_id)
        except TaskloomError:
            return None, record.updated_at
        changed = task.changed_at or task.created_at
        state = f"{task.status.value} ({words(task.status).a2a})"
        if task.status is TaskStatus.IN_PROGRESS and record.kind == "follow":
            return f"{state}: {task.claimed_by} is working on it", changed
        if task.status is TaskStatus.IN_PROGRESS:
            return f"{state}: running", changed
        return f"{state}: waiting for a worker", changed

    def _shown(
        self, record: McpTaskRecord, status: str, updated: float, message: str | None
    ) -> dict[str, Any]:
        expires = record.expires_at
        ttl = None if expires is None else round((expires - record.created_at) * 1000)
        shown: dict[str, Any] = {
            "taskId": record.id,
            "status": status,
            "createdAt": iso_time(record.created_at),
            "lastUpdatedAt": iso_time(max(updated, record.updated_at)),
            "ttlMs": ttl,
            "pollIntervalMs": record.poll_ms,
        }
        if message is not None:
            shown["statusMessage"] = message
        return shown


_LIVE = frozenset(s.value for s in TaskStatus if s not in TERMINAL)


def _refused(spec: ToolSpec, given: dict[str, Any]) -> bool:
    """Whether ``spec`` refuses the arguments ``given`` before it runs."""
    try:
        spec.args.model_validate(given)
    except (ValidationError, InvalidInput):
        return True
    return False


def _gated(method: MethodBinding) -> Any:
    """``method``'s handler, answering "method not found" at a protocol version it is not
    served at, as the SDK's composition tier gates it. A taskloom error (the database
    unreachable) is a JSON-RPC error with its reason, as a resource read answers it."""
    versions = method.protocol_versions

    async def handler(ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
        if versions is not None and ctx.protocol_version not in versions:
            raise MCPError(types.METHOD_NOT_FOUND, "Method not found", method.method)
        try:
            return await method.handler(ctx, params)
        except TaskloomError as exc:  # the database failed: its reason, not "internal error"
            code = types.INVALID_PARAMS if isinstance(exc, InvalidInput) else types.INTERNAL_ERROR
            raise MCPError(code, exc.message) from None

    return handler


def install(
    server: Any, extension: TasksExtension, call_tool: Callable[..., Awaitable[Any]]
) -> None:
    """Apply ``extension`` to a low-level ``Server`` as ``MCPServer(extensions=…)`` applies
    one: its methods, its ``tools/call`` interceptor around ``call_tool``, and its entry under
    the server's advertised extensions."""
    from mcp.server.extension import compose_tool_call_handler

    for method in extension.methods():
        server.add_request_handler(method.method, method.params_type, _gated(method))
    server.add_request_handler(
        "tools/call",
        types.CallToolRequestParams,
        compose_tool_call_handler([extension], call_tool),
    )
    server.extensions[extension.identifier] = extension.settings()
