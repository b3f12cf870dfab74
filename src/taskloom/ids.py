"""Identifiers: time-ordered uuid7 strings, unique across processes and restarts."""

from __future__ import annotations

import os
import secrets
import time


def new_id() -> str:
    """A uuid7 (RFC 9562): 48-bit unix-ms timestamp, then 74 random bits.

    Sorting by id sorts by creation time, which keeps index inserts local, and no process
    counter is involved, so ids never collide after a restart.
    """
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & 0xFFFF_FFFF_FFFF) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & 0x3FFF_FFFF_FFFF_FFFF
    h = f"{value:032x}"  # uuid.UUID's own formatting, without building the object
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_token() -> str:
    """An unguessable token (lease tokens, etc.): 128 random bits as 32 hex digits."""
    return secrets.token_hex(16)
