-- A music library: artists, albums, tracks, genres keyed by code, playlists and the
-- playlist_track join table, tags joined to tracks by a keyless table, favourites (a join with
-- a payload: a model of its own) and a keyless play history.
-- Used by GeneratorEndToEndTests (music.swift.expected) and compiled by .ci/check-generated.

CREATE TABLE artists (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE TABLE albums (
    id INTEGER PRIMARY KEY,
    artist_id INTEGER NOT NULL REFERENCES artists(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    released DATE
);

CREATE TABLE genres (
    code TEXT PRIMARY KEY NOT NULL,             -- 'jazz'
    name TEXT NOT NULL
);

CREATE TABLE tracks (
    id INTEGER PRIMARY KEY,
    album_id INTEGER REFERENCES albums(id) ON DELETE SET NULL,
    genre_code TEXT REFERENCES genres(code),
    title TEXT NOT NULL,
    track_number INTEGER,
    duration_ms INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE playlists (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    created_at DATETIME
);

CREATE TABLE playlist_track (
    playlist_id INTEGER NOT NULL REFERENCES playlists(id) ON DELETE CASCADE,
    track_id INTEGER NOT NULL REFERENCES tracks(id) ON DELETE CASCADE,
    PRIMARY KEY (playlist_id, track_id)
);
CREATE INDEX playlist_track_track ON playlist_track(track_id);

CREATE TABLE tags (
    name TEXT PRIMARY KEY NOT NULL
);

-- No primary key: still a pure join table (its rows are told apart by their rowid).
CREATE TABLE track_tags (
    track_id INTEGER NOT NULL REFERENCES tracks(id) ON DELETE CASCADE,
    tag_name TEXT NOT NULL REFERENCES tags(name) ON DELETE CASCADE ON UPDATE CASCADE
);

-- A join with a payload: a model of its own, not a many-to-many.
CREATE TABLE favorites (
    user_name TEXT NOT NULL,
    track_id INTEGER NOT NULL REFERENCES tracks(id) ON DELETE CASCADE,
    added_at DATETIME NOT NULL,
    PRIMARY KEY (user_name, track_id)
);

CREATE TABLE play_history (
    track_id INTEGER REFERENCES tracks(id) ON DELETE SET NULL,
    played_at DATETIME NOT NULL
);
