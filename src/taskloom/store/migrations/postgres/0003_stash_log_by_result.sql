-- A result's stash log lines, found by its id: a turn's placements (by call id) and why a
-- result is gone (its newest line) read only that result's lines, not every line its thread
-- has logged.
CREATE INDEX stash_log_result ON stash_log (thread_id, result_id, id);
