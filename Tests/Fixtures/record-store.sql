-- A record store, for GeneratedModelTests: activeobjects-gen generates
-- Tests/ActiveObjectsTests/Generated/RecordStoreModels.swift from this file (see the header of
-- that file for the command), and the tests use those models end to end.
-- Record labels keyed by a TEXT code, albums with an optional TEXT foreign key, tracks,
-- playlists and the pure join table playlist_tracks (composite key), listeners' devices keyed by
-- a UUID, a keyless play log, and per-album statistics kept WITHOUT ROWID.

CREATE TABLE labels (
    code TEXT PRIMARY KEY NOT NULL,          -- 'BLUENOTE'
    name TEXT NOT NULL
);

CREATE TABLE artists (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE TABLE albums (
    id INTEGER PRIMARY KEY,
    artist_id INTEGER NOT NULL REFERENCES artists(id) ON DELETE CASCADE,
    label_code TEXT REFERENCES labels(code) ON DELETE SET NULL,
    title TEXT NOT NULL,
    year INTEGER
);

CREATE TABLE tracks (
    id INTEGER PRIMARY KEY,
    album_id INTEGER REFERENCES albums(id) ON DELETE SET NULL,
    title TEXT NOT NULL,
    seconds INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE playlists (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE TABLE playlist_tracks (
    playlist_id INTEGER NOT NULL REFERENCES playlists(id) ON DELETE CASCADE,
    track_id INTEGER NOT NULL REFERENCES tracks(id) ON DELETE CASCADE,
    PRIMARY KEY (playlist_id, track_id)
);

CREATE TABLE devices (
    device_uuid UUID PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL
);

-- No declared key: rows are told apart by their rowid.
CREATE TABLE plays (
    device_uuid UUID NOT NULL REFERENCES devices(device_uuid) ON DELETE CASCADE,
    track_id INTEGER NOT NULL REFERENCES tracks(id) ON DELETE CASCADE,
    played_at DATETIME NOT NULL
);

CREATE TABLE album_stats (
    album_id INTEGER NOT NULL REFERENCES albums(id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    plays INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (album_id, month)
) WITHOUT ROWID;
