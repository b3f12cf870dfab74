"""``taskloom mcp``: serve the tools to an MCP client over stdio, bound to one thread.

``--task-ttl`` and ``--task-poll`` (here and on ``taskloom serve``) set how long an MCP task
is kept and how often its client is asked to poll it (:class:`~taskloom.mcp.TaskSettings`).

SIGTERM and SIGINT are noted from the command's first line on (:func:`noting_stops`), before
the MCP SDK is imported and the database opened: a stop that comes while the server starts
lets the start finish (a database being made is made whole) and then ends the command,
exit 0, without serving.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from taskloom.cli.common import DbOption, open_announced
from taskloom.cli.tool import ToolsOption
from taskloom.domain.errors import InvalidInput
from taskloom.domain.queue import MAX_SECONDS, check_agent

if TYPE_CHECKING:
    from taskloom.mcp import TaskSettings

MIN_TASK_TTL_S = 1.0
MIN_TASK_POLL_S, MAX_TASK_POLL_S = 0.1, 3600.0
"""The poll interval a task asks for: from 100 ms (clients that poll faster load every
server of the database) to an hour."""

TaskTtlOption = Annotated[
    float,
    typer.Option(
        "--task-ttl",
        help=f"Seconds an MCP task and its result are kept (at least {MIN_TASK_TTL_S:g}).",
    ),
]
TaskPollOption = Annotated[
    float,
    typer.Option(
        "--task-poll",
        help="Seconds an MCP client is asked to wait between polls of a task (pollIntervalMs),"
        f" from {MIN_TASK_POLL_S:g} to {MAX_TASK_POLL_S:g}.",
    ),
]
DEFAULT_TASK_TTL_S = 86_400.0
DEFAULT_TASK_POLL_S = 1.0


def task_settings(ttl_s: float, poll_s: float) -> TaskSettings:
    """The MCP tasks' settings the flags give; :class:`InvalidInput` naming the flag for a
    value out of range (``nan`` and ``inf`` included)."""
    from taskloom.mcp import TaskSettings

    if not (math.isfinite(ttl_s) and MIN_TASK_TTL_S <= ttl_s <= MAX_SECONDS):
        longest = f"{MAX_SECONDS:.0f} seconds (100 years)"
        raise InvalidInput(f"--task-ttl must be from {MIN_TASK_TTL_S:g} to {longest}")
    if not (math.isfinite(poll_s) and MIN_TASK_POLL_S <= poll_s <= MAX_TASK_POLL_S):
        raise InvalidInput(
            f"--task-poll must be from {MIN_TASK_POLL_S:g} to {MAX_TASK_POLL_S:g} seconds"
        )
    return TaskSettings(ttl_s=ttl_s, poll_interval_s=poll_s)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def noting_stops() -> Iterator[threading.Event]:
    """Within it, SIGTERM and SIGINT set the event it gives instead of ending the process
    (SIGTERM killed it outright, SIGINT raised ``KeyboardInterrupt`` wherever it was). A
    signal the process was started ignoring stays ignored; off the main thread, which
    cannot take signals, nothing changes."""
    stopped = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stopped
        return

    def note(signum: int, frame: FrameType | None) -> None:
        stopped.set()

    previous = {
        signum: signal.signal(signum, note)
        for signum in STOP_SIGNALS
        if signal.getsignal(signum) is not signal.SIG_IGN
    }
    try:
        yield stopped
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def mcp(
    thread: Annotated[str, typer.Option("--thread", help="Thread every call acts on.")],
    agent: Annotated[str | None, typer.Option("--agent", help="Agent id of the caller.")] = None,
    tools: ToolsOption = None,
    task_ttl: TaskTtlOption = DEFAULT_TASK_TTL_S,
    task_poll: TaskPollOption = DEFAULT_TASK_POLL_S,
    db: DbOption = None,
) -> None:
    """Run an MCP server on stdin/stdout serving a profile's tools for one thread.

    It ends when stdin ends, or at SIGTERM or SIGINT, exit 0.

    Example: taskloom mcp --thread my-thread --agent claude-1 --tools planner
    """
    with noting_stops() as stopped:
        _serve(thread, agent, tools, task_ttl, task_poll, db, stopped)


def _serve(
    thread: str,
    agent: str | None,
    tools: str | None,
    task_ttl: float,
    task_poll: float,
    db: str | None,
    stopped: threading.Event,
) -> None:
    """:func:`mcp`'s work, a stop noted in ``stopped`` until the server takes the signals."""
    import asyncio

    from taskloom.domain.threads import check_thread_id
    from taskloom.mcp import McpConfig, serve_stdio
    from taskloom.tools.profiles import select
    from taskloom.tools.registry import BUILTIN_TOOLS, ToolContext

    # An empty --agent ("$AGENT" unset) stops the server here, not each queue tool call later.
    agent_id = None if agent is None else check_agent(agent, "--agent, when given,")
    ctx = ToolContext(thread_id=check_thread_id(thread), agent_id=agent_id)
    # An unknown profile or tool, or a host-only one (never served to a model), stops us
    # here, naming the tools the server can serve.
    select([t for t in BUILTIN_TOOLS if not t.host_only], tools)
    settings = task_settings(task_ttl, task_poll)
    tl = open_announced(db)
    if stopped.is_set():  # stopped while starting: nothing served, nothing to end
        return
    asyncio.run(serve_stdio(tl, ctx, McpConfig(tools, settings), stopped=stopped))
