"""Reading the outbox from a point in time, and retention that never strands a reader.

Events carry full snapshots, so a reader that has nothing to resume from (a fresh page, or a
``Last-Event-ID`` whose events were pruned) loses nothing by being handed the current
documents instead: :func:`fresh_snapshots` returns them tagged with the outbox head, from which
the reader then follows live. Retention records the highest id it deleted, which is how a
stale cursor is told apart from a gap left by a rolled-back transaction.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from taskloom.boards import BOARD_KIND
from taskloom.domain.common import iso
from taskloom.domain.events import GOAL_STATE, TODO_STATE, Event
from taskloom.goals import GOAL_KIND
from taskloom.store.base import Store, Transaction

META_KIND = "meta"
RETENTION_KEY = "events_retention"


def pruned_through(tx: Transaction) -> int:
    """The highest event id retention has deleted (0 if it never ran)."""
    doc = tx.load_doc(META_KIND, RETENTION_KEY)
    return int(doc.state.get("pruned_through", 0)) if doc else 0


def fresh_snapshots(tx: Transaction, thread_id: str | None) -> tuple[int, list[Event]]:
    """The outbox head and the current board and goal snapshots, each as an event at it.

    ``tx`` must be a fresh read: the head is fixed before the documents are read, so anything
    committed after the head is also delivered live (a newer snapshot, which readers keep).
    """
    head = tx.event_head()
    events = []
    for kind, event_type in ((BOARD_KIND, TODO_STATE), (GOAL_KIND, GOAL_STATE)):
        if thread_id is None:
            docs = tx.list_docs(kind)
        else:
            doc = tx.load_doc(kind, thread_id)
            docs = [doc] if doc else []
        events += [
            Event(event_type, d.key, d.state, id=head, created_at=d.updated_at) for d in docs
        ]
    return head, events


def prune_events(
    store: Store,
    now: datetime,
    *,
    keep: int | None = 10_000,
    older_than: timedelta | None = None,
) -> int:
    """Delete events beyond the newest ``keep`` (``None``: no count limit), and (if given)
    those older than ``older_than``; the newest event always stays. Returns how many were
    deleted."""
    if keep is not None and keep < 1:
        raise ValueError("keep must be at least 1")
    with store.write() as tx:
        cutoff = 0
        if keep is not None:
            sql = "SELECT id FROM events ORDER BY id DESC LIMIT 1 OFFSET ?"
            row = tx.query_one(sql, (keep,))
            cutoff = int(row["id"]) if row else 0
        if older_than is not None:
            newest = tx.query_one(
                "SELECT MAX(id) AS id FROM events WHERE created_at < ?", (iso(now - older_than),)
            )
            head = tx.event_head()
            if newest and newest["id"] is not None:
                cutoff = max(cutoff, min(int(newest["id"]), head - 1))
        if cutoff <= pruned_through(tx):
            return 0
        deleted = tx.execute("DELETE FROM events WHERE id <= ?", (cutoff,))
        version = tx.doc_version(META_KIND, RETENTION_KEY) or 0
        tx.save_doc(META_KIND, RETENTION_KEY, version + 1, {"pruned_through": cutoff}, iso(now))
        return deleted
