-- A task's event stores only what a change can alter, as a JSON array in the order of
-- taskloom.domain.queue.CHANGE_FIELDS (times in integer milliseconds), and the task's id in
-- `events.task_id`; readers join the fields fixed at insert (title, body, payload, …) back
-- from the task's row (store.base.events_query), so every reader still sees Task.to_dict()'s
-- shape. Events written whole before this migration are read as they are.
ALTER TABLE events ADD COLUMN task_id TEXT;
CREATE FUNCTION taskloom_task_state() RETURNS trigger
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
DROP FUNCTION taskloom_task_event();
CREATE TRIGGER tasks_event AFTER INSERT OR UPDATE ON tasks
    FOR EACH ROW EXECUTE FUNCTION taskloom_task_state();
