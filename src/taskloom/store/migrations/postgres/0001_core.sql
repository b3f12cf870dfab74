-- Documents (boards, goals: JSON state with a version) and the event outbox.
-- Text keys use the "C" collation so ORDER BY matches SQLite's byte order on every server.
-- JSON is stored as `json` (validated, kept verbatim: same bytes as SQLite's TEXT column).
CREATE TABLE documents (
    kind       TEXT COLLATE "C" NOT NULL,
    key        TEXT COLLATE "C" NOT NULL,
    version    BIGINT NOT NULL,
    state      JSON   NOT NULL,
    updated_at TEXT   NOT NULL,
    PRIMARY KEY (kind, key)
);

-- Ids come from the sequence while the appending transaction holds the outbox lock shared;
-- readers take it exclusively for an instant to find the id below which every event has
-- settled (see store/postgres.py), so a reader resuming after id N never skips an event that
-- commits late with a smaller id.
CREATE TABLE events (
    id         BIGSERIAL PRIMARY KEY,
    type       TEXT COLLATE "C" NOT NULL,
    thread_id  TEXT COLLATE "C",
    data       JSON NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX events_thread ON events (thread_id, id);
