"""A process that takes in the orphans below it (Linux's child subreaper) and lists them.

:func:`become` makes the calling process a child subreaper: a process below it whose parent
exits is reparented to it instead of to init, however it detached itself (``setsid``,
``nohup … &``, a daemon's double fork), so it can be found and ended. It answers whether
that worked: ``True`` on Linux when ``prctl(PR_SET_CHILD_SUBREAPER)`` accepts it, ``False``
elsewhere or when it is refused (nothing changes then). A subreaper must reap what it adopts:
:func:`children` lists its children, adopted or started, from ``/proc``.

It imports only the standard library: the command guard loads it in a Python started with
``-I -S``, beside the guard's own file.
"""

from __future__ import annotations

import ctypes
import os
import sys

PR_SET_CHILD_SUBREAPER = 36


def become() -> bool:
    """Make this process a child subreaper; whether it is one now."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):  # no C library to load, or no prctl in it
        return False


def children() -> list[int]:
    """The live processes (zombies left out) whose parent is this process."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                stat = file.read()
        except OSError:  # ended meanwhile
            continue
        # After the command's name, in parentheses and possibly holding any byte: state, ppid.
        state, ppid = stat[stat.rfind(b")") + 2 :].split(b" ", 2)[:2]
        if int(ppid) == me and state != b"Z":
            found.append(int(entry))
    return found
