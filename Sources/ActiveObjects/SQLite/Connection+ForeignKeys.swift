import CActiveObjectsSupport
import CSQLite

extension Connection {
    /// Which connection setting `sqlite3_db_config` changes.
    private enum ConfigFlag {
        /// Foreign-key enforcement (`SQLITE_DBCONFIG_ENABLE_FKEY`).
        case foreignKeys
        /// `legacy_alter_table` (`SQLITE_DBCONFIG_LEGACY_ALTER_TABLE`).
        case legacyAlterTable
    }

    /// Sets a flag (`value` 1 or 0; -1 only reads it) and returns its state afterwards.
    /// - Throws: ``DatabaseError`` when SQLite refuses, ``ActiveObjectError/databaseClosed``.
    private func configure(_ flag: ConfigFlag, _ value: Int32) throws -> Bool {
        let handle = try checkOpen()
        var now: Int32 = -1
        let code: Int32
        switch flag {
        case .foreignKeys: code = activeobjects_config_foreign_keys(UnsafeMutableRawPointer(handle), value, &now)
        case .legacyAlterTable: code = activeobjects_config_legacy_alter_table(UnsafeMutableRawPointer(handle), value, &now)
        }
        guard code == SQLITE_OK else { throw DatabaseError(code: code, connection: handle, sql: nil) }
        return now != 0
    }

    /// Whether SQLite enforces foreign keys on this connection now (what `PRAGMA foreign_keys`
    /// reports), read without running a statement.
    /// - Throws: ``ActiveObjectError/databaseClosed``, ``DatabaseError``.
    var enforcesForeignKeys: Bool {
        get throws { try configure(.foreignKeys, -1) }
    }

    /// Runs `body` with foreign-key enforcement off, then puts back the state it found, also
    /// when `body` throws. Unlike `PRAGMA foreign_keys = OFF` (a no-op inside a transaction)
    /// it takes effect inside a transaction too: a table rebuild that drops a parent table
    /// inside the caller's transaction or a migration step deletes no child row through
    /// `ON DELETE CASCADE` (<https://www.sqlite.org/lang_altertable.html#otheralter>).
    ///
    /// The caller checks the constraints itself (`PRAGMA foreign_key_check`) before it commits.
    /// - Throws: what `body` throws; ``DatabaseError`` when the setting cannot be changed.
    func withoutForeignKeyEnforcement<T>(_ body: () throws -> T) throws -> T {
        guard try configure(.foreignKeys, -1) else { return try body() }
        guard try !configure(.foreignKeys, 0) else {
            throw DatabaseError(extendedResultCode: .error, message: "foreign-key enforcement could not be turned off")
        }
        defer { _ = try? configure(.foreignKeys, 1) }
        return try body()
    }

    /// Runs `body` with `legacy_alter_table` on, then puts back the state it found, also when
    /// `body` throws: `ALTER TABLE … RENAME TO` then leaves the views and triggers that name the
    /// table alone — neither rewritten nor checked — which a rebuild needs when it renames the
    /// new table to the name of the one it dropped.
    /// - Throws: what `body` throws; ``DatabaseError`` when the setting cannot be changed.
    func withLegacyAlterTable<T>(_ body: () throws -> T) throws -> T {
        guard try !configure(.legacyAlterTable, -1) else { return try body() }
        guard try configure(.legacyAlterTable, 1) else {
            throw DatabaseError(extendedResultCode: .error, message: "legacy_alter_table could not be turned on")
        }
        defer { _ = try? configure(.legacyAlterTable, 0) }
        return try body()
    }
}
