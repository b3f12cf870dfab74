-- The columns SQLite's task events are written in since its migration 0011 (a change's
-- fields as the task has them, `data` a JSON `null`), so that every backend reads events with
-- one query and a database copied from SQLite keeps them. PostgreSQL's trigger still writes
-- the JSON array, which readers turn into the same shape.
ALTER TABLE events ADD COLUMN status TEXT;
ALTER TABLE events ADD COLUMN claimed_by TEXT;
ALTER TABLE events ADD COLUMN pid BIGINT;
ALTER TABLE events ADD COLUMN host TEXT;
ALTER TABLE events ADD COLUMN claimed_at DOUBLE PRECISION;
ALTER TABLE events ADD COLUMN lease_expires_at DOUBLE PRECISION;
ALTER TABLE events ADD COLUMN attempts INTEGER;
ALTER TABLE events ADD COLUMN completed_at DOUBLE PRECISION;
ALTER TABLE events ADD COLUMN result TEXT;
ALTER TABLE events ADD COLUMN last_error TEXT;
ALTER TABLE events ADD COLUMN changed_at DOUBLE PRECISION;
