"""Thread ids: opaque strings chosen by the host, which every board, goal and guard is keyed by."""

from __future__ import annotations

from taskloom.domain.common import storable_size, visible_id
from taskloom.domain.errors import InvalidInput

MAX_THREAD_ID = 200


def check_thread_id(thread_id: str | None) -> str:
    """A thread id trimmed, or the error saying why it is not one: it is non-empty, short,
    storable, visible (no line break or control character, which the panel's routes and
    listings cannot show apart) and usable as a URL path segment."""
    if thread_id is not None and not isinstance(thread_id, str):
        # str() would make one: b"t1" the thread "b't1'", an object a new thread each run
        raise InvalidInput(f"a thread id is text, not {type(thread_id).__name__}")
    if thread_id is None or not thread_id.strip():
        raise InvalidInput("a thread id is required")
    thread_id = thread_id.strip()
    storable_size(thread_id, "thread id")
    if len(thread_id) > MAX_THREAD_ID:
        raise InvalidInput(f"thread id is longer than {MAX_THREAD_ID} characters")
    if thread_id in (".", ".."):
        # Browsers drop these path segments (as "%2E" too): the panel's routes for such a
        # thread would reach another route.
        raise InvalidInput(f"a thread id cannot be {thread_id!r} (a URL path drops it)")
    return visible_id(thread_id, "thread id")
