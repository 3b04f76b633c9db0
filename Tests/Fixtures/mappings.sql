-- Every mapping activeobjects-gen knows, and the tables it must refuse.
-- Used by GeneratorEndToEndTests and compiled by .ci/check-generated.

CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    login TEXT NOT NULL,
    "e-mail" TEXT,                          -- not a Swift identifier
    "2fa" BOOLEAN NOT NULL DEFAULT FALSE,   -- starts with a digit
    "class" TEXT NOT NULL DEFAULT 'user',   -- Swift keywords
    "where" TEXT,
    "self" TEXT,                            -- unusable even in backticks
    description TEXT,                       -- a member of ActiveObject
    firstName TEXT,                         -- already camelCase
    first_name TEXT,                        -- maps to the same property name
    UNIQUE (login, "e-mail")
);

CREATE TABLE every_types (
    id INTEGER PRIMARY KEY,
    an_int INT NOT NULL DEFAULT -5,
    a_big BIGINT NOT NULL DEFAULT 0x10,
    a_real REAL NOT NULL DEFAULT 1.5,
    a_float FLOAT NOT NULL DEFAULT (2),
    a_double DOUBLE PRECISION,
    a_text TEXT NOT NULL DEFAULT 'it''s "quoted" \ ok',
    a_varchar VARCHAR(10) NOT NULL DEFAULT 42,
    a_char CHARACTER(5),
    a_clob CLOB,
    a_blob BLOB NOT NULL DEFAULT X'CAFE',
    an_empty_blob BLOB NOT NULL DEFAULT X'',
    a_date DATE NOT NULL DEFAULT '2000-01-01',
    a_datetime DATETIME DEFAULT CURRENT_TIMESTAMP,
    a_timestamp TIMESTAMP NOT NULL DEFAULT (datetime('now')),
    a_boolean BOOLEAN NOT NULL DEFAULT TRUE,
    a_bool BOOL,
    a_numeric NUMERIC NOT NULL DEFAULT 7,
    a_decimal DECIMAL(10, 2) NOT NULL DEFAULT 0.10,
    untyped,
    a_null_default INTEGER DEFAULT NULL,
    database TEXT,                          -- names of ActiveObject class members
    table_name TEXT,
    type TEXT,
    a_time TIME,                            -- not a known type
    a_json JSON
);

-- Self reference, a primary key not named id, a single-column partial and expression index.
CREATE TABLE categories (
    category_id INTEGER PRIMARY KEY,
    parent_id INTEGER REFERENCES categories(category_id) ON DELETE SET NULL,
    title TEXT NOT NULL,
    slug TEXT NOT NULL,
    position INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX categories_slug_partial ON categories(slug) WHERE position > 0;
CREATE INDEX categories_lower_title ON categories(lower(title));
CREATE UNIQUE INDEX categories_slug ON categories(slug);

-- Two foreign keys to the same parent; one non-optional, one RESTRICT; one to a skipped table.
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    sender_id INTEGER NOT NULL REFERENCES users(id) ON DELETE RESTRICT,
    recipient_id INTEGER REFERENCES users ON DELETE CASCADE ON UPDATE CASCADE,
    code_key TEXT REFERENCES codes(code),
    sender_login TEXT REFERENCES users(login),
    body TEXT NOT NULL DEFAULT ''
);
CREATE INDEX messages_sender ON messages(sender_id);

-- Tables whose class names would be standard or library types: the classes get `Record`
-- (DataRecord, SendableRecord, ProtocolRecord, TaskRecord, RowRecord), the relations keep the
-- tables' names (`project.tasks`). .ci/check-generated compiles mappings-module.swift, which
-- uses those types, next to them.
CREATE TABLE data (id INTEGER PRIMARY KEY, payload BLOB);
CREATE TABLE sendable (id INTEGER PRIMARY KEY, note TEXT);
CREATE TABLE "Protocol" (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE tasks (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id), title TEXT NOT NULL);
CREATE TABLE rows (id INTEGER PRIMARY KEY, sendable_id INTEGER REFERENCES sendable, protocol INTEGER REFERENCES "Protocol");

-- Keys other than a rowid alias: a natural key (nullable as SQLite allows, non-optional in the
-- model), composite and single keys WITHOUT ROWID, no key at all, and integer keys that do not
-- alias the rowid.
CREATE TABLE codes (code TEXT PRIMARY KEY, label TEXT);
CREATE TABLE pairs (a INTEGER, b INTEGER, PRIMARY KEY (a, b)) WITHOUT ROWID;
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER) WITHOUT ROWID;
CREATE TABLE log_lines (line TEXT);
CREATE TABLE descending (id INTEGER PRIMARY KEY DESC, note TEXT);
CREATE TABLE int_key (id INT PRIMARY KEY, note TEXT);

-- Foreign keys of every type, and those that cannot be relations.
CREATE TABLE code_uses (
    id INTEGER PRIMARY KEY,
    code REFERENCES codes,                          -- untyped, to a TEXT key: typed String
    counter_name INTEGER REFERENCES counters(name), -- declared INTEGER, to a TEXT key: String too
    pair_a INTEGER REFERENCES pairs(a),             -- one column of a composite key
    pair_b INTEGER,
    line INTEGER REFERENCES log_lines,              -- a table without a primary key
    token UUID NOT NULL DEFAULT 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F',
    FOREIGN KEY (pair_a, pair_b) REFERENCES pairs (a, b)
);

-- No model: a column named rowid hides the rowid, with or without a declared key; a virtual
-- table. Columns named _rowid_ and oid are mapped (the library never uses those names).
CREATE TABLE hidden_rowid (rowid TEXT, value TEXT);
CREATE TABLE keyed_rowid (code TEXT PRIMARY KEY, rowid INTEGER);
CREATE TABLE other_rowid_names (code TEXT PRIMARY KEY, _rowid_ TEXT, oid INTEGER);
CREATE VIRTUAL TABLE notes_search USING fts5(body);

-- Not tables: a view is listed as skipped, a trigger ignored.
CREATE VIEW user_logins AS SELECT login FROM users;
CREATE TRIGGER users_touch AFTER UPDATE ON users BEGIN
    UPDATE users SET login = lower(login) WHERE id = new.id;
    SELECT 1;
END;
