"""Tool calls answered as MCP tasks that run here: on a worker of the queue, not in the request.

A slow call (an extraction that asks the guard's model) answered as an MCP task becomes a
queue task of kind :data:`CALL_KIND` for the agent :data:`RUNNER_AGENT`, which no other worker
claims. Its payload is the whole call (tool, arguments, thread, agent, the MCP task's id). A
:class:`CallRunner` works those tasks in threads of the MCP server, records each call's
result on its MCP task, then completes the queue task. A run takes its thread, agent and tool
from the MCP task's record, which only a server writes, never from the payload: anyone who may
add a task to the queue (a model, through ``task_delegate``) can write a payload, and a task
that no record names as its call is not run. The queue keeps the call durable:
the claim is bound to the server's process, so when the server dies mid-call, the next
server to look (a client polling ``tasks/get`` starts its runner) takes the call up again.
A server runs up to :data:`MAX_CALLS` calls at once.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import mcp_types as types

from taskloom.domain.errors import NoRetry, TaskloomError
from taskloom.domain.queue import OWN_KINDS, TaskStatus
from taskloom.store import mcp_tasks
from taskloom.store.mcp_tasks import McpTaskRecord
from taskloom.tools.spec import ToolContext, ToolResult

if TYPE_CHECKING:
    from taskloom.client import Taskloom
    from taskloom.domain.queue import Task

log = logging.getLogger("taskloom.mcp")

CALL_KIND = f"{OWN_KINDS}mcp-call"
RUNNER_AGENT = "taskloom-mcp"
MAX_CALLS = 4
"""How many calls one server runs at once, each on its own thread: a long one (a
``goal_wait``) does not hold up another (an extraction). More wait for a thread."""
CALL_LEASE_S = 60.0
"""A run's lease, renewed while the call runs: how soon another server takes up the call of
a server that hung (one that died is seen at once on its own host)."""
RECORD_WAIT_S = 2.0
"""How long a run waits for its MCP task's record: a server stores it just after the queue
task, and another server's runner may claim the queue task in between."""
NOT_A_CALL = "not run: no MCP task of this server's database names this queue task as its call"


def call_result(result: ToolResult) -> types.CallToolResult:
    """A tool's answer as MCP's ``CallToolResult`` (an error result has ``isError``)."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result.content)], is_error=result.is_error
    )


def wire(result: types.CallToolResult) -> dict[str, Any]:
    """``result`` as JSON-ready data, as a task's ``result`` carries it (without the
    ``resultType`` of a response: it is not one)."""
    return result.model_dump(by_alias=True, mode="json", exclude_none=True, exclude={"result_type"})


def call_payload(
    task_id: str, tool: str, arguments: dict[str, Any], ctx: ToolContext
) -> dict[str, Any]:
    """The payload of the queue task that runs a call: everything the run needs."""
    return {
        "mcp_task": task_id,
        "tool": tool,
        "arguments": arguments,
        "thread": ctx.thread_id,
        "agent": ctx.agent_id,
    }


class CallRunner:
    """Works the calls of :data:`CALL_KIND`, up to :data:`MAX_CALLS` at once, each on a
    thread of its own. :meth:`kick` starts a thread (one already running may be busy with a
    long call); a thread ends when no call is ready (an idle server runs no thread and
    writes nothing)."""

    def __init__(self, tl: Taskloom) -> None:
        self._tl = tl
        self._lock = threading.Lock()
        self._threads = 0
        self._running: set[str] = set()
        self._again = False
        self._reclaimed = False

    def kick(self) -> None:
        """Make sure the calls ready now get run: start a thread, or have one look again."""
        with self._lock:
            if self._threads >= MAX_CALLS:
                self._again = True  # the next thread free looks again
                return
            self._threads += 1
            reclaim, self._reclaimed = not self._reclaimed, True
        threading.Thread(
            target=self._loop, args=(reclaim,), name="taskloom-mcp-calls", daemon=True
        ).start()

    def runs(self, task_id: str) -> bool:
        """Whether a thread of this runner is running the call of queue task ``task_id``."""
        with self._lock:
            return task_id in self._running

    def _loop(self, reclaim: bool) -> None:
        from taskloom.queue.worker import Worker

        try:
            if reclaim:  # a server that died holding a call gives it up now
                self._tl.queue.reclaim()
            worker = Worker(
                self._tl.queue, RUNNER_AGENT, self._run, lease=CALL_LEASE_S, kinds=[CALL_KIND]
            )
            while True:
                worker.run(until_empty=True)
                with self._lock:
                    if not self._again:
                        self._threads -= 1
                        return
                    self._again = False
        except Exception:
            log.exception("an MCP call runner thread stopped")
            with self._lock:
                self._threads -= 1

    def _run(self, task: Task) -> None:
        """Run one call and record its result on its MCP task (a tool's error is a result).
        A call that waits stops early once its queue task is no longer this run's (the MCP
        task cancelled)."""
        record = self._record(task)
        with self._lock:
            self._running.add(task.id)
        try:
            ctx = ToolContext(
                thread_id=record.thread_id or None,
                agent_id=record.agent_id or None,
                cancelled=lambda: not self._still_ours(task),
            )
            result = self._tl.tools.dispatch(record.tool, task.payload.get("arguments"), ctx)
            text = json.dumps(wire(call_result(result)), ensure_ascii=False)
            now = self._tl.now().timestamp()
            mcp_tasks.settle(self._tl.store, record.id, now, "completed", result=text)
        finally:
            with self._lock:
                self._running.discard(task.id)

    def _record(self, task: Task) -> McpTaskRecord:
        """The live record of the MCP task whose call ``task`` is: a ``call`` record that
        names ``task`` as its queue task. Raises :class:`NoRetry` for a task no record names
        (the task ends dead, never run)."""
        named = task.payload.get("mcp_task")
        deadline = time.monotonic() + RECORD_WAIT_S
        while isinstance(named, str):
            record = mcp_tasks.get(self._tl.store, named, self._tl.now().timestamp())
            if record is not None:
                if record.kind == "call" and record.queue_task_id == task.id:
                    return record
                break
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        raise NoRetry(NOT_A_CALL)

    def _still_ours(self, task: Task) -> bool:
        """Whether ``task`` is still in progress under this run's lease."""
        try:
            now = self._tl.queue.get(task.id)
        except TaskloomError:
            return False
        return now.status is TaskStatus.IN_PROGRESS and now.lease_token == task.lease_token
