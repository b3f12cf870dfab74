"""The real clock. ``Taskloom`` takes any ``clock=`` (tests pass a fake one); code on a hot
path may compare against :func:`utcnow` to read ``time.time()`` directly when it is real."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
