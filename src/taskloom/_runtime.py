"""What the handles run on: the clock, id and token sources, and which process holds a claim.

:class:`Runtime` bundles the injected parts (store, clock, id source) that every handle takes
instead of the facade, so tests can pass exact ones.

A queue task's claim and a goal's turn lease both record the process that holds them
(:data:`HOST`, :func:`current_pid`), so a process that died holding one gives it up before its
lease runs out, when another process on the same host (and in the same pid namespace) sees
that its pid is gone.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from taskloom.domain.errors import InvalidInput

if TYPE_CHECKING:
    from taskloom.store.base import Store


def utcnow() -> datetime:
    return datetime.now(UTC)


_last = 0
_lock = threading.Lock()
TOKEN_BYTES = 16
_TOKENS_PER_READ = 64
_random = bytearray()
"""Random bytes read from the OS ahead for :func:`new_token` (under ``_lock``): a claim
makes one token, and reading many tokens' worth at once spares a system call per claim."""


def _forget_last() -> None:
    """A forked child starts from a random point of its own (counting on from its parent's
    last id, both would make the same ids in the same millisecond), with random bytes of its
    own (the parent's unused ones would make the parent's next tokens) and a lock of its own
    (one held by another thread at the fork would never be let go)."""
    global _last, _lock
    _last = 0
    _random.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_last)


def new_id() -> str:
    """A uuid7 (RFC 9562): 48-bit unix-ms timestamp, then 74 bits that start random.

    Sorting by id sorts by creation time, which keeps index inserts local and puts tasks
    added together (one ``created_at``) in the order they were given. Within one process
    ids only grow: one made in the same millisecond as the last (or after the clock stepped
    back) is the last plus one (RFC 9562's monotonic random). No counter is stored, so ids
    never collide after a restart.
    """
    global _last
    ms = time.time_ns() // 1_000_000
    fresh = (ms & 0xFFFF_FFFF_FFFF) << 74 | int.from_bytes(os.urandom(10), "big") >> 6
    with _lock:
        value = _last = fresh if fresh > _last else _last + 1
    value = (
        (value >> 74) << 80
        | 0x7 << 76
        | ((value >> 62) & 0xFFF) << 64
        | 0b10 << 62
        | (value & 0x3FFF_FFFF_FFFF_FFFF)
    )
    h = f"{value:032x}"  # uuid.UUID's own formatting, without building the object
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_token() -> str:
    """An unguessable token (lease tokens, etc.): 128 random bits from the OS's
    cryptographic source, as 32 hex digits."""
    with _lock:
        if not _random:
            _random.extend(os.urandom(TOKEN_BYTES * _TOKENS_PER_READ))
        token = _random[-TOKEN_BYTES:]
        del _random[-TOKEN_BYTES:]
    return token.hex()


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
    except OSError:  # not Linux, or /proc hidden: the name alone
        return name
    return name if namespace == INIT_PID_NAMESPACE else f"{name} ({namespace})"


HOST = host_name()
_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


def current_pid() -> int:
    """This process's id, asked of the OS once and again in a forked child (every claim
    records it, so it is kept rather than asked for each time)."""
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


@dataclass(frozen=True, slots=True)
class Runtime:
    """What a handle needs from its surroundings: the store it writes to, the clock it reads
    and the source of new ids. Handles take this (or exactly the object they use), never the
    :class:`~taskloom.client.Taskloom` facade."""

    store: Store
    now: Callable[[], datetime] = utcnow
    new_id: Callable[[], str] = new_id


class HasRuntime(Protocol):
    """What carries a runtime: the facade (``taskloom.connect()``) and its async side."""

    @property
    def runtime(self) -> Runtime: ...


def runtime_of(client: Runtime | HasRuntime) -> Runtime:
    """The runtime of a client from ``taskloom.connect`` or ``connect_async`` (or a runtime
    itself), for the entry points that take a client."""
    runtime = client if isinstance(client, Runtime) else getattr(client, "runtime", None)
    if not isinstance(runtime, Runtime):
        raise InvalidInput(
            f"expected a client from taskloom.connect or connect_async, not {client!r}"
        )
    return runtime
