-- One index for the whole life of a leased task instead of two. With `tasks_ready` and
-- `tasks_leases`, a claim deleted from one index and inserted into the other, and every page a
-- transaction touches is written to the WAL again at its commit. Keyed on status first, a
-- ready task and its claimed self sit next to each other: the claim moves an entry within
-- (usually) one page. The claim's `status = 'ready' AND lease_expires_at IS NULL` (always true
-- of a ready task) pins the first two columns, so the index's order is the claim's order; the
-- sweep reads `status = 'in_progress'` in lease order. Partial as an OR: SQLite proves
-- `status = 'ready'` implies an OR of terms, not an IN list.
DROP INDEX tasks_ready;
DROP INDEX tasks_leases;
CREATE INDEX tasks_work ON tasks (status, lease_expires_at, priority, created_at, id)
    WHERE status = 'ready' OR status = 'in_progress';
