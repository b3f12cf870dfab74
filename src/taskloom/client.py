"""The facade: ``taskloom.connect()`` returns a :class:`Taskloom`, the one entry point.

It builds the handles (boards, goals, the queue, guards) from one :class:`~taskloom._runtime.
Runtime`: the store, the clock and the id source, injected here (``clock=``, ``new_id=``) so
tests can be exact. Tools, the server, MCP and the CLI all go through it, never around it to
SQL.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from taskloom import _runtime
from taskloom._runtime import Runtime, utcnow
from taskloom.domain.errors import TaskloomError
from taskloom.domain.queue import Task
from taskloom.queue.handle import WAIT_ENDS, Queue
from taskloom.queue.waiting import Waiting
from taskloom.store import Store, open_store
from taskloom.store.retention import AutoRetention

if TYPE_CHECKING:
    from concurrent.futures import Future

    from taskloom.boards import BoardCache, BoardHandle
    from taskloom.goals.handle import GoalHandle
    from taskloom.guard.core import Guard, GuardConfig
    from taskloom.tools.registry import Toolbox
    from taskloom.tools.spec import ToolContext

P = ParamSpec("P")
R = TypeVar("R")


class Taskloom:
    """Durable work state for agents, over one store (SQLite file or PostgreSQL)."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], datetime] = utcnow,
        new_id: Callable[[], str] = _runtime.new_id,
    ) -> None:
        self.runtime = Runtime(store, clock, new_id)
        auto = getattr(store, "retention", None)
        if isinstance(auto, AutoRetention):  # its ages judged by the clock that stamps them
            auto.clock = clock
        self.guard_config: GuardConfig | None = None

    @property
    def store(self) -> Store:
        return self.runtime.store

    @property
    def now(self) -> Callable[[], datetime]:
        """The clock every handle reads."""
        return self.runtime.now

    @property
    def new_id(self) -> Callable[[], str]:
        """The source of new ids every handle uses."""
        return self.runtime.new_id

    @property
    def url(self) -> str:
        return self.store.url

    @functools.cached_property
    def board_cache(self) -> BoardCache:
        """The parsed boards every board handle of this instance shares."""
        from taskloom.boards import BoardCache

        return BoardCache()

    def board(self, thread_id: str) -> BoardHandle:
        """The todo board of one thread (created on its first write). The boards' code, the
        goals' and the guard's are imported on first use: a hook or a worker does without."""
        from taskloom.boards import BoardHandle

        return BoardHandle(self.runtime, thread_id, cache=self.board_cache)

    def goal(self, thread_id: str) -> GoalHandle:
        """The goal of one thread (budgets, status, usage)."""
        from taskloom.goals.handle import GoalHandle

        return GoalHandle(self.runtime, thread_id)

    def guard(self, thread_id: str, config: GuardConfig | None = None) -> Guard:
        """The context guard of one thread; ``config`` overrides ``tl.guard_config``."""
        from taskloom._runtime import Runtime
        from taskloom.guard.core import Guard

        return Guard(
            Runtime(self.store, self.now, self.new_id), thread_id, config or self.guard_config
        )

    def threads(self) -> list[dict[str, Any]]:
        """Every thread with a card on its board or a goal, most recently changed first, with
        its card counts by status and its goal's status. A thread whose goal was cleared and
        whose board has no card (or none) has nothing to show, and is not listed."""
        from taskloom.domain.kinds import BOARD_KIND, GOAL_KIND

        with self.store.read() as tx:
            boards = {d.key: d for d in tx.list_docs(BOARD_KIND)}
            goals = {d.key: d for d in tx.list_docs(GOAL_KIND)}
        rows = []
        for key in boards.keys() | goals.keys():
            board, goal = boards.get(key), goals.get(key)
            summary = board.state.get("summary", {}) if board else {}
            counts = {s: n for s, n in summary.items() if n and s != "total"}
            goal_state = (goal.state.get("goal") or {}) if goal else {}
            if not counts and not goal_state:
                continue
            rows.append(
                {
                    "thread_id": key,
                    "board_version": board.version if board else 0,
                    "updated_at": max(d.updated_at for d in (board, goal) if d),
                    "cards": counts,
                    "goal_status": goal_state.get("status"),
                }
            )
        return sorted(rows, key=lambda r: (r["updated_at"], r["thread_id"]), reverse=True)

    @functools.cached_property
    def queue(self) -> Queue:
        """The work queue shared by every agent on this database."""
        return Queue(Runtime(self.store, self.now, self.new_id))

    @functools.cached_property
    def tools(self) -> Toolbox:
        """Model-facing tools: ``tl.tools.schemas("openai")``, ``tl.tools.dispatch(...)``.
        Imported on first use, as pydantic is: a hook or a worker that never hands tools to
        a model starts without them."""
        from taskloom.tools.registry import Toolbox

        return Toolbox(self)

    @functools.cached_property
    def aio(self) -> AsyncTaskloom:
        """The same API for asyncio code: every call runs on a worker thread."""
        return AsyncTaskloom(self)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Taskloom:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


