-- The walk downstream of a task that ends dead or canceled finds the ready tasks it blocks by
-- their ids: the walk is an array built once, looked up in the primary key. As `IN (…)` the
-- planner, which cannot tell how far the walk goes, reads the whole table into a hash join
-- whenever the ended task has dependents.
CREATE OR REPLACE FUNCTION taskloom_block_dependents() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tasks SET status = 'blocked', changed_at = NEW.changed_at,
        result = 'blocked: task ' || NEW.id || ', which it depends on, is ' || NEW.status
    WHERE status = 'ready' AND id = ANY(ARRAY(
        WITH RECURSIVE down(id) AS (
            SELECT task_id FROM task_deps WHERE depends_on = NEW.id
            UNION SELECT d.task_id FROM down CROSS JOIN LATERAL (
                SELECT task_id FROM task_deps WHERE depends_on = down.id OFFSET 0
            ) AS d
        )
        SELECT id FROM down
    ));
    RETURN NULL;
END
$$;
