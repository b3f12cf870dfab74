-- Blocking a finished task's dependents (0004) walks downstream one index lookup a step (a
-- lateral subquery that OFFSET 0 keeps from being flattened into a join): as a join, the
-- planner may read the whole of `task_deps` at every step, and a task ending dead at the
-- head of a long chain then holds its locks for a time in the square of the chain's length.
CREATE OR REPLACE FUNCTION taskloom_block_dependents() RETURNS trigger
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
