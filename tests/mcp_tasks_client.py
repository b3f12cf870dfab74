"""A client side of the MCP Tasks extension for the tests, on the SDK's client extension
interface: a ``tools/call`` answered with a task is polled with ``tasks/get`` (at the
interval the server asks for) until it ends, and its inline result is the call's result."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import anyio
import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict

EXTENSION = "io.modelcontextprotocol/tasks"


class CreatedTask(types.Result):
    """A ``CreateTaskResult``: the task the server made of the call."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class TaskIdParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param: ClassVar[str | None] = "taskId"


class DetailedTask(types.Result):
    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    poll_interval_ms: int | None = None
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TasksClient(ClientExtension):
    """Resolves task results by polling; ``seen`` keeps every task the server made, and
    ``on_task`` is called with each as it arrives."""

    identifier = EXTENSION

    def __init__(self, on_task: Callable[[CreatedTask], None] | None = None) -> None:
        self.seen: list[CreatedTask] = []
        self.polls: list[DetailedTask] = []
        self._on_task = on_task

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._resolve)]

    async def _resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        self.seen.append(created)
        if self._on_task is not None:
            self._on_task(created)
        wait = (created.poll_interval_ms or 1000) / 1000
        with anyio.fail_after(60):
            while True:
                await anyio.sleep(wait)
                task = await ctx.session.send_request(
                    GetTask(params=TaskIdParams(task_id=created.task_id)), DetailedTask
                )
                self.polls.append(task)
                wait = (task.poll_interval_ms or 1000) / 1000
                if task.status == "completed":
                    return types.CallToolResult.model_validate(task.result)
                if task.status in ("failed", "cancelled"):
                    raise RuntimeError(f"task {task.status}: {task.error or task.status_message}")


MODERN = "2026-07-28"


def envelope(tasks: bool = True) -> dict[str, Any]:
    """The ``_meta`` a 2026-07-28 request carries: its version and capabilities (with the
    Tasks extension, or without)."""
    extensions = {EXTENSION: {}} if tasks else {}
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test-client", "version": "1"},
    }


def modern(request_id: int, method: str, params: dict[str, Any], tasks: bool = True) -> str:
    """One 2026-07-28 JSON-RPC request line: no handshake, its envelope in ``_meta``."""
    body = {"jsonrpc": "2.0", "id": request_id, "method": method}
    body["params"] = {**params, "_meta": envelope(tasks)}
    return json.dumps(body)
