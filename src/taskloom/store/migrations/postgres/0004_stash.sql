-- Context guard: stashed tool results (per thread), their eviction log, the summarizer's
-- per-thread circuit breaker and its summary cache.
CREATE TABLE stash_results (
    thread_id    TEXT    NOT NULL,
    result_id    TEXT    NOT NULL,
    tool_name    TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    is_json      BIGINT  NOT NULL,
    tokens       BIGINT  NOT NULL,
    bytes        BIGINT  NOT NULL,
    lines        BIGINT  NOT NULL,
    encoding     TEXT    NOT NULL,
    placeholder  TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    PRIMARY KEY (thread_id, result_id)
);

CREATE INDEX stash_results_age ON stash_results (thread_id, created_at);
CREATE INDEX stash_results_expiry ON stash_results (expires_at);

CREATE TABLE stash_log (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id  TEXT NOT NULL,
    result_id  TEXT NOT NULL,
    action     TEXT NOT NULL,
    detail     TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX stash_log_thread ON stash_log (thread_id, id);

CREATE TABLE stash_breaker (
    thread_id  TEXT    PRIMARY KEY,
    failures   BIGINT  NOT NULL,
    opened_at  TEXT,
    last_error TEXT,
    updated_at TEXT    NOT NULL
);

CREATE TABLE stash_summaries (
    cache_key  TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL,
    summary    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
