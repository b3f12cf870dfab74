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

-- A blocked task keeps its dedup key: it runs once its dependency is requeued.
DROP INDEX tasks_dedup;
CREATE UNIQUE INDEX tasks_dedup ON tasks (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('ready', 'in_progress', 'blocked');

-- A task that ends dead or canceled blocks every ready task downstream of it, each with the
-- reason (domain/task_graph.py: blocked_reason), in the statement that ends it, whichever
-- statement that is. Releasing them (a requeue) is the queue's, in its transaction. Named to
-- fire after `tasks_event` (triggers fire in name order): a task's own event comes first.
CREATE FUNCTION taskloom_block_dependents() RETURNS trigger
LANGUAGE plpgsql AS $$
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
    RETURN NULL;
END
$$;

CREATE TRIGGER tasks_graph AFTER UPDATE OF status ON tasks
    FOR EACH ROW WHEN (NEW.status IN ('dead', 'canceled') AND OLD.status NOT IN ('dead', 'canceled'))
    EXECUTE FUNCTION taskloom_block_dependents();
