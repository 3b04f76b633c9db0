import CSQLite
import Foundation

/// ``Database/Options/reportsFullScans``: one per ``Database`` whose options set it, shared by
/// every connection of that database (the writer and the readers).
///
/// ``Connection/prepare(_:persistent:checksPlan:)`` hands it each statement it compiles; a
/// statement-cache hit never reaches it, and without the option the prepare path pays one nil
/// check. The first time the database compiles a given SQL text that SQLite can plan
/// (`SELECT`, `WITH`, `VALUES`, `INSERT`, `REPLACE`, `UPDATE`, `DELETE`; not `EXPLAIN`, nor
/// the library's copies into its own tables, nor a statement whose `WHERE 0` leaves it no row
/// to read: ``matchesNoRow(_:)``), the reporter runs `EXPLAIN QUERY PLAN` of it on the same
/// connection — in the caller's use of it, inside its transaction if any (it compiles the
/// statement, reads no row, and is not traced) — and calls the user's closure when the plan
/// scans a whole table (see ``fullScans(in:info:sql:)``). The SQL is recorded as checked
/// whatever the plan, also when `EXPLAIN` fails (the error is swallowed: the user's statement
/// runs exactly as without the option), so each distinct SQL text is explained once per
/// database, not once per connection. The user's closure runs on the preparing thread, under
/// that connection's lock (and the writer gate, on the writer), holding no lock of ours.
final class FullScanReporter: Sendable {
    /// One row of `EXPLAIN QUERY PLAN`.
    struct PlanRow: Equatable {
        let id: Int32
        let parent: Int32
        let detail: String
    }

    /// The user's closure: the SQL and the plan.
    private let report: @Sendable (String, String) -> Void
    /// The SQL texts already checked (claimed before they are explained, so that two threads
    /// compiling the same SQL on two connections explain it once).
    private let checked = LockedValue<Set<String>>([])

    init(_ report: @escaping @Sendable (String, String) -> Void) {
        self.report = report
    }

    /// Checks `statement`, just compiled by `connection`, which the calling thread is using.
    /// Calls the user's closure (with no lock of the reporter held) when its plan scans a
    /// whole table, once per SQL text.
    func check(_ statement: Statement, on connection: Connection) {
        let sql = statement.sql
        let info = statement.info
        // The cheap tests first; the text is read only once per SQL text and database.
        guard !info.changesSchema, info.transactionControl == nil,
              let handle = statement.sqliteStatement, sqlite3_stmt_isexplain(handle) == 0,
              checked.withLock({ $0.insert(sql).inserted }),
              Self.isPlannable(sql), !Self.fillsLibraryTable(sql), !Self.matchesNoRow(sql),
              let rows = connection.explainQueryPlan(sql) else { return }
        let scans = Self.fullScans(in: rows, info: info, sql: sql)
        guard !scans.isEmpty else { return }
        report(sql, Self.planText(rows))
    }

    // MARK: Reading plans

    /// The plan as the sqlite3 shell shows it, without its `QUERY PLAN` title and tree lines:
    /// one line per row, indented by two spaces per level below the top.
    ///
    /// ```
    /// MATERIALIZE s
    ///   SCAN t
    /// SCAN s
    /// ```
    static func planText(_ rows: [PlanRow]) -> String {
        var depths: [Int32: Int] = [:]
        var lines: [String] = []
        for row in rows {
            let depth = depths[row.parent].map { $0 + 1 } ?? 0
            depths[row.id] = depth
            lines.append(String(repeating: "  ", count: depth) + row.detail)
        }
        return lines.joined(separator: "\n")
    }

