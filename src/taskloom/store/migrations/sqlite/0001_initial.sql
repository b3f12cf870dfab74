-- taskloom's schema on SQLite. Later changes are numbered files after this one.

-- Documents (boards, goals): JSON state with a version.
CREATE TABLE documents (
    kind       TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    state      TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;

-- The outbox. Ids need no AUTOINCREMENT: retention never deletes the newest event, so an id
-- is never reused. A task's event (type `task_state`) names its task in `task_id` and stores
-- what a change can alter in the columns after it, as the task row has them (times in unix
-- seconds); its `data` is a JSON null. Readers join the task's fixed fields (title, body,
-- payload, …) back from its row (store.base.events_query).
CREATE TABLE events (
    id               INTEGER PRIMARY KEY,
    type             TEXT NOT NULL,
    thread_id        TEXT,
    data             TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    task_id          TEXT,
    status           TEXT,
    claimed_by       TEXT,
    pid              INTEGER,
    host             TEXT,
    claimed_at       REAL,
    lease_expires_at REAL,
    attempts         INTEGER,
    completed_at     REAL,
    result           TEXT,
    last_error       TEXT,
    changed_at       REAL
);

-- Task events belong to no thread and stay out of the per-thread index.
CREATE INDEX events_thread ON events (thread_id, id) WHERE thread_id IS NOT NULL;

-- The work queue. Times are unix seconds (REAL) so lease checks are plain comparisons;
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
    created_at       REAL NOT NULL,
    not_before       REAL,
    expires_at       REAL,
    claimed_by       TEXT,
    pid              INTEGER,
    host             TEXT,
    claimed_at       REAL,
    lease_expires_at REAL,
    lease_token      TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL DEFAULT 3,
    completed_at     REAL,
    result           TEXT,
    last_error       TEXT,
    changed_at       REAL
);

-- At most one live task per dedup key, enforced by the database.
CREATE UNIQUE INDEX tasks_dedup ON tasks (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('ready', 'in_progress');

-- One index for the whole life of a leased task: a ready task and its claimed self sit side
-- by side, so a claim moves an entry within (usually) one page instead of between two
-- indexes. The claim's `status = 'ready' AND lease_expires_at IS NULL` pins the first two
-- columns, so the index's order is the claim's order; the lease sweep reads
-- `status = 'in_progress'` in lease order. Partial as an OR: SQLite proves that
-- `status = 'ready'` implies an OR of terms, not an IN list.
CREATE INDEX tasks_work ON tasks (status, lease_expires_at, priority, created_at, id)
    WHERE status = 'ready' OR status = 'in_progress';

-- Ready tasks with a TTL: the expiry sweep cancels those whose `expires_at` has passed.
CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE status = 'ready' AND expires_at IS NOT NULL;

-- A task's event is written by the database in the statement that adds or changes the task,
-- so no code path changes a task without its event. SQLite has no trigger for inserts and
-- updates alike, so the two say the same thing.
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

CREATE TABLE agent_cursors (
    agent_id   TEXT PRIMARY KEY,
    digest     TEXT NOT NULL,
    updated_at REAL NOT NULL
);

-- Context guard: stashed tool results (per thread), their eviction log, the summarizer's
-- per-thread circuit breaker and its summary cache.
CREATE TABLE stash_results (
    thread_id    TEXT    NOT NULL,
    result_id    TEXT    NOT NULL,
    tool_name    TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    is_json      INTEGER NOT NULL,
    tokens       INTEGER NOT NULL,
    bytes        INTEGER NOT NULL,
    lines        INTEGER NOT NULL,
    encoding     TEXT    NOT NULL,
    placeholder  TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    PRIMARY KEY (thread_id, result_id)
);

CREATE INDEX stash_results_age ON stash_results (thread_id, created_at);
CREATE INDEX stash_results_expiry ON stash_results (expires_at);

CREATE TABLE stash_log (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id  TEXT NOT NULL,
    result_id  TEXT NOT NULL,
    action     TEXT NOT NULL,
    detail     TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX stash_log_thread ON stash_log (thread_id, id);

CREATE TABLE stash_breaker (
    thread_id  TEXT    PRIMARY KEY,
    failures   INTEGER NOT NULL,
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
