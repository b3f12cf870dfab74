-- The cap's count of ready tasks becomes a bound: at least as many tasks as are ready. It
-- rises as a task becomes ready (added, or back to ready) and stays as one stops being
-- ready, so a claim and a completion leave it alone and write one page fewer. An add
-- counts the ready tasks only when the bound passes the cap, and sets the bound to what
-- remains ready after its evictions. Derived from `tasks`, so a copy between databases
-- leaves it out and the destination's triggers raise it for what it copies.
DROP TRIGGER queue_counts_insert;
DROP TRIGGER queue_counts_delete;
DROP TRIGGER queue_counts_update;
DROP TABLE queue_counts;

CREATE TABLE ready_bound (n INTEGER NOT NULL);
INSERT INTO ready_bound (n) SELECT count(*) FROM tasks WHERE status = 'ready';

CREATE TRIGGER ready_bound_insert AFTER INSERT ON tasks WHEN NEW.status = 'ready' BEGIN
    UPDATE ready_bound SET n = n + 1;
END;
CREATE TRIGGER ready_bound_update AFTER UPDATE OF status ON tasks
WHEN NEW.status = 'ready' AND OLD.status <> 'ready' BEGIN
    UPDATE ready_bound SET n = n + 1;
END;
