"""One log line when taskloom's PostgreSQL connections are lost, and one when they are back.

While the server is down, psycopg's pool logs every connection it discards
(``discarding closed connection: <psycopg.Connection [BAD] at 0x…>``, which names no reason)
and every failed reconnection attempt, one record per connection and per attempt: a restart
of a few seconds put a dozen lines in a server's log, and a long outage one more per
connection at each backoff step. :class:`OneLinePerOutage` lets the first such record of
taskloom's pools through, rewritten to say what happened and that the pool reconnects by
itself, and drops the others until a connection of taskloom's opens again
(:func:`connected`), which is said in one more line. Records of other pools in the process
(an application's own) pass unchanged.
"""

from __future__ import annotations

import itertools
import logging
import threading
import weakref
from typing import Any

from taskloom.store.pg_url import KNOWN_SECRETS, one_line, scrub

POOL_NAME = "taskloom"
"""The start of the name of each of taskloom's pools (``taskloom-1``…), as psycopg's pool
logs it."""
LOST = "PostgreSQL connection lost: %s; reconnecting in the background (logged again once back)"
BACK = "PostgreSQL connection is back"

_pool_log = logging.getLogger("psycopg.pool")
_numbers = itertools.count(1)
_ours: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""Each connection of taskloom's, and the name of its pool."""
_down: set[str] = set()
"""The pools whose outage was logged and has not ended."""
_lock = threading.Lock()


def pool_name() -> str:
    """A name for a new pool of taskloom's: each pool's outage is told on its own."""
    return f"{POOL_NAME}-{next(_numbers)}"


def connected(conn: Any, name: str) -> None:
    """A connection of the pool ``name`` opened (the pool's, or one of its store's own):
    remembered as its, and the end of the pool's outage, if one was logged."""
    with _lock:
        _ours[conn] = name
        was_down = name in _down
        _down.discard(name)
    if was_down:
        _pool_log.warning(BACK, extra={"taskloom_outage": True})


def _what_happened(record: logging.LogRecord) -> tuple[str, str] | None:
    """The pool an outage record of taskloom's is about and what it says happened, or
    ``None`` for any other record."""
    args = record.args if isinstance(record.args, tuple) else ()
    name = args[0] if args and isinstance(args[0], str) else None
    if record.msg == "error connecting in %r: %s" and len(args) == 2 and name:
        what = f"error connecting: {scrub(one_line(str(args[1])), KNOWN_SECRETS)}"
    elif record.msg == "reconnection attempt in pool %r failed after %s sec" and name:
        what = "reconnection attempts timed out"
    elif record.msg in ("discarding closed connection: %s", "discarding broken connection: %s"):
        with _lock:
            name = _ours.get(args[0]) if len(args) == 1 else None
        what = "the server closed a pooled connection"
    else:
        return None
    return (name, what) if name and name.startswith(POOL_NAME) else None


class OneLinePerOutage(logging.Filter):
    """The first outage record of each of taskloom's pools, rewritten; the rest dropped
    until :func:`connected`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "taskloom_outage", False):
            return True
        found = _what_happened(record)
        if found is None:
            return True
        name, what = found
        with _lock:
            if name in _down:
                return False
            _down.add(name)
        record.msg, record.args = LOST % what, None
        return True


# First, before the filter that puts each record on one line (:mod:`.pg_url`) rewrites it.
_pool_log.filters.insert(0, OneLinePerOutage())
