-- Queue events store their times as integer milliseconds since the epoch instead of RFC 3339
-- text: to_char nine times per event cost ~0.15 ms of a claim plus completion, more than the
-- rest of both events. Readers format them (taskloom.domain.queue.task_event_data), so events
-- keep Task.to_dict()'s shape. The row's own created_at stays text, like every other event's
-- (the outbox prunes by it).
CREATE FUNCTION taskloom_ms(ts DOUBLE PRECISION) RETURNS BIGINT
LANGUAGE sql IMMUTABLE AS $$ SELECT floor(ts * 1000 + 0.5)::bigint $$;

CREATE OR REPLACE FUNCTION taskloom_task_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    event_id BIGINT;
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
        taskloom_iso(COALESCE(NEW.changed_at, NEW.created_at)))
    RETURNING id INTO event_id;
    PERFORM pg_notify(left('taskloom_events:' || current_schema(), 63), event_id::text);
    RETURN NULL;
END
$$;
