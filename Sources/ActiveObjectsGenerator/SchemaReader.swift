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
        /// What the column holds in the schema's database (nil when not read).
        var observed: ObservedValues? = nil
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
    /// `table`, `view`, `virtual` or `shadow` (from `PRAGMA table_list` when SQLite has it).
    var kind: String
    /// For a `shadow` table: the virtual table it belongs to.
    var shadowOwner: String? = nil
    var withoutRowID: Bool
    var columns: [ColumnInfo]
    var indexes: [IndexInfo]
    var foreignKeys: [ForeignKeyInfo]
    /// Why SQLite cannot read the view (a table or function it names is missing); nil when it can.
    var unreadable: String? = nil
}

/// Why a table gets no model.
struct SkipReason: Error, Equatable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads every table's description from an open database.
enum SchemaReader {
    /// The tables and views of `db`, by name, without SQLite's internal `sqlite_*` tables and
    /// the `_litestream_*` tables Litestream keeps in a database it replicates;
    /// `virtualTables` (those of a script, which are not run) are added to them.
    static func tables(in db: Database, adding virtualTables: [TableInfo] = []) throws -> [TableInfo] {
        let master = try db.rows("SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
            .map { (type: try $0["type"] as String, name: try $0["name"] as String, sql: (try $0["sql"] as String?) ?? "") }
            .filter {
                let name = $0.name.lowercased()
                return !name.hasPrefix("sqlite_") && !name.hasPrefix("_litestream_")
            }
        // PRAGMA table_list (SQLite 3.37) tells shadow and WITHOUT ROWID tables apart. It
        // connects every virtual table to its module, though, which the schema of a file must
        // not need; so with a virtual table around, and on older SQLites, the CREATE
        // statements are read instead.
        var kinds: [String: (kind: String, withoutRowID: Bool)] = [:]
        if !master.contains(where: { Self.isVirtual($0.sql) }) {
            for row in (try? db.rows("SELECT name, type, wr FROM pragma_table_list WHERE schema = 'main'")) ?? [] {
                kinds[try row["name"]] = (try row["type"], (try row["wr"] as Int) != 0)
            }
        }
        var tables = virtualTables.filter { virtual in !master.contains(where: { $0.name == virtual.name }) }
        for entry in master {
            let guessed = entry.type == "view" ? "view" : (Self.isVirtual(entry.sql) ? "virtual" : "table")
            let known = kinds[entry.name]
            var table = TableInfo(
                name: entry.name, sql: entry.sql, kind: known?.kind ?? guessed,
                withoutRowID: known?.withoutRowID ?? Self.declaresWithoutRowID(entry.sql.uppercased()),
                columns: [], indexes: [], foreignKeys: [])
            // The columns of a virtual table need its module, which may not be loaded.
            if table.kind == "table" {
                table.columns = try columns(of: entry.name, in: db)
                table.indexes = try indexes(of: entry.name, in: db)
                table.foreignKeys = try foreignKeys(of: entry.name, in: db)
            } else if table.kind == "view" {
                // A view's result columns (names, and the declared types of those that are
                // table columns), unless it names something missing.
                do {
                    table.columns = try columns(of: entry.name, in: db)
                    _ = try db.rows("SELECT * FROM \(quoted(entry.name)) LIMIT 0")
                } catch let error as DatabaseError {
                    table.unreadable = error.message
                }
            }
            if (table.kind == "table" || table.kind == "view") && table.unreadable == nil {
                try observe(&table, in: db)
            }
            tables.append(table)
        }
        markShadowTables(&tables, listed: !kinds.isEmpty)
        return tables.sorted { $0.name < $1.name }
    }

    /// `"name"`, quotes doubled.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Records which kinds of values each column holds (``ObservedValues``), in one pass over
    /// the rows of the table or view (SQLite does the counting): what a view's columns without
    /// a declared type are mapped from, and what tells a declared type that its values do not
    /// fit it.
    private static func observe(_ table: inout TableInfo, in db: Database) throws {
        let source = quoted(table.name)
        // In chunks: a statement has at most 2,000 result columns by default.
        let chunkSize = 100
        for start in stride(from: 0, to: table.columns.count, by: chunkSize) {
            let indices = Array(table.columns.indices[start..<min(start + chunkSize, table.columns.count)])
            var expressions = ["count(*)"]
            for index in indices {
                let column = quoted(table.columns[index].name)
                expressions += ObservedValues.aggregates(of: column)
            }
            let row: Row
            do {
                guard let first = try db.rows("SELECT \(expressions.joined(separator: ", ")) FROM \(source)").first else { return }
                row = first
            } catch let error as DatabaseError {
                // A view that names a missing function fails only now; a table is mapped from
                // its declared types alone.
                if table.kind == "view" { table.unreadable = error.message }
                return
            }
            let rowCount: Int = try row[0]
            for (position, index) in indices.enumerated() {
                let first = 1 + position * ObservedValues.aggregateCount
                let values = try (0..<ObservedValues.aggregateCount).map { try row[first + $0] as Int? }
                table.columns[index].observed = ObservedValues(rowCount: rowCount, aggregates: values)
            }
        }
    }

    private static func isVirtual(_ sql: String) -> Bool {
        sql.uppercased().hasPrefix("CREATE VIRTUAL")
    }

    /// Names the virtual table each shadow table belongs to (`docs_content` → `docs`). Without
    /// `PRAGMA table_list`, the tables named like the shadow tables of the FTS and R*Tree
    /// modules next to a virtual table are taken for its shadow tables.
    private static func markShadowTables(_ tables: inout [TableInfo], listed: Bool) {
        let virtual = tables.filter { $0.kind == "virtual" }.map(\.name).sorted { $0.count > $1.count }
        let suffixes: Set<String> = ["content", "docsize", "segdir", "segments", "stat", "data", "idx", "config",
                                     "node", "parent", "rowid"]
        for index in tables.indices where tables[index].kind == "shadow" || (!listed && tables[index].kind == "table") {
            let name = tables[index].name
            guard let owner = virtual.first(where: { name.lowercased().hasPrefix($0.lowercased() + "_") }) else { continue }
            if !listed && !suffixes.contains(String(name.dropFirst(owner.count + 1)).lowercased()) { continue }
            tables[index].kind = "shadow"
            tables[index].shadowOwner = owner
        }
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