    /// The tables the plan reads whole without an index (lowercased, as named in the
    /// statement), each once, in plan order:
    ///
    /// - a `SCAN <table>` row — `SCAN TABLE <table>` before SQLite 3.36 — with no `USING …
    ///   INDEX`, `USING INTEGER PRIMARY KEY`, `USING PRIMARY KEY` or `VIRTUAL TABLE`; not
    ///   `SCAN CONSTANT ROW`, nor the scan of a subquery or common table expression (a name
    ///   that a `MATERIALIZE` or `CO-ROUTINE` row introduces, `(subquery-N)`, `SUBQUERY N`,
    ///   or any name that is not a table the statement reads or writes, directly or through
    ///   an alias);
    /// - a `SEARCH <table> USING AUTOMATIC … INDEX` row: SQLite reads the whole table to
    ///   build a temporary index each time the statement runs.
    ///
    /// Scans of SQLite's and the library's own tables are ignored (``isLibraryTable(_:)``).
    static func fullScans(in rows: [PlanRow], info: StatementInfo, sql: String) -> [String] {
        let tables = info.readTables.union(info.writtenTables)
        // Names of intermediate results: a FROM subquery or CTE computed before the scan.
        var derived: Set<String> = []
        for row in rows {
            for prefix in ["MATERIALIZE ", "CO-ROUTINE "] where row.detail.hasPrefix(prefix) {
                derived.insert(row.detail.dropFirst(prefix.count).lowercased())
            }
        }
        var aliases: [String: [String]]?
        var found: [String] = []
        for row in rows {
            guard let name = scannedName(row.detail) else { continue }
            let lowered = name.lowercased()
            guard !derived.contains(lowered) else { continue }
            // The name as written (`t`, `main.t`), or the table an alias stands for.
            var candidates = [lowered]
            if let dot = lowered.firstIndex(of: ".") { candidates.append(String(lowered[lowered.index(after: dot)...])) }
            var table = candidates.first { tables.contains($0) }
            if table == nil {
                if aliases == nil { aliases = aliasTargets(in: sql) }
                table = aliases?[lowered]?.first { tables.contains($0) && !derived.contains($0) }
            }
            guard let table, !isLibraryTable(table), !found.contains(table) else { continue }
            found.append(table)
        }
        return found
    }

    /// The name a plan row reads whole, or nil when the row is no such scan (see
    /// ``fullScans(in:info:sql:)``).
    static func scannedName(_ detail: String) -> String? {
        var rest: Substring
        if detail.hasPrefix("SCAN ") {
            rest = detail.dropFirst(5)
            // A scan through an index, a rowid range, or a virtual table's own index.
            guard rest.range(of: " USING ") == nil, rest.range(of: " VIRTUAL TABLE") == nil else { return nil }
        } else if detail.hasPrefix("SEARCH "), let automatic = detail.range(of: " USING AUTOMATIC ") {
            rest = detail[detail.index(detail.startIndex, offsetBy: 7)..<automatic.lowerBound]
        } else {
            return nil
        }
        for suffix in [" LEFT-JOIN", " RIGHT-JOIN"] where rest.hasSuffix(suffix) { rest = rest.dropLast(suffix.count) }
        if rest.hasPrefix("TABLE ") {
            // Before SQLite 3.36: `SCAN TABLE t`, `SCAN TABLE t AS x`.
            rest = rest.dropFirst(6)
            if let alias = rest.range(of: " AS ") { rest = rest[..<alias.lowerBound] }
        }
        if rest == "CONSTANT ROW" || rest.hasPrefix("(") || rest.hasPrefix("SUBQUERY ") || rest.isEmpty { return nil }
        return String(rest)
    }

    /// Whether `table` (lowercased) is SQLite's (`sqlite_master`, `sqlite_stat1`…) or the
    /// library's: its bookkeeping (`activeobjects_…`), a rebuild's copy
    /// (`_activeobjects_rebuild_…`), the migrator's `schema_migrations`.
    static func isLibraryTable(_ table: String) -> Bool {
        table.hasPrefix("sqlite_") || table.hasPrefix("activeobjects_") || table.hasPrefix("_activeobjects_")
            || table == "schema_migrations"
    }

    // MARK: Reading SQL

    /// Whether `sql` reads no row, though its plan may say `SCAN`: its only `WHERE` is `0` (or
    /// `false`), in a statement that is no compound `SELECT`, either at its top level
    /// (`DELETE FROM t WHERE 0`, with nothing but `ORDER BY`, `GROUP BY`, `LIMIT` or
    /// `RETURNING` after it) or in a subquery that holds every table the `SELECT` names
    /// (`SELECT … FROM (SELECT … FROM t WHERE 0) AS t`). The library prepares the first kind to
    /// see whether a table's triggers compile, and a search for no word is the second.
    static func matchesNoRow(_ sql: String) -> Bool {
        guard sql.range(of: "where", options: .caseInsensitive) != nil else { return false }
        let words = SQLText.words(of: sql, limit: .max)
        let keywords = words.map { $0.quoted ? "" : $0.text.lowercased() }
        guard !keywords.contains(where: { $0 == "union" || $0 == "intersect" || $0 == "except" }),
              let clause = keywords.firstIndex(of: "where"), keywords.lastIndex(of: "where") == clause,
              clause + 1 < words.count, ["0", "false"].contains(keywords[clause + 1]),
              words[clause + 1].adjacent, words[clause + 1].depth == words[clause].depth else { return false }
        let depth = words[clause].depth
        if clause + 2 < words.count {
            let next = words[clause + 2]
            // `WHERE 0 AND …`, `WHERE 0 OR …` may match rows; `WHERE 0) AS t` closes the subquery.
            guard next.depth < depth
                    || (next.depth == depth && ["order", "group", "limit", "returning"].contains(keywords[clause + 2]))
            else { return false }
        }
        guard depth > 0 else { return true }
        // In a subquery: the statement is a SELECT whose tables (the names after FROM or JOIN)
        // are all the subquery's.
        guard keywords.first == "select" else { return false }
        return words.indices.allSatisfy { index in
            !["from", "join"].contains(keywords[index]) || index + 1 == words.count || !words[index + 1].adjacent
                || words[index].depth == depth
        }
    }

