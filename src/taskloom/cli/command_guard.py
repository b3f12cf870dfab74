"""The guard between ``taskloom tasks work`` and a task's command: the command dies with its
worker, children and all, and on Linux leaves nothing running behind it.

Run as a script (``python -I -S command_guard.py LIFELINE REPORT -- COMMAND…``; it imports
nothing of taskloom but :mod:`subreaper` beside it, so it starts in milliseconds) as the
leader of a new process group. It starts the command in that group and waits for it, exiting
as the command did (its status, or the signal that killed it). ``LIFELINE`` is the read end
of a pipe whose write end only the worker holds: when the worker dies, however it dies
(``kill -9`` included), the pipe reads as ended, and the guard stops the command, ``SIGTERM``
to its whole process group and then ``SIGKILL`` after a grace, so nothing the command
started goes on working on a task that is leased again. This works on every POSIX system,
unlike a parent-death signal (``PR_SET_PDEATHSIG``), which exists on one system only and
reaches only a direct child.

On Linux the guard is also a child subreaper (:func:`subreaper.become`): every process
below it whose parent exits comes to it, however it detached. Its children are then exactly
the command and the strays the command left, so it ends those strays once the command is
over (``SIGTERM``, then ``SIGKILL`` after the grace), reaps them, and writes how many it
ended, a decimal line, to ``REPORT`` as it exits. Stopping, it ends the command and its
strays one by one rather than with the group, so it outlives them all. Elsewhere a process
that left the group (``setsid``) is beyond its reach, and ``REPORT`` stays empty.

The worker's own stops (a timeout, Ctrl-C, a lost lease) send ``SIGTERM`` to the whole
group, the guard included: the guard takes it as the start of the grace, as for its
worker's death, and reports how the command ended.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taskloom.cli import subreaper
else:
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    import subreaper

GRACE_S = 2.0
"""How long the command and its strays have to exit after ``SIGTERM`` before ``SIGKILL``."""
POLL_S = 0.05
"""How often a guard that is ending processes looks for new orphans (adoption wakes
nothing)."""
NOT_RUN = 127
"""The exit status when the command could not be started, as a shell's."""
RESTORED = tuple(
    getattr(signal, name)
    for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ", "SIGTERM")
    if hasattr(signal, name)
)
"""Signals the guard ignores or handles (Python: ``SIGPIPE``…; the guard: ``SIGTERM``), given
back their default for the command."""


def main(argv: list[str]) -> int:
    lifeline, report, command = int(argv[0]), int(argv[1]), argv[3:]
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.getpgrp() != os.getpid():  # it would stop a group it does not own
        sys.stderr.write("the command guard must lead its own process group\n")
        return NOT_RUN
    for fd in (lifeline, report):
        os.set_inheritable(fd, False)  # the command must not keep the worker's pipes
    woken, wake = os.pipe()
    os.set_blocking(wake, False)
    signal.set_wakeup_fd(wake)  # a child's exit, or SIGTERM, wakes the wait below
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    reaping = subreaper.become()
    signal.signal(signal.SIGTERM, lambda signum, frame: None)  # it starts the grace
    try:
        pid = os.posix_spawnp(command[0], command, os.environ, setsigdef=RESTORED)
    except OSError as exc:
        sys.stderr.write(f"could not run {command[0]}: {exc.strerror or exc}\n")
        return NOT_RUN
    _let_go_of_the_output()
    status, strays = _watch(pid, lifeline, woken, reaping)
    if reaping:
        os.write(report, f"{strays}\n".encode())
    elif select.select([lifeline], [], [], 0)[0]:  # the worker died as the command ended
        _stop_group()
    return _exit_as(status)


def _watch(pid: int, lifeline: int, woken: int, reaping: bool) -> tuple[int, int]:
    """Wait for the command, stopping it once asked to (the worker gone, or its ``SIGTERM``);
    then, ``reaping``, end the strays. The command's wait status, and how many
    strays were ended. A stop starts the grace; else the command's end starts it."""
    status: int | None = None
    kill_at: float | None = None  # when everything left gets SIGKILL
    strays: set[int] = set()
    watched = [lifeline, woken]
    while True:
        status = _reap(pid, status)
        now = time.monotonic()
        if status is not None and kill_at is None:
            kill_at = now + GRACE_S
        left = subreaper.children() if reaping and kill_at is not None else []
        if status is not None and not left:
            return status, len(strays)
        for child in left:
            if child != pid and child not in strays:
                strays.add(child)
                _signal(child, signal.SIGTERM)
        if kill_at is not None and now >= kill_at:
            if not reaping:
                _signal_group(signal.SIGKILL)  # the guard too: this is the end
            for child in left:
                _signal(child, signal.SIGKILL)
        ready, _, _ = select.select(watched, [], [], None if kill_at is None else POLL_S)
        now = time.monotonic()
        if lifeline in ready:  # readable: the worker's end is closed (it never writes)
            watched.remove(lifeline)
            _signal_group(signal.SIGTERM)
            kill_at = min(kill_at or now + GRACE_S, now + GRACE_S)
        if woken in ready and signal.SIGTERM in os.read(woken, 4096) and kill_at is None:
            kill_at = now + GRACE_S


def _reap(pid: int, status: int | None) -> int | None:
    """Reap every child that has exited; the command's wait status once it has."""
    while True:
        try:
            done, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if not done:
            return status
        if done == pid:
            status = code


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # ended and reaped meanwhile
        os.kill(pid, signum)


def _signal_group(signum: int) -> None:
    os.killpg(os.getpgrp(), signum)


def _let_go_of_the_output() -> None:
    """Point the guard's own standard streams at the null device: the command's output ends
    when the command's processes close it, not when the guard exits too."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(devnull, stream)
    os.close(devnull)


def _stop_group() -> None:
    """``SIGTERM`` to the guard's process group (the command and everything it started), then
    ``SIGKILL`` to all of it, the guard too: this is the end."""
    group = os.getpgrp()
    os.killpg(group, signal.SIGTERM)
    time.sleep(GRACE_S)
    os.killpg(group, signal.SIGKILL)


def _exit_as(status: int) -> int:
    """The guard's exit: the command's exit status, or death by the signal that killed it."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # its core dump was the command's
        with contextlib.suppress(OSError):  # SIGKILL's (the OOM killer's) cannot be set
            signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return 128 + signum  # a signal that does not end a process
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
