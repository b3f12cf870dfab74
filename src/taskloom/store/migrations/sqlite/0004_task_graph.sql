-- The queue's work graph: dependencies between tasks, mutual-exclusion groups, and the
-- `blocked` status of a task whose dependency ended dead or canceled.

-- Set when a task is added and never changed. `depends_on` and `depends_on_keys` are JSON
-- arrays (task ids, dedup keys) as the task was added with them, NULL for none: a claim reads
-- a task without dependencies without looking at `task_deps`.
ALTER TABLE tasks ADD COLUMN group_key TEXT;
ALTER TABLE tasks ADD COLUMN depends_on TEXT;
ALTER TABLE tasks ADD COLUMN depends_on_keys TEXT;

-- One row per dependency of a task (`position`: its place among them). `depends_on` is the
-- task it waits for; a dependency by dedup key (`dep_key`) is bound to the task holding the
-- key, and waits unbound (NULL) until one does. A dependency is met once its task is
-- completed (or pruned, which only finished tasks are).
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

-- A blocked task keeps its dedup key: it runs once its dependency is requeued.
DROP INDEX tasks_dedup;
CREATE UNIQUE INDEX tasks_dedup ON tasks (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('ready', 'in_progress', 'blocked');

-- A task that ends dead or canceled blocks every ready task downstream of it, each with the
-- reason (domain/task_graph.py: blocked_reason), in the statement that ends it, whichever
-- statement that is. Releasing them (a requeue) is the queue's, in its transaction.
CREATE TRIGGER tasks_block_dependents AFTER UPDATE OF status ON tasks
WHEN NEW.status IN ('dead', 'canceled') AND OLD.status NOT IN ('dead', 'canceled')
BEGIN
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

-- SQLite fires the newest trigger first: the event trigger is made again after the one above,
-- so a task's own event comes before the events of the tasks it blocks.
DROP TRIGGER tasks_event_update;
CREATE TRIGGER tasks_event_update AFTER UPDATE ON tasks BEGIN
    INSERT INTO events (type, thread_id, task_id, data, created_at, status, claimed_by, pid,
        host, claimed_at, lease_expires_at, attempts, completed_at, result, last_error,
        changed_at)
    VALUES ('task_state', NULL, NEW.id, 'null',
        strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(NEW.changed_at, NEW.created_at), 'unixepoch'),
        NEW.status, NEW.claimed_by, NEW.pid, NEW.host, NEW.claimed_at, NEW.lease_expires_at,
        NEW.attempts, NEW.completed_at, NEW.result, NEW.last_error, NEW.changed_at);
END;