    /// Whether `sql` inserts into one of the library's tables (``isLibraryTable(_:)``): a
    /// rebuild's copy, the sync log's first entries of a table — the library's own reads of
    /// every row. (Not told by the tables the statement writes: the sync triggers of a
    /// synchronized table make every write of it write the sync log.)
    static func fillsLibraryTable(_ sql: String) -> Bool {
        let words = SQLText.words(of: sql, limit: 8)
        guard let into = words.firstIndex(where: { !$0.quoted && $0.text.lowercased() == "into" }),
              let first = words.first, ["insert", "replace"].contains(first.text.lowercased()) else { return false }
        // `INTO t`, `INTO main.t`.
        return words[(into + 1)...].prefix(2).contains { isLibraryTable($0.text.lowercased()) }
    }

    /// Whether SQLite plans statements that begin like `sql`: queries and row writes, not
    /// DDL, `PRAGMA`, transaction control, `ATTACH`, `VACUUM`, `EXPLAIN`…
    static func isPlannable(_ sql: String) -> Bool {
        guard let first = SQLText.words(of: sql, limit: 1).first, !first.quoted else { return false }
        return ["select", "with", "values", "insert", "replace", "update", "delete"].contains(first.text.lowercased())
    }

    /// For each word of `sql` (lowercased), the words just before it, with nothing but spaces,
    /// comments or `AS` between — `t` for `t AS x`, `t x` and `main.t x` — among which a
    /// plan's alias finds its table (the other pairs, `SELECT a b`, `t WHERE`, never match
    /// one).
    static func aliasTargets(in sql: String) -> [String: [String]] {
        let tokens = SQLText.words(of: sql, limit: .max)
        var targets: [String: [String]] = [:]
        for index in tokens.indices.dropFirst() where tokens[index].adjacent {
            var target = index - 1
            if !tokens[target].quoted && tokens[target].text.lowercased() == "as" {
                guard tokens[target].adjacent, target > 0 else { continue }
                target -= 1
            }
            targets[tokens[index].text.lowercased(), default: []].append(tokens[target].text.lowercased())
        }
        return targets
    }
}

extension Connection {
    /// The rows of `EXPLAIN QUERY PLAN <sql>` on this connection (which the caller is using),
    /// or nil when SQLite cannot explain it. Compiled as our own statement (the authorizer's
    /// reports go to a collector of their own, never counted as a re-compile), not cached, not
    /// traced.
    func explainQueryPlan(_ sql: String) -> [FullScanReporter.PlanRow]? {
        guard let handle = sqliteConnection else { return nil }
        explainedPlanCount += 1
        return collecting(into: StatementInfoCollector()) { () -> [FullScanReporter.PlanRow]? in
            var statement: OpaquePointer?
            guard sqlite3_prepare_v3(handle, "EXPLAIN QUERY PLAN " + sql, -1, 0, &statement, nil) == SQLITE_OK,
                  let statement else {
                sqlite3_finalize(statement)
                return nil
            }
            defer { sqlite3_finalize(statement) }
            var rows: [FullScanReporter.PlanRow] = []
            while true {
                switch sqlite3_step(statement) {
                case SQLITE_ROW:
                    let detail = sqlite3_column_text(statement, 3).map { String(cString: $0) } ?? ""
                    rows.append(FullScanReporter.PlanRow(id: sqlite3_column_int(statement, 0),
                                                         parent: sqlite3_column_int(statement, 1), detail: detail))
                case SQLITE_DONE:
                    return rows
                default:
                    return nil
                }
            }
        }
    }
}
