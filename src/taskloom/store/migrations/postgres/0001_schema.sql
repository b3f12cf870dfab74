-- taskloom's schema on PostgreSQL. A change to it is a numbered file after this one.
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
-- `changed_at` stamps a task's latest change. `group_key` names a task's mutual-exclusion
-- group. `depends_on` and `depends_on_keys` are set when a task is added and never changed:
-- JSON arrays (task ids, dedup keys) as the task was added with them, NULL for none, so a
-- claim reads a task without dependencies without looking at `task_deps`.
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
    changed_at       DOUBLE PRECISION,
    group_key        TEXT,
    depends_on       TEXT,
    depends_on_keys  TEXT
);

-- The claim reads only ready tasks, most urgent first.
CREATE INDEX tasks_ready ON tasks (priority, created_at, id) WHERE status = 'ready';
-- Leased tasks, for the lease sweep's `lease_expires_at <= ?`. Partial on the lease itself,
-- not on `status = 'in_progress'`: a fenced finish (`WHERE id = ? AND status =
-- 'in_progress' AND lease_token = ?`) does not imply this predicate, so the planner finds
-- its row through the primary key whatever the statistics say.
CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
-- At most one live task per dedup key, enforced by the database. A blocked task keeps its
-- key: it runs once its dependency is requeued.
CREATE UNIQUE INDEX tasks_dedup ON tasks (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('ready', 'in_progress', 'blocked');
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

-- The work graph. One row per dependency of a task (`position`: its place among them).
-- `depends_on` is the task it waits for; a dependency by dedup key (`dep_key`) is bound to
-- the task holding the key, and waits unbound (NULL) until one does. A dependency is met
-- once its task is completed (or pruned, which only finished tasks are).
CREATE TABLE task_deps (
    task_id    TEXT    NOT NULL,
    position   INTEGER NOT NULL,
    depends_on TEXT,
    dep_key    TEXT,
    PRIMARY KEY (task_id, position)
);

CREATE INDEX task_deps_upstream ON task_deps (depends_on) WHERE depends_on IS NOT NULL;
CREATE INDEX task_deps_key ON task_deps (dep_key) WHERE dep_key IS NOT NULL;

-- At most one task of a group in progress, enforced by the database. The claim tests for a
-- task of its group in progress, but two claims racing read snapshots from before each
-- other's: the second to write then fails on this index (it waits for the first to commit),
-- changes nothing, and is run again on a new snapshot (store/pg_tasks.py).
CREATE UNIQUE INDEX tasks_group_running ON tasks (group_key)
    WHERE status = 'in_progress' AND group_key IS NOT NULL;
-- A batch claim takes a grouped task only if it is the most urgent ready one of its group.
CREATE INDEX tasks_group_ready ON tasks (group_key, priority, created_at, id)
    WHERE status = 'ready' AND group_key IS NOT NULL;

-- A task that ends dead or canceled blocks every ready task downstream of it, each with the
-- reason (domain/task_graph.py: blocked_reason), in the statement that ends it, whichever
-- statement that is. Releasing them (a requeue) is the queue's, in its transaction. The walk
-- downstream does one index lookup a step: a lateral subquery, which OFFSET 0 keeps from
-- being flattened into a join that may read the whole of `task_deps` at every step. Named
-- to fire after `tasks_event` (triggers fire in name order): a task's own event comes first.
CREATE FUNCTION taskloom_block_dependents() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tasks SET status = 'blocked', changed_at = NEW.changed_at,
        result = 'blocked: task ' || NEW.id || ', which it depends on, is ' || NEW.status
    WHERE status = 'ready' AND id IN (
        WITH RECURSIVE down(id) AS (
            SELECT task_id FROM task_deps WHERE depends_on = NEW.id
            UNION SELECT d.task_id FROM down CROSS JOIN LATERAL (
                SELECT task_id FROM task_deps WHERE depends_on = down.id OFFSET 0
            ) AS d
        )
        SELECT id FROM down
    );
    RETURN NULL;
END
$$;

CREATE TRIGGER tasks_graph AFTER UPDATE OF status ON tasks
    FOR EACH ROW WHEN (NEW.status IN ('dead', 'canceled') AND OLD.status NOT IN ('dead', 'canceled'))
    EXECUTE FUNCTION taskloom_block_dependents();

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

-- MCP tasks: the record of a tool call answered as a task (the MCP Tasks extension), kept
-- until its time to live runs out. The work itself is a queue task (`queue_task_id`): the
-- delegated work a call follows (kind `follow`), or the call itself, run by a worker of an
-- MCP server (kind `call`). `status` is `working` until the call's end is recorded:
-- `completed` with its `result`, `failed` with its protocol `error`, or `cancelled`.
CREATE TABLE mcp_tasks (
    id            TEXT PRIMARY KEY,
    thread_id     TEXT NOT NULL,
    agent_id      TEXT NOT NULL,
    tool          TEXT NOT NULL,
    queue_task_id TEXT NOT NULL,
    kind          TEXT NOT NULL,
    status        TEXT NOT NULL,
    result        TEXT,
    error         TEXT,
    created_at    DOUBLE PRECISION NOT NULL,
    updated_at    DOUBLE PRECISION NOT NULL,
    expires_at    DOUBLE PRECISION,
    poll_ms       INTEGER NOT NULL
);

CREATE INDEX mcp_tasks_expiry ON mcp_tasks (expires_at) WHERE expires_at IS NOT NULL;

-- A board's cards, one row each: a change writes the cards it changes, not the whole board.
-- The board's document (kind 'board') keeps its version and what it holds beside its cards;
-- a board stored whole in its document (before this table) moves here on its next change.
-- `position` is the card's sort key (its `order`); `data` is the card as JSON.
CREATE TABLE board_cards (
    thread_id TEXT COLLATE "C" NOT NULL,
    card_id   TEXT COLLATE "C" NOT NULL,
    position  BIGINT NOT NULL,
    data      JSON   NOT NULL,
    PRIMARY KEY (thread_id, card_id)
);
