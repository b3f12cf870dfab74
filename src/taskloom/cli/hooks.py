"""``taskloom hook …``: what coding agents' hooks print into the agent's context."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Annotated, Any

import typer

from taskloom.cli.common import (
    Agent,
    DbOption,
    JsonOption,
    json_text,
    note,
    open_db,
    print_json,
    print_text,
    write_out,
)
from taskloom.cli.program import program
from taskloom.client import Taskloom
from taskloom.domain.errors import StoreBusy, TaskloomError
from taskloom.domain.surface import claim_command
from taskloom.domain.text import counted
from taskloom.queue.surfacing import CURSOR_WAIT_S
from taskloom.store.pg_url import url_has_password

app = typer.Typer(
    help="What coding agents' hooks run: the queue's ready tasks, shown to the agent.\n\n"
    "Example: taskloom hook session-start --agent claude-1",
    no_args_is_help=True,
)


def hook_claim_command(agent_id: str, db: str | None, program: str = "taskloom") -> str:
    """The command the block tells the agent to claim a task with: the hook's ``program`` and
    its database, unless the URL holds a password, which must not reach a model's context
    (the agent's environment, ``$TASKLOOM_URL``, has to say it then)."""
    return claim_command(agent_id, None if db and url_has_password(db) else db, program)


def open_for_hook(db: str | None) -> Taskloom:
    """The hook's database: a migration it lacks (after an upgrade) waits for another
    process's lock no longer than the cursor write does (:data:`CURSOR_WAIT_S`)."""
    return open_db(db, migrate_wait_s=CURSOR_WAIT_S)


@contextlib.contextmanager
def skipped_while_busy() -> Iterator[None]:
    """A hook whose database another process holds (its migration's lock) prints nothing
    and exits 0 (the next prompt tries again), with a one-line note on stderr."""
    try:
        yield
    except StoreBusy as exc:
        note(f"{exc.message}: the hook printed nothing this time")


@contextlib.contextmanager
def draining_stdin(wait_s: float = CURSOR_WAIT_S) -> Iterator[None]:
    """Read the event the agent writes on stdin, to its end, while the hook runs; wait for
    that end at most ``wait_s`` after it. A hook that exits with its stdin unread breaks the
    agent's write of an event larger than a pipe holds (a long pasted prompt): the agent
    gets ``EPIPE`` and reports the hook as failed. A terminal is not read."""
    try:
        fd = sys.stdin.fileno() if sys.stdin is not None else -1
    except (OSError, ValueError):  # a stream without a descriptor: nothing to drain
        fd = -1
    ended = threading.Event()

    def drain() -> None:
        with contextlib.suppress(OSError):
            while os.read(fd, 1 << 16):
                pass
        ended.set()

    if fd >= 0 and not os.isatty(fd):
        threading.Thread(target=drain, name="hook-stdin", daemon=True).start()
    else:
        ended.set()
    try:
        yield
    finally:
        ended.wait(wait_s)


MCP_CLAIM = "task_next"
"""How an agent with taskloom's MCP server claims a task: the tool, not a shell command."""


@app.command()
def prompt(
    agent: Agent,
    db: DbOption = None,
    mcp: Annotated[
        bool,
        typer.Option(
            "--mcp",
            help="The agent has taskloom's MCP server: tell it to claim with the task_next"
            " tool instead of `taskloom tasks next` (taskloom init sets this).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Prompt-submit hook: add the ready-task block to the agent's context when it changed.

    The output is JSON either way (the shape prompt-submit hooks read), and nothing at all
    when the block is unchanged; --json is accepted like everywhere else.

    Example: taskloom hook prompt --agent claude-1 --mcp
    """
    del as_json  # already JSON
    with draining_stdin():
        _prompt_block(agent, db, MCP_CLAIM if mcp else None)


def _prompt_block(agent: str, db: str | None, claim: str | None) -> None:
    claim = claim or hook_claim_command(agent.strip(), db, program())
    tl = open_for_hook(db)
    block = None
    with skipped_while_busy():
        block = tl.queue.surface(agent, claim=claim)
    if block:
        out: dict[str, Any] = {
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": block}
        }
        try:
            write_out(json_text(out) + "\n", must_arrive=True)  # exactly, for the agent
        except TaskloomError:
            with contextlib.suppress(StoreBusy):  # the output's error is the one to say
                tl.queue.unsee(agent)
            raise


@app.command("session-start")
def session_start(agent: Agent, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Session-start hook: one line with the number of tasks ready for this agent.

    Example: taskloom hook session-start --agent claude-1
    """
    with draining_stdin(), skipped_while_busy():
        ready = open_for_hook(db).queue.ready_count(agent)
        agent = agent.strip()
        if as_json:
            print_json({"agent": agent, "ready": ready})
        else:
            count = counted(ready, "task") if ready else "no tasks"
            print_text(f"taskloom: {count} ready in the shared queue for {agent}.")
