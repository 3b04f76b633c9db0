extension Database {
    /// Whether `table` has a rowid in this database (false for a `WITHOUT ROWID` table),
    /// learned once per table with `PRAGMA table_list` and remembered. A table that does not
    /// exist yet counts as having one, and is looked up again next time.
    func tableHasRowID(_ table: String) -> Bool {
        let key = table.lowercased()
        if let known = tableLayouts.withLock({ $0[key] }) { return known }
        let found: Bool? = try? withReader { connection in
            let rows = try connection.rows("SELECT wr FROM pragma_table_list WHERE name = ? COLLATE NOCASE AND schema = 'main'",
                                           [.text(table)])
            guard let row = rows.first else { return nil }
            return try row[0] as Int == 0
        } ?? nil
        guard let found else { return true }
        tableLayouts.withLock { $0[key] = found }
        return found
    }

    /// Forgets what ``tableHasRowID(_:)`` learned (after the schema changed).
    func forgetTableLayouts() {
        tableLayouts.withLock { $0.removeAll() }
    }
}
