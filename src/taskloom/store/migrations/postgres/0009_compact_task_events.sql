-- A change of a queued task stores only what a change can alter, as a JSON array in the order
-- of taskloom.domain.queue.CHANGE_FIELDS (times in integer milliseconds), not the whole task
-- again: the title, body, payload and the other fields fixed at insert are in the insert's
-- event and in the task's row, and readers add them back (store.base.events_from_rows), so
-- every reader still sees Task.to_dict()'s shape. The insert's event is unchanged (0007).
CREATE OR REPLACE FUNCTION taskloom_task_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1953234946, hashtext(current_schema()));
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO events (type, thread_id, data, created_at)
        VALUES ('task_state', NULL, json_build_array(NEW.id, NEW.status, NEW.claimed_by,
            NEW.pid, NEW.host, taskloom_ms(NEW.claimed_at), taskloom_ms(NEW.lease_expires_at),
            NEW.attempts, taskloom_ms(NEW.completed_at), NEW.result, NEW.last_error,
            taskloom_ms(NEW.changed_at)),
            taskloom_iso(COALESCE(NEW.changed_at, NEW.created_at)));
        RETURN NULL;
    END IF;
    INSERT INTO events (type, thread_id, data, created_at)
    VALUES ('task_state', NULL, json_build_object(
        'id', NEW.id, 'title', NEW.title, 'body', NEW.body, 'kind', NEW.kind,
        'priority', NEW.priority, 'status', NEW.status, 'source', NEW.source,
        'target_agent', NEW.target_agent, 'dedup_key', NEW.dedup_key,
        'payload', NEW.payload::json,
        'created_at', taskloom_ms(NEW.created_at),
        'not_before', taskloom_ms(NEW.not_before),
        'expires_at', taskloom_ms(NEW.expires_at),
        'claimed_by', NEW.claimed_by, 'pid', NEW.pid, 'host', NEW.host,
        'claimed_at', taskloom_ms(NEW.claimed_at),
        'lease_expires_at', taskloom_ms(NEW.lease_expires_at),
        'lease_token', NULL, 'attempts', NEW.attempts, 'max_attempts', NEW.max_attempts,
        'completed_at', taskloom_ms(NEW.completed_at),
        'result', NEW.result, 'last_error', NEW.last_error,
        'changed_at', taskloom_ms(NEW.changed_at)),
        taskloom_iso(COALESCE(NEW.changed_at, NEW.created_at)));
    RETURN NULL;
END
$$;
