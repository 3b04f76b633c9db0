import CSQLite

extension Database {
    /// How far ``checkpoint(_:)-87d5z`` goes (<https://www.sqlite.org/c3ref/wal_checkpoint_v2.html>).
    public enum CheckpointMode: Sendable, Hashable {
        /// Copies the WAL frames no reader still needs into the database file; waits for
        /// nothing (and fails with `busy` at once if another connection is checkpointing).
        /// What the automatic checkpoints do.
        case passive
        /// Waits (up to the busy timeout) for the writer's lock and for the readers of older
        /// frames, then copies every frame.
        case full
        /// ``full``, then waits for every reader to leave the WAL, so that the next write
        /// starts it from the beginning.
        case restart
        /// ``restart``, then truncates the WAL file to zero bytes. Never use it, nor
        /// ``restart``, while a replication tool such as Litestream ships the WAL: it restarts
        /// the WAL under the tool, which then copies the whole database again.
        case truncate

        var sqliteMode: Int32 {
            switch self {
            case .passive: SQLITE_CHECKPOINT_PASSIVE
            case .full: SQLITE_CHECKPOINT_FULL
            case .restart: SQLITE_CHECKPOINT_RESTART
            case .truncate: SQLITE_CHECKPOINT_TRUNCATE
            }
        }
    }

    /// What a ``Database/checkpoint(_:)-87d5z`` found and did.
    public struct CheckpointResult: Sendable, Hashable {
        /// How many frames the WAL held (0 after a ``CheckpointMode/truncate``; 0 for a
        /// database without a WAL).
        public let walFrameCount: Int
        /// How many of them are now in the database file.
        public let checkpointedFrameCount: Int
    }

    /// Copies the frames of the write-ahead log into the database file, on the writer.
    ///
    /// ```swift
    /// let result = try db.checkpoint(.truncate)   // the WAL file is then empty
    /// ```
    ///
    /// The writer checkpoints by itself (passively) unless
    /// ``Options/checkpointsAutomatically`` is false; call this when it is, and nobody else
    /// (Litestream) checkpoints, or before copying the database file with other tools. A
    /// database without a WAL (in memory, a rollback-journal mode) has nothing to do: the
    /// result counts 0 frames, and SQLite is not asked.
    ///
    /// - Throws: ``ActiveObjectError/misuse(_:)`` inside a transaction or a `read` block, while
    ///   a cursor or a statement of the writer connection is still open (with
    ///   ``Options/maximumReaderCount`` 0 a cursor reads there), and on a database opened
    ///   ``Options/readOnly`` (its connections cannot write the file); ``DatabaseError`` `busy`
    ///   when another connection or process is checkpointing at that moment (Litestream does,
    ///   every 1,000 pages: try again later), or when a ``CheckpointMode/full``,
    ///   ``CheckpointMode/restart`` or ``CheckpointMode/truncate`` checkpoint could not get
    ///   its locks within the busy timeout (a reader of another connection or process kept its
    ///   snapshot) — what could be copied was copied; ``ActiveObjectError/databaseClosed``
    ///   after ``close()``.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) throws -> CheckpointResult {
        try withAccess(.write) { access in
            let connection = access.connection
            let handle = try connection.checkOpen()
            guard sqlite3_get_autocommit(handle) != 0 else {
                throw ActiveObjectError.misuse("checkpoint() cannot run inside a transaction or a read block")
            }
            // Read now, not at open: raw SQL may have changed the journal mode since.
            guard case .text(let journalMode)? = try connection.scalarValue("PRAGMA main.journal_mode"),
                  journalMode.lowercased() == "wal" else {
                return CheckpointResult(walFrameCount: 0, checkpointedFrameCount: 0)
            }
            guard !options.readOnly else {
                throw ActiveObjectError.misuse("checkpoint() needs a database opened for writing: this one was opened with options.readOnly")
            }
            var frames: Int32 = 0
            var copied: Int32 = 0
            let code = sqlite3_wal_checkpoint_v2(handle, nil, mode.sqliteMode, &frames, &copied)
            if code & 0xFF == SQLITE_LOCKED {
                throw ActiveObjectError.misuse(
                    "checkpoint() cannot run while a cursor or statement of the writer connection is open: finish or close it first")
            }
            guard code == SQLITE_OK else { throw DatabaseError(code: code, connection: handle, sql: nil) }
            // SQLite answers -1 and -1 for a database that is not in WAL mode.
            return CheckpointResult(walFrameCount: Int(max(frames, 0)), checkpointedFrameCount: Int(max(copied, 0)))
        }
    }

    /// Async form of ``checkpoint(_:)-87d5z``: runs on the database's writer thread.
    /// - Throws: as ``checkpoint(_:)-87d5z``.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) async throws -> CheckpointResult {
        try await perform(.writing) { try self.checkpoint(mode) }
    }
}
