-- Queue events come from the database: a trigger appends each task's `task_state` event in
-- the same statement that inserts or changes the task, so no code path can change a task
-- without its event, and a claim or a completion is a single statement (one round trip).
-- `changed_at` (unix seconds) stamps the change; the event's payload has the same shape as
-- Task.to_dict() (times as RFC 3339 UTC with milliseconds), without the lease token.
ALTER TABLE tasks ADD COLUMN changed_at DOUBLE PRECISION;
UPDATE tasks SET changed_at = COALESCE(completed_at, claimed_at, created_at);

-- Queue events belong to no thread and stay out of the per-thread index.
DROP INDEX events_thread;
CREATE INDEX events_thread ON events (thread_id, id) WHERE thread_id IS NOT NULL;

-- Unix seconds as the RFC 3339 text taskloom stores (milliseconds, rounded half up).
-- STABLE, like to_char inside it: a function declared more strictly than its body is not
-- inlined, and each call then costs a full SQL function call (~50 µs, eight per event).
CREATE FUNCTION taskloom_iso(ts DOUBLE PRECISION) RETURNS TEXT
LANGUAGE sql STABLE AS $$
    SELECT to_char(to_timestamp(floor(ts * 1000 + 0.5) / 1000) AT TIME ZONE 'UTC',
                   'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- The outbox protocol of store/postgres.py: hold the schema's outbox lock (class 1953234946)
-- shared before the id is drawn, and notify the schema's channel, delivered at commit.
CREATE FUNCTION taskloom_task_event() RETURNS trigger
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
        'created_at', taskloom_iso(NEW.created_at),
        'not_before', taskloom_iso(NEW.not_before),
        'expires_at', taskloom_iso(NEW.expires_at),
        'claimed_by', NEW.claimed_by, 'pid', NEW.pid, 'host', NEW.host,
        'claimed_at', taskloom_iso(NEW.claimed_at),
        'lease_expires_at', taskloom_iso(NEW.lease_expires_at),
        'lease_token', NULL, 'attempts', NEW.attempts, 'max_attempts', NEW.max_attempts,
        'completed_at', taskloom_iso(NEW.completed_at),
        'result', NEW.result, 'last_error', NEW.last_error,
        'changed_at', taskloom_iso(NEW.changed_at)), taskloom_iso(COALESCE(NEW.changed_at, NEW.created_at)))
    RETURNING id INTO event_id;
    PERFORM pg_notify(left('taskloom_events:' || current_schema(), 63), event_id::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER tasks_event AFTER INSERT OR UPDATE ON tasks
    FOR EACH ROW EXECUTE FUNCTION taskloom_task_event();
