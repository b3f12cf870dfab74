-- An add's event is built from NEW, as a change's is: reading the row back through the
-- task_events view was one more seek of the table (and its id index) per task added.
DROP TRIGGER tasks_event_insert;
DROP VIEW task_events;
CREATE TRIGGER tasks_event_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO events (type, thread_id, task_id, data, created_at) VALUES ('task_state', NULL,
        NEW.id, json_array(NEW.id, NEW.status, NEW.claimed_by, NEW.pid, NEW.host,
            CAST(NEW.claimed_at * 1000 + 0.5 AS INTEGER),
            CAST(NEW.lease_expires_at * 1000 + 0.5 AS INTEGER), NEW.attempts,
            CAST(NEW.completed_at * 1000 + 0.5 AS INTEGER), NEW.result, NEW.last_error,
            CAST(NEW.changed_at * 1000 + 0.5 AS INTEGER)),
        strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(NEW.changed_at, NEW.created_at), 'unixepoch'));
END;
