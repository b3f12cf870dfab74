-- The walk downstream of a task that ends dead or canceled finds the ready tasks it blocks by
-- their ids. The `+` keeps `status` from choosing the index: on `status = 'ready'` SQLite
-- would read every ready task and test each against the walk's ids, for every task that ends
-- dead or canceled (an eviction ends one per task over the cap).
DROP TRIGGER task_ends_block_dependents;
CREATE TRIGGER task_ends_block_dependents INSTEAD OF INSERT ON task_ends BEGIN
    UPDATE tasks SET status = 'blocked', changed_at = NEW.changed_at,
        result = 'blocked: task ' || NEW.id || ', which it depends on, is ' || NEW.status
    WHERE +status = 'ready' AND id IN (
        WITH RECURSIVE down(id) AS (
            SELECT task_id FROM task_deps WHERE depends_on = NEW.id
            UNION SELECT d.task_id FROM task_deps AS d JOIN down ON d.depends_on = down.id
        )
        SELECT id FROM down
    );
END;
