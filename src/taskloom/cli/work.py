"""``taskloom tasks work``: run a command on each task an agent claims, under a kept lease.

The command gets the task as JSON on standard input (and its id, kind and attempt in
``TASKLOOM_TASK_*`` variables); what it prints is the task's result, and a non-zero exit
fails the task with the end of what it wrote to standard error. This is how a queue feeds a
headless coding agent or any script without a line of Python.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Annotated

import typer

from taskloom.cli import task_command
from taskloom.cli.common import (
    DbOption,
    JsonOption,
    absolute_url,
    agent_flag,
    check_range,
    err,
    open_announced,
    print_json,
    print_text,
)
from taskloom.domain.errors import CommandNotStarted, Interrupted, InvalidInput, TaskFailed
from taskloom.domain.queue import (
    MAX_ERROR_BYTES,
    MAX_TEXT_BYTES,
    MIN_LEASE_S,
    Task,
    check_kinds,
    check_seconds,
    waits_until,
)
from taskloom.domain.text import counted, terminal_safe

if TYPE_CHECKING:
    from taskloom.queue.worker import Outcome

STDERR_TAIL_BYTES = MAX_ERROR_BYTES - 100
"""How much of a failed command's standard error its task keeps: the end, where the reason
usually is, with room for the exit status before it."""
MAX_TASKS = 2**31 - 1


class Withdrawals:
    """The claims whose commands run, each with an event that stops its command when set:
    :meth:`withdraw` is the worker's ``on_lost``, and finds only the claim it names."""

    def __init__(self) -> None:
        self._running: dict[tuple[str, str | None], threading.Event] = {}

    @contextlib.contextmanager
    def running(self, task: Task) -> Iterator[threading.Event]:
        key = (task.id, task.lease_token)
        self._running[key] = event = threading.Event()
        try:
            yield event
        finally:
            del self._running[key]

    def withdraw(self, task: Task) -> None:
        event = self._running.get((task.id, task.lease_token))
        if event is not None:
            event.set()


class Strays:
    """How many processes each task's command left running that were ended once it was over,
    kept until its outcome is told (a worker runs one task at a time)."""

    def __init__(self) -> None:
        self._ended: dict[str, int] = {}

    def counter(self, task: Task) -> Callable[[int], None]:
        return lambda n: self._ended.__setitem__(task.id, n)

    def take(self, task: Task) -> int:
        return self._ended.pop(task.id, 0)


def run_command(
    argv: list[str],
    timeout: float | None,
    withdrawals: Withdrawals | None = None,
    strays: Strays | None = None,
    db_url: str | None = None,
) -> Callable[[Task], str | None]:
    """A handler running ``argv`` on a task: its stdout (decoded, trailing newline dropped)
    is the result. A claim ``withdrawals`` withdraws while it runs stops the command;
    ``strays`` counts what its command left running. ``db_url``, the worker's database, is
    the command's ``$TASKLOOM_URL``: a ``taskloom`` it runs acts on the queue its task came
    from, whatever folder it runs in."""

    def handle(task: Task) -> str | None:
        if withdrawals is None:
            return run_on(task, None)
        with withdrawals.running(task) as withdrawn:
            return run_on(task, withdrawn)

    def run_on(task: Task, withdrawn: threading.Event | None) -> str | None:
        env = dict(os.environ)
        env.update(
            TASKLOOM_TASK_ID=task.id,
            TASKLOOM_TASK_KIND=task.kind,
            TASKLOOM_TASK_ATTEMPT=str(task.attempts),
        )
        if db_url is not None:
            env["TASKLOOM_URL"] = db_url
        data = json.dumps(task.to_dict(), ensure_ascii=False).encode()
        # One byte over the limit, and a newline: the worker then knows the result was cut.
        # Stderr likewise: one byte more than its tail says that the tail was cut.
        done = task_command.run(
            argv,
            data,
            env,
            timeout,
            MAX_TEXT_BYTES + 2,
            STDERR_TAIL_BYTES + 1,
            withdrawn,
            None if strays is None else strays.counter(task),
        )
        if done.returncode != 0:
            tail = _text(_whole_lines(done.stderr)).strip()
            raise TaskFailed(f"exit {_status(done.returncode)}" + (f": {tail}" if tail else ""))
        result = _text(done.stdout).removesuffix("\n")
        return result or None

    return handle


