import ActiveObjects

/// One table as SQLite describes it (`sqlite_master` and the schema pragmas).
struct TableInfo: Equatable {
    struct ColumnInfo: Equatable {
        var name: String
        /// The declared type as written (`VARCHAR(80)`), empty when none.
        var declaredType: String
        var notNull: Bool
        /// The `DEFAULT` expression as written, nil when none.
        var defaultSQL: String?
        /// 1-based position in the primary key, 0 when not part of it.
        var primaryKeyPosition: Int
    }

    struct IndexInfo: Equatable {
        var name: String
        var unique: Bool
        /// `c` (CREATE INDEX), `u` (UNIQUE constraint) or `pk`.
        var origin: String
        var partial: Bool
        /// The indexed columns; nil for an expression.
        var columns: [String?]
        /// The `CREATE INDEX` statement; nil for the automatic indexes of constraints.
        var sql: String?
    }

    struct ForeignKeyInfo: Equatable {
        var columns: [String]
        var parentTable: String
        /// The referenced columns; nil entries mean "the parent's primary key".
        var parentColumns: [String?]
        var onDelete: String
        var onUpdate: String
    }

    var name: String
    var sql: String
    /// `table`, `virtual` or `shadow` (from `PRAGMA table_list` when SQLite has it).
    var kind: String
    var withoutRowID: Bool
    var columns: [ColumnInfo]
    var indexes: [IndexInfo]
    var foreignKeys: [ForeignKeyInfo]

    /// The rowid-alias primary key (`id INTEGER PRIMARY KEY`), or why there is none.
    var integerPrimaryKey: Result<String, SkipReason> {
        if kind == "virtual" { return .failure(SkipReason("virtual table")) }
        if kind == "shadow" { return .failure(SkipReason("internal table of a virtual table")) }
        let keys = columns.filter { $0.primaryKeyPosition > 0 }.sorted { $0.primaryKeyPosition < $1.primaryKeyPosition }
        if keys.count > 1 {
            return .failure(SkipReason("composite primary key (\(keys.map(\.name).joined(separator: ", ")))"))
        }
        if withoutRowID { return .failure(SkipReason("WITHOUT ROWID table")) }
        guard let key = keys.first else { return .failure(SkipReason("no primary key")) }
        // Only a column declared exactly INTEGER aliases the rowid
        // (https://www.sqlite.org/lang_createtable.html#rowid); `INTEGER PRIMARY KEY DESC`
        // does not either, and shows up as an automatic "pk" index.
        guard key.declaredType.uppercased() == "INTEGER" else {
            let declared = key.declaredType.isEmpty ? "no type" : key.declaredType
            return .failure(SkipReason("primary key \(key.name) is \(declared), not an INTEGER PRIMARY KEY"))
        }
        guard !indexes.contains(where: { $0.origin == "pk" }) else {
            return .failure(SkipReason("primary key \(key.name) does not alias the rowid (INTEGER PRIMARY KEY DESC?)"))
        }
        return .success(key.name)
    }
}

/// Why a table gets no model.
struct SkipReason: Error, Equatable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads every table's description from an open database.
enum SchemaReader {
    /// The tables of `db`, by name, without SQLite's internal `sqlite_*` tables.
    static func tables(in db: Database) throws -> [TableInfo] {
        // PRAGMA table_list (SQLite 3.37) tells virtual, shadow and WITHOUT ROWID tables
        // apart; older SQLites lack it, and the CREATE statement is read instead.
        var kinds: [String: (kind: String, withoutRowID: Bool)] = [:]
        let list = (try? db.rows("SELECT name, type, wr FROM pragma_table_list WHERE schema = 'main'")) ?? []
        for row in list {
            let name: String = try row["name"]
            kinds[name] = (try row["type"], (try row["wr"] as Int) != 0)
        }
        var tables: [TableInfo] = []
        let master = try db.rows("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        for row in master {
            let name: String = try row["name"]
            if name.lowercased().hasPrefix("sqlite_") { continue }
            let sql: String = (try row["sql"] as String?) ?? ""
            let upper = sql.uppercased()
            let known = kinds[name]
            var table = TableInfo(
                name: name, sql: sql,
                kind: known?.kind ?? (upper.hasPrefix("CREATE VIRTUAL") ? "virtual" : "table"),
                withoutRowID: known?.withoutRowID ?? Self.declaresWithoutRowID(upper),
                columns: [], indexes: [], foreignKeys: [])
            // The columns of a virtual table need its module, which may not be loaded.
            if table.kind == "table" {
                table.columns = try columns(of: name, in: db)
                table.indexes = try indexes(of: name, in: db)
                table.foreignKeys = try foreignKeys(of: name, in: db)
            }
            tables.append(table)
        }
        return tables.sorted { $0.name < $1.name }
    }

    private static func declaresWithoutRowID(_ upperSQL: String) -> Bool {
        guard let close = upperSQL.lastIndex(of: ")") else { return false }
        let options = upperSQL[upperSQL.index(after: close)...].split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "," })
        return options.contains("ROWID") && options.contains("WITHOUT")
    }

    private static func columns(of table: String, in db: Database) throws -> [TableInfo.ColumnInfo] {
        try db.rows("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid", [table]).map { row in
            TableInfo.ColumnInfo(
                name: try row["name"], declaredType: try row["type"], notNull: (try row["notnull"] as Int) != 0,
                defaultSQL: try row["dflt_value"], primaryKeyPosition: try row["pk"])
        }
    }

    private static func indexes(of table: String, in db: Database) throws -> [TableInfo.IndexInfo] {
        var result: [TableInfo.IndexInfo] = []
        for row in try db.rows("SELECT name, \"unique\", origin, partial FROM pragma_index_list(?)", [table]) {
            let name: String = try row["name"]
            let columns = try db.rows("SELECT name FROM pragma_index_info(?) ORDER BY seqno", [name]).map { try $0["name"] as String? }
            let sql: String? = try db.scalar("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", [name])
            result.append(TableInfo.IndexInfo(
                name: name, unique: (try row["unique"] as Int) != 0, origin: try row["origin"],
                partial: (try row["partial"] as Int) != 0, columns: columns, sql: sql))
        }
        return result.sorted { $0.name < $1.name }
    }

    private static func foreignKeys(of table: String, in db: Database) throws -> [TableInfo.ForeignKeyInfo] {
        var byID: [Int: TableInfo.ForeignKeyInfo] = [:]
        let rows = try db.rows("SELECT id, seq, \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq", [table])
        for row in rows {
            let id: Int = try row["id"]
            var key: TableInfo.ForeignKeyInfo
            if let known = byID[id] {
                key = known
            } else {
                key = TableInfo.ForeignKeyInfo(
                    columns: [], parentTable: try row["table"], parentColumns: [],
                    onDelete: try row["on_delete"], onUpdate: try row["on_update"])
            }
            key.columns.append(try row["from"])
            key.parentColumns.append(try row["to"])
            byID[id] = key
        }
        // In the order of their first column in the table.
        let names = try columns(of: table, in: db).map { $0.name.lowercased() }
        let position = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        func order(_ entry: (key: Int, value: TableInfo.ForeignKeyInfo)) -> (Int, Int) {
            (position[entry.value.columns[0].lowercased()] ?? 0, entry.key)
        }
        return byID.sorted { order($0) < order($1) }.map(\.value)
    }
}
