"""Event retention, a property of the database.

Every change appends an event to the outbox, so the log would grow for ever. How much of it a
database keeps is a policy stored in the database itself (a ``meta`` document), set once
(``taskloom retention set``) and applied by every process that writes to it: the CLI, agents,
workers and ``taskloom serve`` alike. A database whose policy was never set keeps
:data:`DEFAULT_POLICY`: the newest :data:`DEFAULT_KEEP` events, whatever their age.

A writer applies the policy at a bounded cost (:class:`AutoRetention`): after its first commit
(a CLI command makes few), then after every :data:`EVERY_WRITES` commits or :data:`EVERY_S`
of writing, whichever comes first, it deletes at most :data:`BATCH` events in one short write
transaction of its own, and more such batches, each its own transaction, while whole batches
are due and it has deleted fewer events than the log gained since its last application: a
writer that appends thousands of events per commit (``add_many``) keeps the log bounded.
While it finds a whole batch due it prunes again after its next commit, so a backlog (a
policy just lowered) goes in a few commits. Pruned events cost readers nothing: a reader
whose cursor was pruned gets the current snapshots (:mod:`taskloom.store.outbox`).

The same pass bounds the guard's stash log (``stash_log``: every stash, eviction, expiry and
per-turn placement), which no policy sets: each application also deletes at most
:data:`BATCH` of its lines older than :data:`STASH_LOG_AGE`, in a short write transaction of
its own (:func:`prune_stash_log`), and prunes again after the next commit while it finds a
whole batch due.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from taskloom.domain.common import UNSET, iso
from taskloom.domain.errors import InvalidInput, TaskloomError
from taskloom.domain.text import counted
from taskloom.store.base import Store, Transaction
from taskloom.store.outbox import (
    META_KIND,
    check_limits,
    newest_event_id,
    prune_in,
    pruned_through,
)

__all__ = [
    "BATCH",
    "BATCH_PAUSE_S",
    "DEFAULT_KEEP",
    "DEFAULT_POLICY",
    "EVERY_S",
    "EVERY_WRITES",
    "MAX_AGE",
    "STASH_LOG_AGE",
    "AutoRetention",
    "RetentionPolicy",
    "apply_all",
    "apply_policy",
    "event_counts",
    "prune_stash_log",
    "read_policy",
    "set_policy",
    "stash_log_lines",
]

log = logging.getLogger("taskloom.store")

POLICY_KEY = "events_policy"
DEFAULT_KEEP = 10_000
"""Events a database keeps unless told otherwise: hours of a busy queue, weeks of boards."""
MAX_AGE = timedelta(days=36525)
"""The longest age limit retention takes (100 years, the queue's longest duration)."""
EVERY_WRITES = 1_000
"""A writer applies the policy after this many commits (and after its first)..."""
EVERY_S = 1.0
"""… or after this long since it last did, at its next commit."""
BATCH = 5_000
"""The most events one application deletes: other writers wait for one batch at most."""
BATCH_PAUSE_S = 0.05
"""The pause between two batches of one prune (:func:`apply_all`): longer than a waiting
SQLite writer takes to look at the lock again (a few milliseconds), so a writer waiting while a
backlog is pruned gets in after the batch it waited for, not after the whole backlog."""
STASH_LOG_AGE = timedelta(days=30)
"""How long a stash log line is kept. A line explains a result's end (stored, evicted,
expired) or holds a tool call's placement under a turn budget; a conversation re-wrapped
after this long gets its placements decided again, and a result gone this long ago is
answered as unknown rather than with why it went."""


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Keep the newest ``keep`` events (``None``: no count limit) and none older than
    ``older_than`` (``None``: no age limit); the newest event always stays."""

    keep: int | None = DEFAULT_KEEP
    older_than: timedelta | None = None

    def __post_init__(self) -> None:
        if self.keep is not None and (isinstance(self.keep, bool) or self.keep < 1):
            raise InvalidInput("keep must be at least 1 event, or none for no count limit")
        if self.older_than is not None and not timedelta(0) < self.older_than <= MAX_AGE:
            raise InvalidInput(
                f"the age limit must be more than 0 and at most {MAX_AGE.days} days,"
                " or none for no age limit"
            )

    def describe(self) -> str:
        """The policy in words, e.g. ``keep the newest 10,000 events, whatever their age``."""
        count = (
            "keep every event"
            if self.keep is None
            else f"keep the newest {counted(self.keep, 'event')}"
        )
        if self.older_than is None:
            return f"{count}, whatever their age"
        return f"{count}, and none older than {_words(self.older_than)}"

    def to_dict(self) -> dict[str, Any]:
        """The policy as JSON-ready data (``older_than_s``: seconds, or ``None``)."""
        age = None if self.older_than is None else self.older_than.total_seconds()
        return {"keep": self.keep, "older_than_s": age}


DEFAULT_POLICY = RetentionPolicy()


def _words(age: timedelta) -> str:
    seconds = age.total_seconds()
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds >= size and seconds % size == 0:
            return counted(int(seconds // size), unit)
    return f"{seconds:g} seconds"


def read_policy(tx: Transaction) -> RetentionPolicy | None:
    """The database's policy, or ``None`` if it was never set (:data:`DEFAULT_POLICY`
    applies)."""
    doc = tx.load_doc(META_KIND, POLICY_KEY)
    if doc is None:
        return None
    age = doc.state.get("older_than_s")
    return RetentionPolicy(
        keep=doc.state.get("keep"), older_than=None if age is None else timedelta(seconds=age)
    )


def set_policy(
    store: Store, now: datetime, *, keep: Any = UNSET, older_than: Any = UNSET
) -> RetentionPolicy:
    """Change the database's policy: each limit given (``None``: no such limit) replaces the
    one in force, the others stay. Returns the policy now in force."""
    with store.write() as tx:
        current = read_policy(tx) or DEFAULT_POLICY
        changes: dict[str, Any] = {}
        if keep is not UNSET:
            changes["keep"] = keep
        if older_than is not UNSET:
            changes["older_than"] = older_than
        policy = replace(current, **changes)
        version = tx.doc_version(META_KIND, POLICY_KEY) or 0
        tx.save_doc(META_KIND, POLICY_KEY, version + 1, policy.to_dict(), iso(now))
    return policy


def apply_policy(
    store: Store, now: datetime, *, policy: RetentionPolicy | None = None, batch: int = BATCH
) -> int:
    """Delete at most ``batch`` events the policy (the database's own unless one is given)
    says go, in one write transaction; how many it deleted. Call again until it returns
    less than ``batch`` to apply it whole."""
    check_limits(None, None, batch)
    with store.write() as tx:
        rule = policy or read_policy(tx) or DEFAULT_POLICY
        return prune_in(tx, now, keep=rule.keep, older_than=rule.older_than, batch=batch)


def apply_all(
    store: Store,
    now: Callable[[], datetime],
    *,
    policy: RetentionPolicy | None = None,
    batch: int = BATCH,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Apply the policy whole (:func:`apply_policy` until it deletes less than ``batch``),
    pausing :data:`BATCH_PAUSE_S` between batches so that other writers get in; how many
    events it deleted. ``progress`` is told the running total after each whole batch."""
    total = 0
    while True:
        deleted = apply_policy(store, now(), policy=policy, batch=batch)
        total += deleted
        if deleted < batch:
            return total
        if progress is not None:
            progress(total)
        time.sleep(BATCH_PAUSE_S)


def prune_stash_log(store: Store, now: datetime, *, batch: int | None = None) -> int:
    """Delete at most ``batch`` (``None``: :data:`BATCH`) stash log lines older than
    :data:`STASH_LOG_AGE`, of every thread, placements too, in one write transaction; how
    many it deleted. Call again until it returns less than ``batch`` to delete them all.

    Only the oldest ``batch`` lines (by id) are judged, so a call reads and deletes at most
    ``batch`` rows whatever the log's size; each line is judged by its own time, not by its
    id: one a writer whose clock ran ahead wrote before older ones stays."""
    batch = BATCH if batch is None else batch
    check_limits(None, None, batch)
    with store.write() as tx:
        return tx.execute(
            "DELETE FROM stash_log WHERE id IN (SELECT id FROM (SELECT id, created_at FROM"
            " stash_log ORDER BY id LIMIT ?) AS oldest WHERE created_at < ?)",
            (batch, iso(now - STASH_LOG_AGE)),
        )


def stash_log_lines(store: Store) -> int:
    """How many lines the stash log holds, of every thread."""
    with store.read() as tx:
        row = tx.query_one("SELECT COUNT(*) AS n FROM stash_log")
        return int(row["n"]) if row else 0


def event_counts(store: Store) -> dict[str, Any]:
    """What the log holds: ``events``, the ``oldest`` and ``newest`` event's creation time
    (``None`` if there is none), and the highest id retention has deleted
    (``pruned_through``)."""
    with store.read() as tx:
        row = tx.query_one("SELECT COUNT(*) AS n, MIN(id) AS lo, MAX(id) AS hi FROM events")
        counts: dict[str, Any] = {"events": int(row["n"]) if row else 0}
        for name, key in (("oldest", "lo"), ("newest", "hi")):
            found = None
            if row and row[key] is not None:
                sql = "SELECT created_at FROM events WHERE id = ?"
                found = (tx.query_one(sql, (row[key],)) or {}).get("created_at")
            counts[name] = found
        counts["pruned_through"] = pruned_through(tx)
    return counts


class AutoRetention:
    """One per store: :meth:`committed` after each write commits applies the database's
    policy now and then (see the module's docstring). A failure (a locked database) is
    logged and left for the next time; the commit it follows is not affected. Ages are
    judged by ``clock``: the system's, or the clock of the :class:`~taskloom.client.Taskloom`
    that writes (the one that stamps what it writes)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        self._left = 1  # commits until the next application: the first commit applies it
        self._due = 0.0  # the monotonic time after which the next commit applies it
        self._running = threading.Lock()
        self._head: int | None = None  # the newest event id at the last application

    def committed(self) -> None:
        """A write committed: count it, and apply the policy when it is due."""
        self._left -= 1
        if self._left <= 0 or time.monotonic() >= self._due:
            self._apply()

    def _apply(self) -> None:
        if not self._running.acquire(blocking=False):  # another thread, or our own prune
            return
        try:
            self._left, self._due = EVERY_WRITES, time.monotonic() + EVERY_S
            with self.store.read() as tx:
                head, last = newest_event_id(tx), self._head
            grown = 0 if last is None else max(0, head - last)
            deleted = total = apply_policy(self.store, self.clock())
            while deleted >= BATCH and total < grown:  # as many as were appended since
                deleted = apply_policy(self.store, self.clock())
                total += deleted
            self._head = head
            lines = prune_stash_log(self.store, self.clock())
            if deleted >= BATCH or lines >= BATCH:  # behind: again after the next commit
                self._left = 1
        except TaskloomError as exc:
            log.warning("applying the event retention failed, retrying later: %s", exc.message)
        finally:
            self._running.release()
