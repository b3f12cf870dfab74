-- MCP tasks: the record of a tool call answered as a task (the MCP Tasks extension), kept
-- until its time to live runs out. The work itself is a queue task (`queue_task_id`): the
-- delegated work a call follows (kind `follow`), or the call itself, run by a worker of an
-- MCP server (kind `call`). `status` is `working` until the call's end is recorded:
-- `completed` with its `result`, `failed` with its protocol `error`, or `cancelled`.
CREATE TABLE mcp_tasks (
    id            TEXT PRIMARY KEY,
    thread_id     TEXT NOT NULL,
    agent_id      TEXT NOT NULL,
    tool          TEXT NOT NULL,
    queue_task_id TEXT NOT NULL,
    kind          TEXT NOT NULL,
    status        TEXT NOT NULL,
    result        TEXT,
    error         TEXT,
    created_at    REAL NOT NULL,
    updated_at    REAL NOT NULL,
    expires_at    REAL,
    poll_ms       INTEGER NOT NULL
);

CREATE INDEX mcp_tasks_expiry ON mcp_tasks (expires_at) WHERE expires_at IS NOT NULL;
