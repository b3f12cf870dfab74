-- The work queue. Times are unix seconds (REAL) so lease checks are plain comparisons.
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
    last_error       TEXT
);

-- The claim path reads only ready rows, most urgent first.
CREATE INDEX tasks_ready ON tasks (priority, created_at, id) WHERE status = 'ready';
CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE status = 'in_progress';
-- At most one live task per dedup key, enforced by the database.
CREATE UNIQUE INDEX tasks_dedup ON tasks (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('ready', 'in_progress');

CREATE TABLE agent_cursors (
    agent_id   TEXT PRIMARY KEY,
    digest     TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
