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
server to look (a client polling ``tasks/get`` starts its runner) takes the call up again,
as :func:`on_exit` allows. A server runs up to :data:`MAX_CALLS` calls at once.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types

from taskloom.domain.errors import NoRetry, TaskloomError
from taskloom.domain.queue import OWN_KINDS, TaskStatus
from taskloom.store import mcp_tasks
from taskloom.store.mcp_tasks import McpTaskRecord
from taskloom.tools.spec import ToolContext, ToolResult, ToolSpec

if TYPE_CHECKING:
    from taskloom.client import Taskloom
    from taskloom.domain.queue import Task
    from taskloom.queue.worker import Worker

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
SERVER_EXITED = "the MCP server running the call exited before it finished: call the tool again"
EXPIRED = "not finished: its MCP task expired (its time to live ran out) while it ran"
STOP_GRACE_S = 1.5
"""How long :meth:`CallRunner.stop` lets its running calls stop on their own (a wait stops at
its next look, at most a second apart) before it ends the rest itself."""

ExitEnd = Literal["given back", "failed"]


def on_exit(spec: ToolSpec | None) -> ExitEnd:
    """What becomes of a call a server runs when the server ends before the call does.

    - ``given back``: a call of a tool that may run again from its start (``rerun``: it has
      no effect but its answer, as ``goal_wait``, which waits and reads, and
      ``extract_from_result``, which asks a model). Its queue task goes back to ready (the
      attempt does not count) and its MCP task stays ``working``; the next server to look
      (any server of the database kicked by a slow call, or by ``tasks/get`` of the task)
      runs it again from its start: a wait waits its whole ``wait_s`` again, an extraction
      asks the model again.
    - ``failed``: a call of any other tool (one with an effect, which a second run would
      repeat). Its MCP task ends ``failed`` with :data:`SERVER_EXITED`, its queue task dead.

    An orderly end (stdin's end, SIGTERM, SIGINT, ``taskloom serve`` stopping) applies this
    at once (:meth:`CallRunner.stop`). A server that dies without one (SIGKILL, a crash)
    cannot: its claims go back to ready when the next server sweeps them (at once for a dead
    process of the same host, once the lease lapses for another host), and the next run
    applies it, a call of a tool without ``rerun`` ending ``failed`` unrun. A task that
    follows delegated work (``task_wait``) holds nothing of the server: the work goes on,
    and its MCP task ends as the work does, on any server.
    """
    return "given back" if spec is not None and spec.rerun else "failed"


