"""Which process holds a claim: the host as claims record it, and whether a pid still runs.

A queue task's claim and a goal's turn lease both record the process that holds them, so a
process that died holding one gives it up before its lease runs out, when another process on
the same host (and in the same pid namespace) sees that its pid is gone.
"""

from __future__ import annotations

import os
import socket

INIT_PID_NAMESPACE = "pid:[4026531836]"
"""Linux's first PID namespace (``PROC_PID_INIT_INO``): the machine's own, outside containers."""


def host_name() -> str:
    """This host as claims record it: its name, plus its PID namespace when that is not the
    machine's own. A pid names one process only within its namespace, and a container or
    sandbox sharing the host name has pids of its own: a claim is reclaimed for a dead pid
    only by a process that sees the same pids (``Queue.reclaim``, the turn lease)."""
    name = socket.gethostname()
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:  # not Linux, or /proc hidden: the name alone, as before
        return name
    return name if namespace == INIT_PID_NAMESPACE else f"{name} ({namespace})"


HOST = host_name()
_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


def current_pid() -> int:
    """This process's id, asked of the OS once and again in a forked child: every claim
    records it, and a system call per claim showed on the queue's hot path."""
    return _pid


def alive(pid: int) -> bool:
    """Whether a process with this pid runs (on this host, in this pid namespace)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
