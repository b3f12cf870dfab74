-- A change of a queued task stores only what a change can alter, as a JSON array in the order
-- of taskloom.domain.queue.CHANGE_FIELDS (times in integer milliseconds), not the whole task
-- again: the title, body, payload and the other fields fixed at insert are in the insert's
-- event and in the task's row, and readers join them back through `task_id`
-- (store.base.events_query), so every reader still sees Task.to_dict()'s shape. Inserts keep
-- taskloom_task_event (0007); changes get a trigger and function of their own, as on SQLite.
ALTER TABLE events ADD COLUMN task_id TEXT;
CREATE FUNCTION taskloom_task_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1953234946, hashtext(current_schema()));
    INSERT INTO events (type, thread_id, task_id, data, created_at)
    VALUES ('task_state', NULL, NEW.id, json_build_array(NEW.id, NEW.status, NEW.claimed_by,
        NEW.pid, NEW.host, taskloom_ms(NEW.claimed_at), taskloom_ms(NEW.lease_expires_at),
        NEW.attempts, taskloom_ms(NEW.completed_at), NEW.result, NEW.last_error,
        taskloom_ms(NEW.changed_at)),
        taskloom_iso(COALESCE(NEW.changed_at, NEW.created_at)));
    RETURN NULL;
END
$$;

DROP TRIGGER tasks_event ON tasks;
CREATE TRIGGER tasks_event_insert AFTER INSERT ON tasks
    FOR EACH ROW EXECUTE FUNCTION taskloom_task_event();
CREATE TRIGGER tasks_event_update AFTER UPDATE ON tasks
    FOR EACH ROW EXECUTE FUNCTION taskloom_task_change();
