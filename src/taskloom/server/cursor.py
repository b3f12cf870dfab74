"""Stream cursors that name their event: ``<id>-<stamp>``.

An outbox id alone does not say which history it belongs to. A server restarted on a
restored backup, or on another database file, may have reached the same id with other
events; a browser resuming from it would then skip them and keep showing boards that no
longer exist. So the SSE ``id:`` a stream sends carries a stamp of the event it names (a
short hash of its id, type, thread and creation time), and a cursor is resumed only if the
outbox still has that event there; otherwise the stream opens afresh, as for an unknown
cursor. A cursor names the newest event at or below its id (ids drawn by writes that rolled
back name no event of their own), or no event at all. Plain integers (``after=0``, a script's
cursor) are still taken, on trust.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from taskloom.domain.errors import InvalidInput
from taskloom.store.base import Transaction
from taskloom.store.outbox import newest_event_up_to

_CURSOR = re.compile(r"([0-9]{1,19})(?:-([0-9a-f]{12}))?")


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a client resumes: after event ``id``, if ``stamp`` (when given) still names it."""

    id: int
    stamp: str | None = None


def stamp(event_id: int, type_: str, thread_id: str | None, created_at: str) -> str:
    """Twelve hex digits naming one event of one history: the same id in another database
    was written at another time (or is of another kind, or thread)."""
    text = f"{event_id}\x00{type_}\x00{thread_id or ''}\x00{created_at}"
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


NO_EVENT = stamp(0, "", None, "")
"""The stamp of a cursor with no event at or below it (an empty outbox)."""


def stamp_at(tx: Transaction, cursor: int) -> str:
    """The stamp of the newest event at or below ``cursor`` (:data:`NO_EVENT` if none)."""
    event = newest_event_up_to(tx, cursor)
    return NO_EVENT if event is None else stamp(*event)


def wire_id(event_id: int, event_stamp: str) -> str:
    """A cursor as an SSE ``id:``."""
    return f"{event_id}-{event_stamp}"


def parse_cursor(raw: str, name: str = "Last-Event-ID") -> Cursor:
    """A ``Last-Event-ID`` (or ``after``): an id this server sent, or a plain integer. A
    refusal names ``name``, the one the client sent."""
    match = _CURSOR.fullmatch(raw)
    if match is None:
        raise InvalidInput(
            f"{name} must be a non-negative integer, or an event id this server sent"
        )
    return Cursor(int(match[1]), match[2])
