"""``tl.aio`` used as an asyncio program uses it: cancelled claims, a locked SQLite file,
``async with``."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import taskloom
from taskloom import Task, ToolContext
from taskloom._runtime import utcnow
from taskloom.client import AsyncTaskloom
from tests.conftest import subprocess_env


class GatedClock:
    """The real clock, which, while ``hold`` is set, waits at ``gate`` on whatever thread
    reads it: a call can be caught while it runs on its worker thread."""

    def __init__(self) -> None:
        self.hold = False
        self.entered = threading.Event()
        self.gate = threading.Event()

    def __call__(self) -> datetime:
        if self.hold:
            self.entered.set()
            self.gate.wait(30)
        return utcnow()


def _given_back(tl: taskloom.Taskloom, added: Task) -> Task:
    """The task once it changed (claimed, then released) and is ready again."""
    deadline = time.monotonic() + 30
    while (task := tl.queue.get(added.id)).changed_at == added.changed_at or (
        task.status.value != "ready"
    ):
        assert time.monotonic() < deadline, f"still {task.status.value}, held by {task.claimed_by}"
        time.sleep(0.02)
    return task


CLAIMS: dict[str, Callable[[AsyncTaskloom, Task | None], Awaitable[Any]]] = {
    "claim": lambda atl, _: atl.queue.claim("w", lease=600),
    "claim_batch": lambda atl, _: atl.queue.claim_batch("w", 5, lease=600),
    "done_and_claim": lambda atl, held: atl.queue.done_and_claim(
        held.id, held.lease_token, "w", lease=600
    ),
    "task_next": lambda atl, _: atl.tools.dispatch(
        "task_next", {"lease_s": 600}, ToolContext(thread_id="t", agent_id="w"), profile="all"
    ),
}


@pytest.mark.parametrize("how", list(CLAIMS))
def test_aio_claim_cancelled_while_it_runs_gives_its_task_back(db_url: str, how: str) -> None:
    """A claim cancelled on its worker thread (a timeout, a task group's error) committed
    there all the same, and no one held what it took: the task stayed in progress for the
    whole lease, out of every other worker's reach."""
    clock = GatedClock()
    with taskloom.connect(db_url, clock=clock) as tl:
        held = None
        if how == "done_and_claim":
            tl.queue.add("first")
            held = tl.queue.claim("w", lease=600)
        task, _ = tl.queue.add("wanted")

        async def main() -> None:
            clock.hold = True
            claim = asyncio.ensure_future(CLAIMS[how](tl.aio, held))
            await asyncio.to_thread(clock.entered.wait, 30)  # the claim is on its thread
            clock.hold = False
            claim.cancel()
            clock.gate.set()
            with pytest.raises(asyncio.CancelledError):
                await claim

        asyncio.run(main())
        back = _given_back(tl, task)
        assert (back.claimed_by, back.lease_token, back.attempts) == (None, None, 0)
        again = tl.queue.claim("other", lease=60)
        assert again is not None and again.id == task.id


def test_aio_claim_cancelled_after_its_thread_ended_gives_its_task_back(db_url: str) -> None:
    """The claim's thread has ended, but the coroutine is cancelled before it resumes: the
    result never reaches it, and the task is released all the same."""
    with taskloom.connect(db_url) as tl:
        task, _ = tl.queue.add("wanted")

        async def main() -> None:
            claim = asyncio.ensure_future(tl.aio.queue.claim("w", lease=600))
            await asyncio.sleep(0)  # the claim is on its thread
            deadline = time.monotonic() + 30
            while tl.queue.get(task.id).status.value != "in_progress":  # the loop is held
                assert time.monotonic() < deadline
                time.sleep(0.01)
            time.sleep(0.1)  # its thread has returned the claim
            claim.cancel()
            with pytest.raises(asyncio.CancelledError):
                await claim

        asyncio.run(main())
        assert _given_back(tl, task).claimed_by is None


def test_aio_claim_not_cancelled_keeps_its_task(db_url: str) -> None:
    with taskloom.connect(db_url) as tl:
        task, _ = tl.queue.add("wanted")

        async def main() -> Task | None:
            return await tl.aio.queue.claim("w", lease=600)

        claimed = asyncio.run(main())
        assert claimed is not None and claimed.id == task.id
        assert tl.queue.get(task.id).status.value == "in_progress"


def test_aio_calls_waiting_for_a_locked_sqlite_file_stop_no_other_call(tmp_path: Path) -> None:
    """``tl.aio`` ran its calls on the loop's default pool (two threads here, ``cpus + 4`` at
    most): writers waiting for a lock another process held took all of it, and the
    program's reads, and its own ``asyncio.to_thread`` calls, waited for the lock too."""
    path = tmp_path / "taskloom.db"
    with taskloom.connect(f"sqlite:///{path}") as tl:
        tl.board("r").add("seed")
        locker = sqlite3.connect(path, isolation_level=None)
        locker.execute("BEGIN IMMEDIATE")

        async def main() -> tuple[list[str], str, list[bool]]:
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=2))
            writers = [asyncio.ensure_future(tl.aio.board(f"w{i}").add("x")) for i in range(6)]
            await asyncio.sleep(0.3)  # every writer is waiting for the lock
            read = await tl.aio.board("r").get()
            own = await asyncio.to_thread(lambda: "the program's own call")
            pending = [not w.done() for w in writers]
            locker.execute("COMMIT")
            await asyncio.gather(*writers)
            return [c.title for c in read.cards], own, pending

        titles, own, pending = asyncio.run(main())
        locker.close()
        assert titles == ["seed"]
        assert own == "the program's own call"
        assert all(pending)  # both answered while the writers still waited
        assert [len(tl.board(f"w{i}").get().cards) for i in range(6)] == [1] * 6


