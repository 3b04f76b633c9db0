-- Timestamp, soft-delete and version columns: activeobjects-gen gives them roles (API.md §19).
-- Used by TimestampMappingTests (generated with --soft-delete, compiled and run in the test
-- module) and by .ci/check-generated.

-- Rails' timestamps, NOT NULL with a default: `Date = Date()`, stamped by the library.
CREATE TABLE authors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE posts (
    id INTEGER PRIMARY KEY,
    author_id INTEGER REFERENCES authors(id) ON DELETE CASCADE,
    title TEXT NOT NULL DEFAULT '',
    "CreatedAt" TIMESTAMP DEFAULT (datetime('now')),                  -- nullable: `Date? = nil`
    LastModified TEXT DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),  -- text, named as a change date
    inserted DATETIME NOT NULL DEFAULT (CURRENT_TIMESTAMP),            -- a second creation date: no role
    published_at DATETIME,                                             -- a plain date
    deleted_at DATETIME,                                               -- soft delete (--soft-delete)
    lock_version INTEGER NOT NULL DEFAULT 0                            -- Rails' optimistic locking
);

CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);

-- A join table whose other column the library fills in: still a many-to-many, and `add`
-- stamps its rows.
CREATE TABLE post_tags (
    post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    tag_id INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (post_id, tag_id)
);

-- A NOT NULL date without a default, and a default computed from now that is not now.
CREATE TABLE events (
    happened_at DATETIME NOT NULL,
    remind_at DATE NOT NULL DEFAULT (date('now', '+7 days')),
    note TEXT
);