async def _in_thread(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn`` run on a worker thread of the async API's own pool. asyncio is imported here,
    where it is already loaded (this runs on an event loop), not by ``import taskloom``,
    which sync code pays for."""
    from taskloom._pools import ASYNC_API

    return await ASYNC_API.run(fn, *args, **kwargs)


Held = Callable[[Any], list[tuple[str, str | None]]]
"""What a claim's result holds: each task's id and lease token."""


async def _claiming(queue: Queue, held: Held, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``fn`` (a claim) run on a worker thread. Cancelled while the thread runs (a timeout, a
    task group's error, a shutdown), the claim still commits there, and no one would hold
    what it took: the tasks ``held`` finds in its result are released as soon as it ends (on
    that thread, whether or not the event loop is still running), and each goes back to
    ready at once, its attempt not counted."""
    import asyncio

    from taskloom._pools import ASYNC_API

    call = ASYNC_API.submit(fn, *args, **kwargs)
    try:
        return await asyncio.wrap_future(call)
    except asyncio.CancelledError:
        if call.done():  # a release on this thread would block the event loop
            ASYNC_API.submit(_give_back, queue, held, call)
        else:
            call.add_done_callback(lambda done: _give_back(queue, held, done))
        raise


def _give_back(queue: Queue, held: Held, done: Future[Any]) -> None:
    if done.cancelled() or done.exception() is not None:
        return
    for task_id, token in held(done.result()):
        if token is not None:
            with contextlib.suppress(TaskloomError):
                queue.release(task_id, token)


class AsyncProxy:
    """Wraps a sync object so each method call becomes an awaitable run in a worker thread.

    SQLite and psycopg calls block; running them off the event loop keeps an agent's loop
    responsive, and the store already gives each thread its own connection.
    """

    def __init__(self, target: object) -> None:
        object.__setattr__(self, "_target", target)

    def __setattr__(self, name: str, value: Any) -> None:
        """Settings go to the wrapped object: ``tl.aio.queue.max_active = 2`` sets the
        queue's cap, not an attribute of the proxy."""
        setattr(self._target, name, value)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await _in_thread(attr, *args, **kwargs)

        return call


class AsyncQueue(AsyncProxy):
    """``tl.aio.queue``: every method of :class:`Queue` run on a worker thread, but
    :meth:`wait`, which awaits between looks and so holds no thread while the task runs. A
    claim cancelled while it runs releases what it took (see :func:`_claiming`)."""

    async def claim(self, agent_id: str, **kwargs: Any) -> Task | None:
        return await _claiming(self._target, _one, self._target.claim, agent_id, **kwargs)

    async def claim_batch(self, agent_id: str, n: int, **kwargs: Any) -> list[Task]:
        return await _claiming(self._target, _all, self._target.claim_batch, agent_id, n, **kwargs)

    async def done_and_claim(
        self, task_id: str, lease_token: str, agent_id: str, **kwargs: Any
    ) -> tuple[Task, Task | None]:
        return await _claiming(
            self._target,
            lambda pair: _one(pair[1]),
            self._target.done_and_claim,
            task_id,
            lease_token,
            agent_id,
            **kwargs,
        )

    async def wait(self, task_id: str, timeout: float | None = None) -> Task:
        """:meth:`Queue.wait` for asyncio: cancelling it (``asyncio.wait_for``, a task
        group) stops it at once."""
        import asyncio

        queue: Queue = self._target
        waiting = Waiting(task_id, timeout)
        while (task := await _in_thread(queue.get, task_id)).status not in WAIT_ENDS:
            await asyncio.sleep(waiting.pause(task))
        return task


class AsyncTools(AsyncProxy):
    """``tl.aio.tools``: every method of :class:`Toolbox` run on a worker thread. A
    :meth:`dispatch` cancelled while it runs tells the tool the caller gave up
    (``ToolContext.cancelled``): a tool that waits (``goal_wait``, ``task_wait``) stops at its
    next look and frees its thread, instead of waiting out its ``wait_s``; a ``task_next``
    releases the task it took (see :func:`_claiming`)."""

    def __init__(self, target: Toolbox, queue: Queue) -> None:
        super().__init__(target)
        object.__setattr__(self, "_queue", queue)

    async def dispatch(self, name: str, args: Any, ctx: ToolContext, **kwargs: Any) -> Any:
        import asyncio
        import dataclasses
        import threading

        from taskloom.tools.spec import ToolContext

        if not isinstance(ctx, ToolContext):  # the toolbox says what is wrong with it
            return await _in_thread(self._target.dispatch, name, args, ctx, **kwargs)
        gave_up, asked = threading.Event(), ctx.cancelled

        def cancelled() -> bool:
            return gave_up.is_set() or (asked is not None and bool(asked()))

        ctx = dataclasses.replace(ctx, cancelled=cancelled)
        call = self._target.dispatch
        try:
            return await _claiming(self._queue, _claimed_by_tool, call, name, args, ctx, **kwargs)
        except asyncio.CancelledError:
            gave_up.set()
            raise


def _one(task: Task | None) -> list[tuple[str, str | None]]:
    return [] if task is None else [(task.id, task.lease_token)]


def _all(tasks: list[Task]) -> list[tuple[str, str | None]]:
    return [(task.id, task.lease_token) for task in tasks]


def _claimed_by_tool(result: Any) -> list[tuple[str, str | None]]:
    """The task a ``task_next`` call took, from its result's data."""
    data = getattr(result, "data", None)
    if isinstance(data, dict) and isinstance(data.get("lease_token"), str):
        return [(str(data["id"]), data["lease_token"])]
    return []


class AsyncTaskloom:
    """``tl.aio``: ``await tl.aio.board(t).add("...")``, ``await tl.aio.tools.dispatch(...)``."""

    def __init__(self, tl: Taskloom) -> None:
        self.sync = tl
        self.runtime = tl.runtime
        self.queue = AsyncQueue(tl.queue)

    @functools.cached_property
    def tools(self) -> AsyncTools:
        return AsyncTools(self.sync.tools, self.sync.queue)

    def board(self, thread_id: str) -> Any:
        return AsyncProxy(self.sync.board(thread_id))

    def goal(self, thread_id: str) -> Any:
        return AsyncProxy(self.sync.goal(thread_id))

    def guard(self, thread_id: str, config: GuardConfig | None = None) -> Any:
        return AsyncProxy(self.sync.guard(thread_id, config))

    async def threads(self) -> list[dict[str, Any]]:
        return await _in_thread(self.sync.threads)

    async def close(self) -> None:
        await _in_thread(self.sync.close)

    async def __aenter__(self) -> AsyncTaskloom:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def connect(
    url: str | None = None,
    *,
    clock: Callable[[], datetime] = utcnow,
    new_id: Callable[[], str] = _runtime.new_id,
) -> Taskloom:
    """Open taskloom on ``url`` (default ``TASKLOOM_URL`` or ``./.taskloom/taskloom.db``)."""
    return Taskloom(open_store(url), clock=clock, new_id=new_id)


async def connect_async(url: str | None = None, **kwargs: Any) -> AsyncTaskloom:
    """Like :func:`connect`, for asyncio code."""
    return await _in_thread(_connected_for_asyncio, url, **kwargs)


def _connected_for_asyncio(url: str | None, **kwargs: Any) -> AsyncTaskloom:
    """:func:`connect`'s client as :class:`AsyncTaskloom`, with the code its handles import
    on first use (boards, goals, the guard, the tools) imported here, on a worker thread:
    imported by a first ``atl.board(t)`` or ``atl.tools``, it held the event loop for a few
    hundred milliseconds."""
    import taskloom.boards
    import taskloom.goals.handle
    import taskloom.guard.core  # noqa: F401

    atl = connect(url, **kwargs).aio
    atl.tools  # noqa: B018 (made now, importing the tools)
    return atl
