-- A task's change is stored in columns of the event's own (times in unix seconds), as on
-- SQLite since its migration 0011, instead of a JSON array in `data` (a JSON null for these):
-- the array and its four calls converting times to milliseconds were most of what the
-- trigger did after writing the row. Readers (store.base.events_from_rows) turn the
-- columns, or an array written before this migration, into Task.to_dict()'s shape.
ALTER TABLE events ADD COLUMN status TEXT;
ALTER TABLE events ADD COLUMN claimed_by TEXT;
ALTER TABLE events ADD COLUMN pid BIGINT;
ALTER TABLE events ADD COLUMN host TEXT;
ALTER TABLE events ADD COLUMN claimed_at DOUBLE PRECISION;
ALTER TABLE events ADD COLUMN lease_expires_at DOUBLE PRECISION;
ALTER TABLE events ADD COLUMN attempts INTEGER;
ALTER TABLE events ADD COLUMN completed_at DOUBLE PRECISION;
ALTER TABLE events ADD COLUMN result TEXT;
ALTER TABLE events ADD COLUMN last_error TEXT;
ALTER TABLE events ADD COLUMN changed_at DOUBLE PRECISION;
CREATE OR REPLACE FUNCTION taskloom_task_state() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1953234946, hashtext(current_schema()));
    INSERT INTO events (type, thread_id, task_id, data, created_at, status, claimed_by, pid,
        host, claimed_at, lease_expires_at, attempts, completed_at, result, last_error,
        changed_at)
    VALUES ('task_state', NULL, NEW.id, 'null',
        taskloom_iso(COALESCE(NEW.changed_at, NEW.created_at)), NEW.status, NEW.claimed_by,
        NEW.pid, NEW.host, NEW.claimed_at, NEW.lease_expires_at, NEW.attempts,
        NEW.completed_at, NEW.result, NEW.last_error, NEW.changed_at);
    RETURN NULL;
END
$$;
