"""Identifiers: time-ordered uuid7 strings, unique across processes and restarts."""

from __future__ import annotations

import os
import threading
import time

_last = 0
_lock = threading.Lock()
TOKEN_BYTES = 16
_TOKENS_PER_READ = 64
_random = bytearray()
"""Random bytes read from the OS ahead for :func:`new_token` (under ``_lock``): a claim
makes one token, and reading 16 bytes each time was a system call per claim."""


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
