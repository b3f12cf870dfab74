-- Tasks whose `expires_at` passed before anyone claimed them are canceled by the expiry sweep
-- (queue_sql.EXPIRE), so they free their dedup key and can be pruned; this index finds them
-- without reading every ready task. Only tasks with a TTL are in it.
CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE status = 'ready' AND expires_at IS NOT NULL;
