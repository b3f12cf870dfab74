-- Documents (boards, goals: JSON state with a version) and the event outbox.
CREATE TABLE documents (
    kind       TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    state      TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;

CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    type       TEXT NOT NULL,
    thread_id  TEXT,
    data       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX events_thread ON events (thread_id, id);