def _whole_lines(tail: bytes) -> bytes:
    """The end of standard error, cut to :data:`STDERR_TAIL_BYTES` from its first whole line
    (else its first whole word) when it is longer: a credential that the cut split is dropped,
    not kept as its end, which no redaction recognizes."""
    if len(tail) <= STDERR_TAIL_BYTES:
        return tail
    tail = tail[-STDERR_TAIL_BYTES:]
    for mark in (b"\n", b" "):
        if (at := tail.find(mark)) >= 0:
            return b"\xe2\x80\xa6" + tail[at:]  # an ellipsis where the cut is
    return b"\xe2\x80\xa6"


def _text(data: bytes) -> str:
    """A command's output as storable text: undecodable bytes and NULs become U+FFFD."""
    return data.decode("utf-8", "replace").replace("\x00", "\ufffd")


def _status(code: int) -> str:
    if code < 0:
        try:
            return f"{code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return str(code)


def _line(outcome: Outcome, strays: int) -> str:
    task, what = outcome.task, outcome.kind
    said = {
        "completed": f"completed in {outcome.seconds:.1f} s",
        "failed": "failed, back in the queue" + _retried_from(task),
        "dead": "failed, dead (no attempts left)",
        "lost": "finished after its lease was lost (canceled, or the lease ran out): not recorded",
        "released": "given back unfinished",
    }[what]
    detail = (
        f": {_one_line(outcome.detail)}" if what in ("failed", "dead") and outcome.detail else ""
    )
    ended = f"; ended {counted(strays, 'process')} it left running" if strays else ""
    return f"{task.id}  {task.title}  {said}{detail}{outcome.note}{ended}"


def _one_line(detail: str) -> str:
    """A stored error on one line, for the task's outcome line: its first line (the exit
    status) and, when there are more, its last (the reason, usually) after an ellipsis.
    The whole error is the task's ``last_error`` (``tasks show``, ``--json``)."""
    lines = [text.strip() for text in detail.splitlines() if text.strip()]
    if len(lines) <= 1:
        return "".join(lines)
    first, last = lines[0], lines[-1]
    return f"{first} {last}" if first.endswith("…") else f"{first} … {last}"


def _retried_from(task: Task) -> str:
    """When a failed task may be claimed again, if not at once (``--retry-delay``)."""
    until = waits_until(task, time.time())
    return f" (not before {until})" if until else ""


def _shown(outcome: Outcome, strays: int) -> dict[str, object]:
    """A task's ``--json`` line: ``id`` as in every other task object the CLI prints
    (``task_id``, its first name, kept for the scripts that read it)."""
    return {
        "id": outcome.task.id,
        "task_id": outcome.task.id,
        "title": outcome.task.title,
        "outcome": outcome.kind,
        "seconds": round(outcome.seconds, 3),
        "detail": outcome.detail,
        "note": outcome.note.strip() or None,
        "strays_ended": strays,
    }


SUMMARY = (
    ("completed", "completed"),
    ("failed", "failed (to retry)"),
    ("dead", "dead"),
    ("lost", "lost"),
    ("released", "given back"),
)


def _summary(outcomes: list[Outcome]) -> str:
    """``2 completed, 1 failed (to retry)``: always those two, the rest when they happened."""
    counts = Counter[str](o.kind for o in outcomes)
    return ", ".join(
        f"{counts[kind]} {name}"
        for kind, name in SUMMARY
        if counts[kind] or kind in ("completed", "failed")
    )


def _stopped_status(interrupt: KeyboardInterrupt) -> int:
    """The exit status of a worker stopped by a signal, as a shell reports a death by it:
    128 and the signal's number (143 for ``SIGTERM``, 129 for ``SIGHUP``); 130 for Ctrl-C."""
    name = str(interrupt.args[0]) if interrupt.args else "SIGINT"
    return 128 + signal.Signals.__members__.get(name, signal.SIGINT)


def _check_runnable(program: str) -> None:
    """Refuse a command that cannot start, before a task is claimed for it, saying why: a
    path that is a directory or a script without its executable bit is there, not missing."""
    if shutil.which(program) is not None:
        return
    if os.sep not in program or not os.path.exists(program):
        raise InvalidInput(f"command not found: {program} (nothing was claimed)")
    why = "is a directory" if os.path.isdir(program) else "is not executable (chmod +x it)"
    raise InvalidInput(f"{program} {why} (nothing was claimed)")


