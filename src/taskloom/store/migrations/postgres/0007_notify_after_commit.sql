-- Writers no longer NOTIFY inside their transaction: PostgreSQL serialises the commits of all
-- notifying transactions behind one cluster-wide lock held across the WAL flush, so queue
-- workers committed one at a time. The store notifies after commit instead (store/pg_notify.py),
-- once per burst. Same trigger as 0006 otherwise.
CREATE OR REPLACE FUNCTION taskloom_task_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1953234946, hashtext(current_schema()));
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