def test_async_with_closes_the_client(db_url: str) -> None:
    async def main() -> list[str]:
        async with await taskloom.connect_async(db_url) as atl:
            await atl.board("t").add("inside")
            closed = atl.close
            calls: list[str] = []

            async def spy() -> None:
                calls.append("close")
                await closed()

            atl.close = spy  # type: ignore[method-assign]
        return calls

    assert asyncio.run(main()) == ["close"]
    with taskloom.connect(db_url) as tl:
        assert [c.title for c in tl.board("t").get().cards] == ["inside"]


LOOP_IMPORTS = textwrap.dedent(
    """
    import asyncio, importlib.abc, sys, threading
    from taskloom import ToolContext, connect_async

    on_loop = []

    class Seen(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if threading.current_thread() is threading.main_thread():
                on_loop.append(name)

    async def main():
        sys.meta_path.insert(0, Seen())
        atl = await connect_async(sys.argv[1])
        await atl.board("t").add("x")
        await atl.goal("t").set("y")
        await atl.guard("t").wrap("api", "hello")
        await atl.tools.dispatch("todo", {"op": "list"}, ToolContext(thread_id="t"))
        await atl.queue.add("q")
        await atl.close()

    asyncio.run(main())
    print("\\n".join(on_loop))
    """
)


def test_connect_async_imports_the_handles_code_off_the_event_loop(db_url: str) -> None:
    """``atl.tools`` (pydantic and the tool registry) was imported on the event loop's thread
    by ``connect_async``, and the boards', goals' and guard's code by the first
    ``atl.board(t)``, ``atl.goal(t)``, ``atl.guard(t)``: the loop stood still meanwhile (a
    few hundred milliseconds)."""
    done = subprocess.run(
        [sys.executable, "-c", LOOP_IMPORTS, db_url],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    on_loop = done.stdout.split()
    heavy = ("taskloom.", "pydantic")
    assert [m for m in on_loop if m.startswith(heavy) and m != "taskloom._pools"] == []


def _waiting_in(function: str, module: str) -> bool:
    """Whether a thread of this process is running ``function`` of ``module`` now."""
    for frame in sys._current_frames().values():
        while frame is not None:
            code = frame.f_code
            if code.co_name == function and code.co_filename.endswith(module):
                return True
            frame = frame.f_back
    return False


@pytest.mark.parametrize("tool", ["goal_wait", "task_wait"])
def test_a_cancelled_aio_dispatch_of_a_waiting_tool_frees_its_thread(
    db_url: str, tool: str
) -> None:
    """Cancelled, ``await tl.aio.tools.dispatch("goal_wait", …)`` left its worker thread
    looking at the goal until ``wait_s`` ran out (five minutes at most), and a few such
    waits took threads every other call needed."""
    with taskloom.connect(db_url) as tl:
        tl.goal("t").set("Ship it")
        task, _ = tl.queue.add("never done", source="t")  # delegated from thread t
        args = {"wait_s": 300} if tool == "goal_wait" else {"task_id": task.id, "wait_s": 300}
        where = ("_wait", "goals.py") if tool == "goal_wait" else ("_waited", "delegate.py")

        async def main() -> None:
            ctx = ToolContext(thread_id="t", agent_id="boss")
            call = asyncio.ensure_future(
                tl.aio.tools.dispatch(tool, args, ctx, profile="all", allow_host=True)
            )
            deadline = time.monotonic() + 30
            while not _waiting_in(*where):
                assert time.monotonic() < deadline and not call.done(), call
                await asyncio.sleep(0.02)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call

        asyncio.run(main())
        deadline = time.monotonic() + 30
        while _waiting_in(*where):
            assert time.monotonic() < deadline, "the wait still holds its thread"
            time.sleep(0.05)
