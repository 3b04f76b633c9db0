extension Database {
    /// Whether `table` has a rowid in this database (false for a `WITHOUT ROWID` table),
    /// learned once per table with `PRAGMA table_list` and remembered. A table that does not
    /// exist yet counts as having one, and is looked up again next time.
    func tableHasRowID(_ table: String) -> Bool {
        let key = table.lowercased()
        if let known = tableLayouts.withLock({ $0[key] }) { return known }
        let found: Bool? = withFreeConnection { connection in
            let rows = try connection.rows("SELECT wr, type FROM pragma_table_list WHERE name = ? COLLATE NOCASE AND schema = 'main'",
                                           [.text(table)])
            guard let row = rows.first else { return nil }
            // A view has no rowid (SQLite gives NULL for it, or refuses the name).
            return try row[0] as Int == 0 && row[1] as String != "view"
        }
        guard let found else { return true }
        tableLayouts.withLock { $0[key] = found }
        return found
    }

    /// Whether `column` is the table's only primary-key column and SQLite's alias for the rowid
    /// (an `INTEGER PRIMARY KEY`: such a key has no index of its own, every other primary key
    /// has one), so that changing its value moves the row's rowid too. Learned once per table and column (in the same memory as
    /// ``tableHasRowID(_:)``); a table that does not exist yet is looked up again next time.
    func isRowIDAlias(_ column: String, of table: String) -> Bool {
        let key = "\u{0}alias\u{0}\(table.lowercased())\u{0}\(column.lowercased())"
        if let known = tableLayouts.withLock({ $0[key] }) { return known }
        guard tableHasRowID(table) else { return false }
        let found: Bool? = withFreeConnection { connection in
            let keys = try connection.rows("SELECT name, type FROM pragma_table_info(?) WHERE pk > 0", [.text(table)])
            guard !keys.isEmpty else {
                // No key at all: the table may not exist yet.
                let exists = try connection.rows("SELECT 1 FROM pragma_table_list WHERE name = ? COLLATE NOCASE AND schema = 'main'",
                                                 [.text(table)])
                return exists.isEmpty ? nil : false
            }
            guard keys.count == 1 else { return false }
            let name: String = try keys[0]["name"]
            let type: String = try keys[0]["type"]
            guard name.lowercased() == column.lowercased(), type.uppercased() == "INTEGER" else { return false }
            // `INTEGER PRIMARY KEY DESC` is not an alias: its key has an index, like any other.
            let keyIndexes = try connection.rows("SELECT 1 FROM pragma_index_list(?) WHERE origin = 'pk'", [.text(table)])
            return keyIndexes.isEmpty
        }
        guard let found else { return false }
        tableLayouts.withLock { $0[key] = found }
        return found
    }

    /// Whether `name` is a view that has no column `column` (a read-only rowid model's key):
    /// its objects then have no ``ActiveObject/id``. Learned once per view and column (in the
    /// same memory as ``tableHasRowID(_:)``); false for tables, and for a name that does not
    /// exist yet (looked up again next time).
    func isViewWithoutColumn(_ name: String, _ column: String) -> Bool {
        let key = "\u{0}view\u{0}\(name.lowercased())\u{0}\(column.lowercased())"
        if let known = tableLayouts.withLock({ $0[key] }) { return known }
        let found: Bool? = withFreeConnection { connection in
            let rows = try connection.rows("SELECT type FROM pragma_table_list WHERE name = ? COLLATE NOCASE AND schema = 'main'",
                                           [.text(name)])
            guard let row = rows.first else { return nil }
            guard try row[0] as String == "view" else { return false }
            let columns = try connection.rows("SELECT 1 FROM pragma_table_info(?) WHERE name = ? COLLATE NOCASE",
                                              [.text(name), .text(column)])
            return columns.isEmpty
        }
        guard let found else { return false }
        tableLayouts.withLock { $0[key] = found }
        return found
    }

    /// Runs a layout lookup on a connection free right now (see
    /// ``withAnyFreeConnection(_:)``); nil when no connection answered.
    private func withFreeConnection<T>(_ body: (Connection) throws -> T?) -> T? {
        (try? withAnyFreeConnection { access in try body(access.connection) }) ?? nil
    }

    /// Forgets what ``tableHasRowID(_:)`` learned (after the schema changed).
    func forgetTableLayouts() {
        tableLayouts.withLock { $0.removeAll() }
    }
}
