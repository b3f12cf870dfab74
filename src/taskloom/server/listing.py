"""The thread list, computed once per change of the outbox rather than once per request.

``Taskloom.threads()`` decodes every board and goal: with hundreds of big boards one call costs
seconds of CPU, and every open panel asks every few seconds. Every change of a board or a goal
appends an event, so the list can only differ once the outbox head has moved (or names
another event: a database replaced under the server): until then the encoded answer is
served again. One thread computes at a time; the others wait and take its answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from taskloom.server.cursor import stamp_at
from taskloom.store.base import Store

Key = tuple[int, str]
"""The outbox head and its stamp."""


class ThreadListing:
    """``get()``: ``list_threads()`` as JSON bytes, recomputed only when the outbox moved."""

    def __init__(self, store: Store, list_threads: Callable[[], list[dict[str, Any]]]) -> None:
        self.store = store
        self.list_threads = list_threads
        self._lock = threading.Lock()
        self._key: Key | None = None
        self._body = b""

    def _head(self) -> Key:
        with self.store.read() as tx:
            head = tx.event_head()
            return head, stamp_at(tx, head)

    def get(self) -> bytes:
        """The list as of now: read after the head, so a change committed meanwhile moves the
        head past the key it is kept under, and the next call computes it again."""
        with self._lock:
            key = self._head()
            if key != self._key:
                rows = self.list_threads()
                self._body = json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode()
                self._key = key
            return self._body
