-- A row trigger's WHEN clause runs inside the trigger's program, and SQLite allocates and
-- clears that program's frame for every row a statement changes, whether WHEN holds or not:
-- a trigger with a large body costs every update of `tasks`. Blocking a finished task's
-- dependents (0004) keeps its body in an INSTEAD OF trigger on the view `task_ends`, which
-- runs only when a task ends dead or canceled; the trigger on `tasks` hands it the task.
DROP TRIGGER tasks_block_dependents;

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
