-- taskloom's schema on PostgreSQL. Later changes are numbered files after this one.
-- Text keys use the "C" collation so ORDER BY matches SQLite's byte order on every server.
-- JSON is stored as `json` (validated, kept verbatim: the same bytes as SQLite's TEXT column).

-- Documents (boards, goals): JSON state with a version.
CREATE TABLE documents (
    kind       TEXT COLLATE "C" NOT NULL,
    key        TEXT COLLATE "C" NOT NULL,
    version    BIGINT NOT NULL,
    state      JSON   NOT NULL,
    updated_at TEXT   NOT NULL,
    PRIMARY KEY (kind, key)
);

-- The outbox. Ids come from the sequence while the appending transaction holds the outbox
-- lock shared; readers take it exclusively for an instant to find the id below which every
-- event has settled (see store/postgres.py), so a reader resuming after id N never skips an
-- event that commits late with a smaller id.
-- A task's event (type `task_state`) names its task in `task_id` and stores what a change
-- can alter in the columns after it, as the task row has them (times in unix seconds); its
-- `data` is a JSON null. Readers join the task's fixed fields (title, body, payload, …) back
-- from its row (store.base.events_query).
CREATE TABLE events (
    id               BIGSERIAL PRIMARY KEY,
    type             TEXT COLLATE "C" NOT NULL,
    thread_id        TEXT COLLATE "C",
    data             JSON NOT NULL,
    created_at       TEXT NOT NULL,
    task_id          TEXT,
    status           TEXT,
    claimed_by       TEXT,
    pid              BIGINT,
    host             TEXT,
    claimed_at       DOUBLE PRECISION,
    lease_expires_at DOUBLE PRECISION,
    attempts         INTEGER,
    completed_at     DOUBLE PRECISION,
    result           TEXT,
    last_error       TEXT,
    changed_at       DOUBLE PRECISION
);

-- Task events belong to no thread and stay out of the per-thread index.
CREATE INDEX events_thread ON events (thread_id, id) WHERE thread_id IS NOT NULL;

-- The work queue. Times are unix seconds so lease checks are plain comparisons;
-- `changed_at` stamps a task's latest change.
CREATE TABLE tasks (
    id               TEXT PRIMARY KEY,
    title            TEXT NOT NULL,
    body             TEXT NOT NULL DEFAULT '',
    kind             TEXT NOT NULL DEFAULT 'task',
    priority         INTEGER NOT NULL DEFAULT 100,
    status           TEXT NOT NULL DEFAULT 'ready',
    source           TEXT,
    target_agent     TEXT,
    dedup_key        TEXT,
    payload          TEXT NOT NULL DEFAULT '{}',
    created_at       DOUBLE PRECISION NOT NULL,
    not_before       DOUBLE PRECISION,
    expires_at       DOUBLE PRECISION,
    claimed_by       TEXT,
    pid              BIGINT,
    host             TEXT,
    claimed_at       DOUBLE PRECISION,
    lease_expires_at DOUBLE PRECISION,
    lease_token      TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL DEFAULT 3,
    completed_at     DOUBLE PRECISION,
    result           TEXT,
    last_error       TEXT,
    changed_at       DOUBLE PRECISION
);

-- The claim reads only ready tasks, most urgent first.
CREATE INDEX tasks_ready ON tasks (priority, created_at, id) WHERE status = 'ready';
-- Leased tasks, for the lease sweep's `lease_expires_at <= ?`. Partial on the lease itself,
-- not on `status = 'in_progress'`: a fenced finish (`WHERE id = ? AND status =
-- 'in_progress' AND lease_token = ?`) does not imply this predicate, so the planner finds
-- its row through the primary key whatever the statistics say.
CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
-- At most one live task per dedup key, enforced by the database.
CREATE UNIQUE INDEX tasks_dedup ON tasks (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('ready', 'in_progress');
-- Ready tasks with a TTL: the expiry sweep cancels those whose `expires_at` has passed.
CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE status = 'ready' AND expires_at IS NOT NULL;

-- Unix seconds as the RFC 3339 text taskloom stores (milliseconds, rounded half up).
-- STABLE, like to_char inside it: a function declared more strictly than its body is not
-- inlined, and each call is then a full SQL function call.
CREATE FUNCTION taskloom_iso(ts DOUBLE PRECISION) RETURNS TEXT
LANGUAGE sql STABLE AS $$
    SELECT to_char(to_timestamp(floor(ts * 1000 + 0.5) / 1000) AT TIME ZONE 'UTC',
                   'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- A task's event is written by the database in the statement that adds or changes the task,
-- so no code path changes a task without its event. It keeps the outbox protocol of
-- store/postgres.py: the schema's outbox lock (class 1953234946) is held shared before the
-- id is drawn. Listeners are notified by the store after the commit.
CREATE FUNCTION taskloom_task_state() RETURNS trigger
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

CREATE TRIGGER tasks_event AFTER INSERT OR UPDATE ON tasks
    FOR EACH ROW EXECUTE FUNCTION taskloom_task_state();

CREATE TABLE agent_cursors (
    agent_id   TEXT PRIMARY KEY,
    digest     TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);

-- Context guard: stashed tool results (per thread), their eviction log, the summarizer's
-- per-thread circuit breaker and its summary cache.
CREATE TABLE stash_results (
    thread_id    TEXT    NOT NULL,
    result_id    TEXT    NOT NULL,
    tool_name    TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    is_json      BIGINT  NOT NULL,
    tokens       BIGINT  NOT NULL,
    bytes        BIGINT  NOT NULL,
    lines        BIGINT  NOT NULL,
    encoding     TEXT    NOT NULL,
    placeholder  TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    PRIMARY KEY (thread_id, result_id)
);

CREATE INDEX stash_results_age ON stash_results (thread_id, created_at);
CREATE INDEX stash_results_expiry ON stash_results (expires_at);

CREATE TABLE stash_log (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id  TEXT NOT NULL,
    result_id  TEXT NOT NULL,
    action     TEXT NOT NULL,
    detail     TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX stash_log_thread ON stash_log (thread_id, id);

CREATE TABLE stash_breaker (
    thread_id  TEXT    PRIMARY KEY,
    failures   BIGINT  NOT NULL,
    opened_at  TEXT,
    last_error TEXT,
    updated_at TEXT    NOT NULL
);

CREATE TABLE stash_summaries (
    cache_key  TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL,
    summary    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
