"""The outbox horizon on PostgreSQL: the largest event id up to which every id is settled.

Ids are drawn in one order and committed in another, so a reader that took every committed
event past its cursor could skip one committed a moment later under a lower id. Each
appender holds the outbox lock *shared* from before it draws its id until its transaction
ends (:meth:`~taskloom.store.postgres.PgTransaction.append_event`); holding it exclusively for
an instant, a reader knows that every id drawn so far is settled, and reads the sequence.

The reader only ever *tries* the lock. Waiting for it would queue every new appender behind
the reader (PostgreSQL grants locks in order): one transaction left open in ``psql`` after
touching a taskloom table holds the lock shared, and every claim, add and board edit in
every process would wait behind the reader waiting for it. When the
lock is busy the reader retries for a moment and then answers with the last horizon it knew:
settled ids stay settled, so it is never wrong, only behind.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from taskloom.domain.errors import StoreBusy

_SEQUENCE = "coalesce(pg_sequence_last_value('events_id_seq'::regclass), 0)"
"""The last id drawn (0 before the first). The function needs USAGE on the sequence, as
drawing ids does; ``SELECT … FROM events_id_seq`` needs SELECT, which a role granted the
usual ``USAGE ON ALL SEQUENCES`` lacks."""
PEEK_SQL = f"SELECT {_SEQUENCE} AS h"
TRY_SQL = f"""
WITH l AS MATERIALIZED (SELECT pg_try_advisory_lock(%s, %s) AS got),
     h AS MATERIALIZED (SELECT CASE WHEN l.got THEN {_SEQUENCE} END AS h FROM l),
     u AS MATERIALIZED (
         SELECT CASE WHEN l.got THEN pg_advisory_unlock(%s, %s) END AS ok FROM l, h)
SELECT h.h, u.ok FROM h, u
"""
"""Take the outbox lock if it is free, read the sequence under it and let it go, in one
statement: ``h`` is null when the lock was busy."""
SHORT_WAIT_S = 0.05
"""How long a reader retries a busy lock before it answers with the last horizon it knew."""
LONG_WAIT_S = 10.0
"""How long a reader that knows no horizon yet retries before the database counts as busy."""
FIRST_PAUSE_S = 0.001
MAX_PAUSE_S = 0.05

Run = Callable[[str, Sequence[Any]], Any]


class Horizon:
    """One schema's horizon, remembered by the store (every transaction of a process)."""

    def __init__(self) -> None:
        self._known: int | None = None
        self._lock = threading.Lock()

    def after(self, run: Run, key: tuple[int, int], after_id: int) -> int | None:
        """The horizon, or ``None`` when nothing past ``after_id`` can be read yet: no id
        past it drawn, or none settled (its appenders still in flight)."""
        if int(run(PEEK_SQL, ()).fetchone()["h"]) <= after_id:
            return None
        started, pause = time.monotonic(), FIRST_PAUSE_S
        while True:
            row = run(TRY_SQL, (*key, *key)).fetchone()
            if row["h"] is not None:
                return self._learn(int(row["h"]))
            waited = time.monotonic() - started
            known = self._known
            if known is not None and waited >= SHORT_WAIT_S:
                return known if known > after_id else None
            if waited >= LONG_WAIT_S:
                raise StoreBusy(
                    "database is busy: writes to the event log stayed in flight for"
                    f" {LONG_WAIT_S:g} s (a transaction left open on a taskloom table?)"
                )
            time.sleep(pause)
            pause = min(pause * 2, MAX_PAUSE_S)

    def _learn(self, horizon: int) -> int:
        with self._lock:
            if self._known is None or horizon > self._known:
                self._known = horizon
        return horizon
