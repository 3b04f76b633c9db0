-- The ormapper example: groups, the people in them, their profiles and the tags on people.
-- activeobjects-gen turns this script into model classes (see .ci/check-generated).

CREATE TABLE groups (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    "default" BOOLEAN NOT NULL DEFAULT 0,   -- a Swift keyword
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE people (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    group_id INTEGER REFERENCES groups(id) ON DELETE CASCADE,
    first_name VARCHAR(80) NOT NULL DEFAULT '',
    last_name VARCHAR(80) NOT NULL DEFAULT '',
    email TEXT,
    age INTEGER NOT NULL DEFAULT 0,
    income REAL NOT NULL DEFAULT 0.0,
    active BOOLEAN NOT NULL DEFAULT 1,
    birthdate DATE,                         -- nullable date
    photo BLOB,                             -- nullable blob
    "order" INTEGER NOT NULL DEFAULT 0,     -- an SQL keyword
    balance DECIMAL(10, 2) NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX people_email ON people(email);
CREATE INDEX people_age ON people(age);
CREATE INDEX people_name ON people(last_name, first_name);  -- composite

-- Tags on people: a composite primary key (a model with `primaryKeys`).
CREATE TABLE people_tags (
    person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (person_id, tag)
);

-- A profile per person: its key is its foreign key (a one-to-one table: `HasOne`).
CREATE TABLE profiles (
    person_id INTEGER PRIMARY KEY REFERENCES people(id) ON DELETE CASCADE,
    bio TEXT NOT NULL DEFAULT ''
);
