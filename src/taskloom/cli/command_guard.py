"""The guard between ``taskloom tasks work`` and a task's command: the command dies with its
worker, children and all.

Run as a script (``python -I -S command_guard.py FD -- COMMAND…``; it imports nothing of
taskloom, so it starts in milliseconds) as the leader of a new process group. It starts the
command in that group and waits for it, exiting as the command did (its status, or the
signal that killed it). ``FD`` is the read end of a pipe whose write end only the worker
holds: when the worker dies, however it dies (``kill -9`` included), the pipe reads as ended,
and the guard stops its whole process group, ``SIGTERM`` and then ``SIGKILL`` after a grace,
so nothing the command started goes on working on a task that is leased again. This works on
every POSIX system, unlike a parent-death signal (``PR_SET_PDEATHSIG``), which exists on one
system only and reaches only a direct child.

The worker's own stops (a timeout, Ctrl-C) signal the whole group, the guard included: the
guard waits for the command then, to report how it ended.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import sys
import time

GRACE_S = 2.0
"""How long the command has to exit after ``SIGTERM``, once its worker died, before
``SIGKILL`` (the worker's own stop gives it as long)."""
NOT_RUN = 127
"""The exit status when the command could not be started, as a shell's."""
RESTORED = tuple(
    getattr(signal, name)
    for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ", "SIGTERM")
    if hasattr(signal, name)
)
"""Signals the guard ignores (Python: ``SIGPIPE``…; the guard: ``SIGTERM``, see the module's
docstring), given back their default for the command."""


def main(argv: list[str]) -> int:
    lifeline, command = int(argv[0]), argv[2:]
    if os.getpgrp() != os.getpid():  # it would stop a group it does not own
        sys.stderr.write("the command guard must lead its own process group\n")
        return NOT_RUN
    os.set_inheritable(lifeline, False)  # the command must not keep the worker's pipe
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    woken, wake = os.pipe()
    os.set_blocking(wake, False)
    signal.set_wakeup_fd(wake)  # a child's exit wakes the wait below
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    try:
        pid = os.posix_spawnp(command[0], command, os.environ, setsigdef=RESTORED)
    except OSError as exc:
        sys.stderr.write(f"could not run {command[0]}: {exc.strerror or exc}\n")
        return NOT_RUN
    _let_go_of_the_output()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        ready, _, _ = select.select([lifeline, woken], [], [])
        if lifeline in ready:  # readable: the worker's end is closed (it never writes)
            _stop_group()
        os.read(woken, 4096)
    if select.select([lifeline], [], [], 0)[0]:  # the worker died as the command ended
        _stop_group()
    return _exit_as(status)


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
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return 128 + signum  # a signal that does not end a process
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
