-- How many tasks are ready, kept by the database as tasks are added, change status or are
-- deleted: the queue's cap is checked on every add, and counting the ready tasks would read
-- the whole backlog each time. Derived from `tasks`, so a copy between databases leaves it
-- out and the destination's triggers count what it copies. (PostgreSQL counts instead: one
-- row every claim updated would make concurrent claims take turns.)
CREATE TABLE queue_counts (
    status TEXT PRIMARY KEY,
    n      INTEGER NOT NULL
);
INSERT INTO queue_counts (status, n) SELECT 'ready', count(*) FROM tasks WHERE status = 'ready';

CREATE TRIGGER queue_counts_insert AFTER INSERT ON tasks WHEN NEW.status = 'ready' BEGIN
    UPDATE queue_counts SET n = n + 1 WHERE status = 'ready';
END;
CREATE TRIGGER queue_counts_delete AFTER DELETE ON tasks WHEN OLD.status = 'ready' BEGIN
    UPDATE queue_counts SET n = n - 1 WHERE status = 'ready';
END;
CREATE TRIGGER queue_counts_update AFTER UPDATE OF status ON tasks
WHEN (OLD.status = 'ready') <> (NEW.status = 'ready') BEGIN
    UPDATE queue_counts SET n = n + CASE WHEN NEW.status = 'ready' THEN 1 ELSE -1 END
    WHERE status = 'ready';
END;
