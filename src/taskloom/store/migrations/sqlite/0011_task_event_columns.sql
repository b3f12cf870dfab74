-- A task's change is stored in columns of its own, as the task has them (times in unix
-- seconds), instead of a JSON array in `data` (a JSON `null` for these): building the array,
-- with four conversions to milliseconds, was most of an event's cost after its row, and an
-- event is written on every claim and completion. Readers (store.base.events_from_rows) turn the
-- columns, or an array written before this migration, into Task.to_dict()'s shape.
ALTER TABLE events ADD COLUMN status TEXT;
ALTER TABLE events ADD COLUMN claimed_by TEXT;
ALTER TABLE events ADD COLUMN pid INTEGER;
ALTER TABLE events ADD COLUMN host TEXT;
ALTER TABLE events ADD COLUMN claimed_at REAL;
ALTER TABLE events ADD COLUMN lease_expires_at REAL;
ALTER TABLE events ADD COLUMN attempts INTEGER;
ALTER TABLE events ADD COLUMN completed_at REAL;
ALTER TABLE events ADD COLUMN result TEXT;
ALTER TABLE events ADD COLUMN last_error TEXT;
ALTER TABLE events ADD COLUMN changed_at REAL;
DROP TRIGGER tasks_event_insert;
DROP TRIGGER tasks_event_update;
-- SQLite has no trigger for inserts and updates alike, so the two say the same thing (a view
-- shared by both cost a second read of the row, see 0010).
CREATE TRIGGER tasks_event_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO events (type, thread_id, task_id, data, created_at, status, claimed_by, pid,
        host, claimed_at, lease_expires_at, attempts, completed_at, result, last_error,
        changed_at)
    VALUES ('task_state', NULL, NEW.id, 'null',
        strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(NEW.changed_at, NEW.created_at), 'unixepoch'),
        NEW.status, NEW.claimed_by, NEW.pid, NEW.host, NEW.claimed_at, NEW.lease_expires_at,
        NEW.attempts, NEW.completed_at, NEW.result, NEW.last_error, NEW.changed_at);
END;
CREATE TRIGGER tasks_event_update AFTER UPDATE ON tasks BEGIN
    INSERT INTO events (type, thread_id, task_id, data, created_at, status, claimed_by, pid,
        host, claimed_at, lease_expires_at, attempts, completed_at, result, last_error,
        changed_at)
    VALUES ('task_state', NULL, NEW.id, 'null',
        strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(NEW.changed_at, NEW.created_at), 'unixepoch'),
        NEW.status, NEW.claimed_by, NEW.pid, NEW.host, NEW.claimed_at, NEW.lease_expires_at,
        NEW.attempts, NEW.completed_at, NEW.result, NEW.last_error, NEW.changed_at);
END;
