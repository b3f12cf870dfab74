-- Queue events come from the database: a trigger appends each task's `task_state` event in
-- the same statement that inserts or changes the task, so no code path can change a task
-- without its event, and a claim or a completion is a single statement.
-- `changed_at` (unix seconds) stamps the change; the event's payload has the same shape as
-- Task.to_dict() (times as RFC 3339 UTC with milliseconds), without the lease token.
ALTER TABLE tasks ADD COLUMN changed_at REAL;
UPDATE tasks SET changed_at = COALESCE(completed_at, claimed_at, created_at);

-- Events keep their ids without AUTOINCREMENT (whose counter table was one more page to
-- write per transaction): the newest event is never pruned, so an id is never reused.
-- Queue events belong to no thread and stay out of the per-thread index.
CREATE TABLE events_new (
    id         INTEGER PRIMARY KEY,
    type       TEXT NOT NULL,
    thread_id  TEXT,
    data       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
INSERT INTO events_new (id, type, thread_id, data, created_at)
    SELECT id, type, thread_id, data, created_at FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_thread ON events (thread_id, id) WHERE thread_id IS NOT NULL;

-- The event payload of each task, defined once for both triggers.
CREATE VIEW task_events AS SELECT rowid AS task_rowid,
    strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(changed_at, created_at), 'unixepoch') AS stamp,
    json_object(
        'id', id, 'title', title, 'body', body, 'kind', kind, 'priority', priority,
        'status', status, 'source', source, 'target_agent', target_agent,
        'dedup_key', dedup_key, 'payload', json(payload),
        'created_at', strftime('%Y-%m-%dT%H:%M:%fZ', created_at, 'unixepoch'),
        'not_before', strftime('%Y-%m-%dT%H:%M:%fZ', not_before, 'unixepoch'),
        'expires_at', strftime('%Y-%m-%dT%H:%M:%fZ', expires_at, 'unixepoch'),
        'claimed_by', claimed_by, 'pid', pid, 'host', host,
        'claimed_at', strftime('%Y-%m-%dT%H:%M:%fZ', claimed_at, 'unixepoch'),
        'lease_expires_at', strftime('%Y-%m-%dT%H:%M:%fZ', lease_expires_at, 'unixepoch'),
        'lease_token', NULL, 'attempts', attempts, 'max_attempts', max_attempts,
        'completed_at', strftime('%Y-%m-%dT%H:%M:%fZ', completed_at, 'unixepoch'),
        'result', result, 'last_error', last_error,
        'changed_at', strftime('%Y-%m-%dT%H:%M:%fZ', changed_at, 'unixepoch')) AS data
    FROM tasks;

CREATE TRIGGER tasks_event_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO events (type, thread_id, data, created_at)
        SELECT 'task_state', NULL, data, stamp FROM task_events WHERE task_rowid = NEW.rowid;
END;

CREATE TRIGGER tasks_event_update AFTER UPDATE ON tasks BEGIN
    INSERT INTO events (type, thread_id, data, created_at)
        SELECT 'task_state', NULL, data, stamp FROM task_events WHERE task_rowid = NEW.rowid;
END;