def work(
    command: Annotated[
        list[str], typer.Argument(help="The command to run on each task, after --.")
    ],
    agent: Annotated[
        str, typer.Option("--agent", help="Agent id to claim tasks for.", callback=agent_flag)
    ],
    lease: Annotated[
        float,
        typer.Option(
            help="Seconds a claim holds a task; renewed while the command runs, so it is how"
            " soon a hung or killed worker gives the task up."
        ),
    ] = 300.0,
    kind: Annotated[list[str] | None, typer.Option(help="Only these kinds (repeat).")] = None,
    timeout: Annotated[
        float | None, typer.Option(help="Kill the command after this many seconds (fails).")
    ] = None,
    max_tasks: Annotated[
        int | None, typer.Option("--max-tasks", help="Stop after handling this many tasks.")
    ] = None,
    until_empty: Annotated[
        bool,
        typer.Option("--until-empty", help="Stop when no task is ready instead of waiting."),
    ] = False,
    poll: Annotated[float, typer.Option(help="Seconds between looks when idle.")] = 1.0,
    retry_delay: Annotated[
        float,
        typer.Option(
            "--retry-delay",
            help="Seconds before a failed task may be claimed again (default: at once).",
            show_default=False,
        ),
    ] = 0.0,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run COMMAND on each task claimed for --agent, one at a time, until interrupted.

    The task comes as JSON on the command's standard input, with TASKLOOM_TASK_ID,
    TASKLOOM_TASK_KIND and TASKLOOM_TASK_ATTEMPT set, and TASKLOOM_URL naming the worker's
    database (a taskloom command it runs acts on the same queue). Exit 0: the task is completed with
    what the command printed as its result. Any other exit: the task fails with the end of
    the command's standard error (retried until its attempts run out, then dead). Ctrl-C,
    SIGTERM or SIGHUP (its terminal closed) stops the command, every process it started with
    it, and gives its task back; so does a command that cannot start (a script whose
    interpreter is missing), with exit 1;
    --timeout stops them alike and fails the task; a task whose lease is lost while its
    command runs (canceled, or taken by another worker) has its command stopped alike, and
    nothing recorded. A process the command leaves behind still holding its output is
    stopped when the command exits; on Linux, so is every process it leaves running,
    detached (setsid) or not, and the task's line says how many. Standard output gets a line
    per task as it ends (--json: a JSON object per line); standard error a line as each task
    starts, and a summary at the end. Exit status
    4 if any task failed or was lost, 130 on Ctrl-C, 143 on SIGTERM, 129 on SIGHUP, else 0.

    Example: taskloom tasks work --agent reviewer --until-empty -- ./review.sh
    """
    if check_seconds(lease, "--lease", positive=True) < MIN_LEASE_S:
        raise InvalidInput(f"--lease must be at least {MIN_LEASE_S:g} second")
    check_seconds(poll, "--poll", positive=True)
    if timeout is not None:
        check_seconds(timeout, "--timeout", positive=True)
    if max_tasks is not None:
        check_range(max_tasks, "--max-tasks", 1, MAX_TASKS)
    retry_delay = check_seconds(retry_delay, "--retry-delay")
    kinds = None if kind is None else check_kinds(kind)
    _check_runnable(command[0])

    outcomes: list[Outcome] = []

    def show(outcome: Outcome) -> None:
        outcomes.append(outcome)
        ended = strays.take(outcome.task)
        if as_json:
            print_json(_shown(outcome, ended), indent=None)
        else:
            print_text(_line(outcome, ended))

    def started(task: Task) -> None:
        line = f"{task.id}  {task.title}  started (attempt {task.attempts} of {task.max_attempts})"
        err.print(terminal_safe(line) if err.is_terminal else line, markup=False)

    from taskloom.queue.worker import Worker

    withdrawals, strays = Withdrawals(), Strays()
    tl = open_announced(db)
    worker = Worker(
        tl.queue,
        agent,
        run_command(command, timeout, withdrawals, strays, absolute_url(tl)),
        lease=lease,
        kinds=kinds,
        poll=poll,
        retry_delay=retry_delay,
        on_start=started,
        on_outcome=show,
        on_lost=withdrawals.withdraw,
    )
    try:
        with task_command.stopping_on_signals():
            worker.run(max_tasks=max_tasks, until_empty=until_empty)
    except KeyboardInterrupt as exc:
        raise Interrupted(_summary(outcomes), status=_stopped_status(exc)) from None
    except CommandNotStarted as exc:
        err.print(f"Stopped: {_summary(outcomes)}.", markup=False)
        raise InvalidInput(f"{exc} (its task was given back; nothing more was claimed)") from None
    err.print(_summary(outcomes), markup=False)
    if any(o.kind in ("failed", "dead", "lost") for o in outcomes):
        raise typer.Exit(4)