@dataclass(slots=True)
class _Run:
    """A call running on a thread of the runner, and the flag that asks it to give up."""

    task: Task
    record: McpTaskRecord
    gave_up: threading.Event = field(default_factory=threading.Event)


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
    writes nothing). :meth:`stop` ends the runner as the server ends, each call it runs
    ending as :func:`on_exit` says."""

    def __init__(self, tl: Taskloom) -> None:
        self._tl = tl
        self._lock = threading.Condition()
        self._threads = 0
        self._running: dict[str, _Run] = {}
        self._workers: set[Worker] = set()
        self._again = False
        self._reclaimed = False
        self._stopping = False
        self.giving_up = threading.Event()
        """Set as the server starts to shut down: a plain call that waits (one answered in
        its request, not as a task) stops at its next look and answers."""

    def kick(self) -> None:
        """Make sure the calls ready now get run: start a thread, or have one look again."""
        with self._lock:
            if self._stopping:
                return
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

    def stop(self) -> None:
        """Run no more calls, and end each call running as :func:`on_exit` says: each is
        asked to give up, its thread records its end; one still running after
        :data:`STOP_GRACE_S` (a model's answer awaited) is ended from here, its thread left
        to end with the process. Returns once every call has its end recorded."""
        deadline = time.monotonic() + STOP_GRACE_S
        with self._lock:
            self._stopping = True
            for worker in self._workers:
                worker.stop()
            for run in self._running.values():
                run.gave_up.set()
            while self._threads and (left := deadline - time.monotonic()) > 0:
                self._lock.wait(left)
            stuck = list(self._running.values())
            self._running.clear()
        for run in stuck:
            try:
                self._end_stuck(run)
            except TaskloomError as exc:  # its claim goes back when its process is gone
                log.warning("could not end the MCP call of task %s: %s", run.task.id, exc)

    def _loop(self, reclaim: bool) -> None:
        from taskloom.queue.worker import Worker

        worker = Worker(
            self._tl.queue, RUNNER_AGENT, self._run, lease=CALL_LEASE_S, kinds=[CALL_KIND]
        )
        with self._lock:
            self._workers.add(worker)
        try:
            if reclaim:  # a server that died holding a call gives it up now
                self._tl.queue.reclaim()
            while not self._stopping:
                worker.run(until_empty=True)
                with self._lock:
                    if not self._again:
                        return
                    self._again = False
        except SystemExit:
            return  # the server is stopping: the call in hand was given back
        except Exception:
            log.exception("an MCP call runner thread stopped")
        finally:
            with self._lock:
                self._workers.discard(worker)
                self._threads -= 1
                self._lock.notify_all()

    def _run(self, task: Task) -> None:
        """Run one call and record its result on its MCP task (a tool's error is a result).
        A call that waits stops early once its queue task is no longer this run's (the MCP
        task cancelled), its MCP task expires (its queue task then ends dead: nobody can read
        its answer) or the server stops; a call the server stopped ends as
        :func:`on_exit` says, whatever it answered."""
        record = self._record(task)
        if record.status != mcp_tasks.WORKING:
            return  # its end was recorded before its queue task's: nothing left to run
        spec = self._tl.tools.registry.get(record.tool)
        if task.attempts > 1 and on_exit(spec) == "failed":
            self._fail(record)  # an earlier run was cut short: a second could repeat its effect
            raise NoRetry(SERVER_EXITED)
        run = _Run(task, record)
        with self._lock:
            if self._stopping:
                raise SystemExit  # claimed as the server stops: given back, never started
            self._running[task.id] = run
        try:
            ctx = ToolContext(
                thread_id=record.thread_id or None,
                agent_id=record.agent_id or None,
                cancelled=lambda: (
                    run.gave_up.is_set() or self._expired(record) or not self._still_ours(task)
                ),
            )
            result = self._tl.tools.dispatch(record.tool, task.payload.get("arguments"), ctx)
        finally:
            with self._lock:
                ours = self._running.pop(task.id, None) is run
                stopping = self._stopping
        if not ours:
            raise SystemExit  # stop() ended it already
        if self._expired(record):
            raise NoRetry(EXPIRED)  # nobody can read its answer: its queue task ends dead
        if stopping:
            if on_exit(spec) == "given back":
                raise SystemExit  # the worker gives the task back
            self._fail(record)
            raise NoRetry(SERVER_EXITED)
        text = json.dumps(wire(call_result(result)), ensure_ascii=False)
        now = self._tl.now().timestamp()
        mcp_tasks.settle(self._tl.store, record.id, now, "completed", result=text)

    def _end_stuck(self, run: _Run) -> None:
        """End a call that did not stop in time, from :meth:`stop`, under its thread's lease."""
        task, token = run.task, run.task.lease_token or ""
        spec = self._tl.tools.registry.get(run.record.tool)
        if on_exit(spec) == "given back":
            self._tl.queue.release(task.id, token)
            return
        self._fail(run.record)
        self._tl.queue.fail(task.id, token, SERVER_EXITED, retry=False)

    def _fail(self, record: McpTaskRecord) -> None:
        error = json.dumps({"code": types.INTERNAL_ERROR, "message": SERVER_EXITED})
        now = self._tl.now().timestamp()
        mcp_tasks.settle(self._tl.store, record.id, now, "failed", error=error)

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

    def _expired(self, record: McpTaskRecord) -> bool:
        """Whether ``record``'s time to live has run out: its task is gone to every read."""
        expires = record.expires_at
        return expires is not None and self._tl.now().timestamp() >= expires

    def _still_ours(self, task: Task) -> bool:
        """Whether ``task`` is still in progress under this run's lease."""
        try:
            now = self._tl.queue.get(task.id)
        except TaskloomError:
            return False
        return now.status is TaskStatus.IN_PROGRESS and now.lease_token == task.lease_token
