"""Reading the outbox from a point in time, and retention that never strands a reader.

A reader that has nothing to resume from (a fresh page, or a ``Last-Event-ID`` whose events
were pruned) loses nothing by being handed the current boards and goals whole instead:
:func:`snapshot_page` returns them a page at a time (a server with
thousands of boards never holds them all for one reader), tagged with the outbox head, from
which the reader then follows live. Retention records the highest id it deleted, which is how
a stale cursor is told apart from a gap left by a rolled-back transaction; it deletes in
batches, each its own short write transaction, so other writers are never locked out for
long and a server stopping mid-prune waits for one batch at most.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from taskloom.domain.common import iso
from taskloom.domain.events import GOAL_STATE, TODO_STATE, Event
from taskloom.domain.kinds import BOARD_KIND, GOAL_KIND
from taskloom.store.base import Document, Store, Transaction, decode

META_KIND = "meta"
RETENTION_KEY = "events_retention"


def pruned_through(tx: Transaction) -> int:
    """The highest event id retention has deleted (0 if it never ran)."""
    doc = tx.load_doc(META_KIND, RETENTION_KEY)
    return int(doc.state.get("pruned_through", 0)) if doc else 0


def newest_event_up_to(tx: Transaction, event_id: int) -> tuple[int, str, str | None, str] | None:
    """The id, type, thread and creation time of the newest event with an id at or below
    ``event_id`` (``None`` if there is none)."""
    row = tx.query_one(
        "SELECT id, type, thread_id, created_at FROM events WHERE id <= ? ORDER BY id DESC LIMIT 1",
        (event_id,),
    )
    if row is None:
        return None
    return int(row["id"]), row["type"], row["thread_id"], row["created_at"]


SNAPSHOTS = ((BOARD_KIND, TODO_STATE), (GOAL_KIND, GOAL_STATE))
"""The document kinds a fresh reader is sent, in the order it gets them, with their event."""
_DOCS = "SELECT key, version, state, updated_at FROM documents WHERE kind = ?"

SnapshotPosition = tuple[int, str | None]
"""Where a run of :func:`snapshot_page` calls goes on: an index into :data:`SNAPSHOTS` and
the last key sent of that kind (``None``: none yet)."""


def snapshot_page(
    tx: Transaction,
    head: int,
    thread_id: str | None,
    start: SnapshotPosition = (0, None),
    limit: int = 32,
) -> tuple[list[Event], SnapshotPosition | None]:
    """Up to ``limit`` current board and goal snapshots (boards first, each kind by key) from
    ``start``, each as an event at ``head``, and where the next page starts (``None``: no
    more). One thread's are a single page.

    ``head`` is read before the first page: a document read later is at least as new as its
    state at ``head``, and every change after ``head`` (to a document already sent, or one
    created behind the position) is also delivered live, as a newer snapshot readers keep.
    """
    if limit < 1:
        raise ValueError("a page holds at least one snapshot")
    if thread_id is not None:
        events = []
        for kind, event_type in SNAPSHOTS:
            doc = tx.load_doc(kind, thread_id)
            if doc is not None:
                events.append(_snapshot(tx, doc, event_type, head))
        return events, None
    events = []
    index, key = start
    while index < len(SNAPSHOTS):
        kind, event_type = SNAPSHOTS[index]
        want = limit - len(events)
        if key is None:
            rows = tx.query(f"{_DOCS} ORDER BY key LIMIT ?", (kind, want))
        else:
            rows = tx.query(f"{_DOCS} AND key > ? ORDER BY key LIMIT ?", (kind, key, want))
        events += [
            _snapshot(
                tx,
                Document(kind, r["key"], r["version"], decode(r["state"]), r["updated_at"]),
                event_type,
                head,
            )
            for r in rows
        ]
        if len(rows) == want:
            return events, (index, rows[-1]["key"])
        index, key = index + 1, None
    return events, None


def _snapshot(tx: Transaction, doc: Document, event_type: str, head: int) -> Event:
    """A stored document's snapshot event at ``head`` (a board's built from its cards)."""
    from taskloom.store.boards import snapshot_state

    state = snapshot_state(tx, doc) if doc.kind == BOARD_KIND else doc.state
    return Event(event_type, doc.key, state, id=head, created_at=doc.updated_at)


def prune_events(
    store: Store,
    now: datetime,
    *,
    keep: int | None = 10_000,
    older_than: timedelta | None = None,
    batch: int | None = None,
) -> int:
    """Delete events beyond the newest ``keep`` (``None``: no count limit), and (if given)
    those older than ``older_than``; the newest event always stays. Returns how many were
    deleted.

    With ``batch``, one call deletes at most the oldest ``batch`` of them, in one short
    write transaction; call again until it returns 0 (a long-running caller can stop
    between calls)."""
    check_limits(keep, older_than, batch)
    with store.write() as tx:
        return prune_in(tx, now, keep=keep, older_than=older_than, batch=batch)


def check_limits(keep: int | None, older_than: timedelta | None, batch: int | None) -> None:
    """Refuse limits retention cannot apply (``ValueError``)."""
    if keep is not None and keep < 1:
        raise ValueError(
            "keep must be at least 1, or None to keep every event"
            " (as `taskloom serve --retain-events 0` does)"
        )
    if batch is not None and batch < 1:
        raise ValueError("batch must be at least 1")
    if older_than is not None and older_than < timedelta(0):
        raise ValueError("older_than must not be negative")


def prune_in(
    tx: Transaction,
    now: datetime,
    *,
    keep: int | None,
    older_than: timedelta | None,
    batch: int | None,
) -> int:
    """:func:`prune_events` inside the write transaction ``tx`` (limits already checked).

    What a call reads is bounded when nothing is due: the id range tells whether more than
    ``keep`` events can exist, and the oldest event's age whether any is too old. With
    ``batch``, the age limit is judged on the oldest ``batch`` events only (the most one call
    deletes), so a call never reads the whole log."""
    before = None
    if older_than is not None:
        try:
            before = iso(now - older_than)
        except OverflowError:
            raise ValueError(f"older_than {older_than} reaches beyond the calendar") from None
    span = tx.query_one("SELECT MIN(id) AS lo, MAX(id) AS hi FROM events")
    if span is None or span["hi"] is None:
        return 0
    lo, hi = int(span["lo"]), int(span["hi"])
    cutoff = 0
    if keep is not None and hi - lo >= keep:  # else at most `keep` events exist
        sql = "SELECT id FROM events ORDER BY id DESC LIMIT 1 OFFSET ?"
        row = tx.query_one(sql, (keep,))
        cutoff = int(row["id"]) if row else 0
    if before is not None and _oldest_is_before(tx, lo, before):
        if batch is None:
            sql = "SELECT MAX(id) AS id FROM events WHERE created_at < ?"
            params: tuple[Any, ...] = (before,)
        else:
            sql = (
                "SELECT MAX(id) AS id FROM (SELECT id, created_at FROM events"
                " ORDER BY id LIMIT ?) AS oldest WHERE created_at < ?"
            )
            params = (batch, before)
        newest = tx.query_one(sql, params)
        # The newest event stored, not the head: on PostgreSQL the head counts ids drawn
        # by writes that rolled back, and one below it may be the newest event itself.
        if newest and newest["id"] is not None:
            cutoff = max(cutoff, min(int(newest["id"]), hi - 1))
    done = pruned_through(tx)
    if cutoff <= done:
        return 0
    if batch is not None:
        row = tx.query_one(
            "SELECT id FROM events WHERE id > ? AND id <= ? ORDER BY id LIMIT 1 OFFSET ?",
            (done, cutoff, batch - 1),
        )
        if row is not None:
            cutoff = int(row["id"])
    deleted = tx.execute("DELETE FROM events WHERE id <= ?", (cutoff,))
    version = tx.doc_version(META_KIND, RETENTION_KEY) or 0
    tx.save_doc(META_KIND, RETENTION_KEY, version + 1, {"pruned_through": cutoff}, iso(now))
    return deleted


def _oldest_is_before(tx: Transaction, oldest_id: int, before: str) -> bool:
    row = tx.query_one("SELECT created_at FROM events WHERE id = ?", (oldest_id,))
    return row is not None and row["created_at"] < before


def newest_event_id(tx: Transaction) -> int:
    """The newest event's id (0 for an empty log)."""
    row = tx.query_one("SELECT MAX(id) AS id FROM events")
    return int(row["id"]) if row and row["id"] is not None else 0
