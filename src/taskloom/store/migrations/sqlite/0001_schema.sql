-- taskloom's schema on SQLite. A change to it is a numbered file after this one.

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
    changed_at       REAL,
    group_key        TEXT,
    depends_on       TEXT,
    depends_on_keys  TEXT
);

-- At most one live task per dedup key, enforced by the database. A blocked task keeps its
-- key: it runs once its dependency is requeued.
CREATE UNIQUE INDEX tasks_dedup ON tasks (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('ready', 'in_progress', 'blocked');

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
-- updates alike, so two (this one and `tasks_event_update`, below) say the same thing.
CREATE TRIGGER tasks_event_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO events (type, thread_id, task_id, data, created_at, status, claimed_by, pid,
        host, claimed_at, lease_expires_at, attempts, completed_at, result, last_error,
        changed_at)
    VALUES ('task_state', NULL, NEW.id, 'null',
        strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(NEW.changed_at, NEW.created_at), 'unixepoch'),
        NEW.status, NEW.claimed_by, NEW.pid, NEW.host, NEW.claimed_at, NEW.lease_expires_at,
        NEW.attempts, NEW.completed_at, NEW.result, NEW.last_error, NEW.changed_at);
END;

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
) WITHOUT ROWID;

CREATE INDEX task_deps_upstream ON task_deps (depends_on) WHERE depends_on IS NOT NULL;
CREATE INDEX task_deps_key ON task_deps (dep_key) WHERE dep_key IS NOT NULL;

-- At most one task of a group in progress, enforced by the database; the claim's own test
-- (no task of its group in progress) reads it.
CREATE UNIQUE INDEX tasks_group_running ON tasks (group_key)
    WHERE status = 'in_progress' AND group_key IS NOT NULL;
-- A batch claim takes a grouped task only if it is the most urgent ready one of its group.
CREATE INDEX tasks_group_ready ON tasks (group_key, priority, created_at, id)
    WHERE status = 'ready' AND group_key IS NOT NULL;

-- A bound on how many tasks are ready: never fewer than are. It rises as a task becomes
-- ready (added, or back to ready) and stays as one stops being ready, so a claim and a
-- completion leave it alone. An add counts the ready tasks only when the bound passes the
-- queue's cap, and sets the bound to what remains ready after its evictions. Derived from
-- `tasks`, so a copy between databases leaves it out and the destination's triggers raise
-- it for what it copies.
CREATE TABLE ready_bound (n INTEGER NOT NULL);
INSERT INTO ready_bound (n) VALUES (0);

CREATE TRIGGER ready_bound_insert AFTER INSERT ON tasks WHEN NEW.status = 'ready' BEGIN
    UPDATE ready_bound SET n = n + 1;
END;
CREATE TRIGGER ready_bound_update AFTER UPDATE OF status ON tasks
WHEN NEW.status = 'ready' AND OLD.status <> 'ready' BEGIN
    UPDATE ready_bound SET n = n + 1;
END;

-- A task that ends dead or canceled blocks every ready task downstream of it, each with the
-- reason (domain/task_graph.py: blocked_reason), in the statement that ends it, whichever
-- statement that is. Releasing them (a requeue) is the queue's, in its transaction.
-- SQLite runs a row trigger's WHEN clause inside the trigger's program, and sets up that
-- program for every row a statement changes: a trigger on `tasks` runs one plain statement,
-- so the walk downstream is an INSTEAD OF trigger on the view `task_ends`, which runs only
-- when a task ends dead or canceled.
CREATE VIEW task_ends (id, status, changed_at) AS SELECT NULL, NULL, NULL WHERE 0;

CREATE TRIGGER task_ends_block_dependents INSTEAD OF INSERT ON task_ends BEGIN
    UPDATE tasks SET status = 'blocked', changed_at = NEW.changed_at,
        result = 'blocked: task ' || NEW.id || ', which it depends on, is ' || NEW.status
    WHERE status = 'ready' AND id IN (
        WITH RECURSIVE down(id) AS (
            SELECT task_id FROM task_deps WHERE depends_on = NEW.id
            UNION SELECT d.task_id FROM task_deps AS d JOIN down ON d.depends_on = down.id
        )
        SELECT id FROM down
    );
END;

CREATE TRIGGER tasks_block_dependents AFTER UPDATE OF status ON tasks
WHEN NEW.status IN ('dead', 'canceled') AND OLD.status NOT IN ('dead', 'canceled')
BEGIN
    INSERT INTO task_ends (id, status, changed_at) VALUES (NEW.id, NEW.status, NEW.changed_at);
END;

-- SQLite fires the newest trigger first: the event trigger is made after the one above, so
-- a task's own event comes before the events of the tasks it blocks.
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
    created_at    REAL NOT NULL,
    updated_at    REAL NOT NULL,
    expires_at    REAL,
    poll_ms       INTEGER NOT NULL
);

CREATE INDEX mcp_tasks_expiry ON mcp_tasks (expires_at) WHERE expires_at IS NOT NULL;

-- A board's cards, one row each: a change writes the cards it changes, not the whole board.
-- The board's document (kind 'board') keeps its version and what it holds beside its cards;
-- a board stored whole in its document (before this table) moves here on its next change.
-- `position` is the card's sort key (its `order`); `data` is the card as JSON.
CREATE TABLE board_cards (
    thread_id TEXT    NOT NULL,
    card_id   TEXT    NOT NULL,
    position  INTEGER NOT NULL,
    data      TEXT    NOT NULL,
    PRIMARY KEY (thread_id, card_id)
) WITHOUT ROWID;
