"""Level words: how a log writes the severity of a line."""

from __future__ import annotations

import re

_LEVEL = re.compile(r"[A-Z]{3,}")
SEVERITIES = frozenset(
    (
        "trace", "debug", "info", "notice", "warn", "warning", "err", "error", "crit",
        "critical", "alert", "emerg", "emergency", "fatal", "panic", "severe",
    )
)  # fmt: skip
"""Severity names of syslog and of common loggers, which a level word is in any case."""


def is_level(word: str) -> bool:
    """Whether ``word`` (bare or in brackets: ``[error]``, ``<crit>``) reads as a level."""
    bare = word.strip("[]<>()")
    return bool(_LEVEL.fullmatch(bare)) or bare.lower() in SEVERITIES
