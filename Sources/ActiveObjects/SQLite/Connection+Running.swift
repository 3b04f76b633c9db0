import CSQLite
import Foundation

extension Connection {
    // MARK: Running

    /// Runs `body` with a bound statement, then resets it (also when `body` throws) so that no
    /// read transaction stays open, and reports the statement to the trace hook.
    func withStatement<Source: StatementSource, T>(
        _ source: Source, _ arguments: [DatabaseValue], _ body: (Statement) throws -> T
    ) throws -> T {
        try withStatement(source, binding: { try $0.bind(arguments) }, body)
    }

    /// ``withStatement(_:_:_:)`` with the parameters bound by `binding` (which must bind every
    /// one of them) instead of from an array. A statement whose binding fails never ran: it
    /// is reset, and not reported to the trace hook.
    func withStatement<Source: StatementSource, T>(
        _ source: Source, binding: (Statement) throws -> Void, _ body: (Statement) throws -> T
    ) throws -> T {
        try withStatement(try cachedStatement(source), binding: binding, body)
    }

    /// The same, with a statement already compiled on this connection.
    ///
    /// After `body`, the statement is reset first — a statement stepped part of the way (an
    /// `INSERT … RETURNING` read for its first row) commits its autocommit transaction only
    /// then — and only then is its outcome recorded: the tables it changed (for live queries),
    /// ``writeCount``, schema changes, transaction statements, and a commit published when no
    /// transaction is left open. A statement that fails after changing rows (`OR FAIL`,
    /// `RAISE(FAIL)`) keeps them — and commits them in autocommit mode — so it counts like one
    /// that succeeded; one that fails without changing anything (SQLite undid it) does not.
    func withStatement<T>(
        _ statement: Statement, binding: (Statement) throws -> Void, _ body: (Statement) throws -> T
    ) throws -> T {
        do {
            try binding(statement)
        } catch {
            statement.reset()
            throw error
        }
        let start = options.traceHandler == nil ? 0 : DispatchTime.now().uptimeNanoseconds
        let info = statement.info
        if role == .writer { prepareRowLog(for: info) }
        let changesBefore = info.writes ? totalChanges : 0
        let rowsReportedBefore = rowLog.reported
        let recompilesBefore = automaticRecompiles
        readRecorder?.record(info)
        let result: T
        do {
            result = try body(statement)
        } catch {
            statement.reset()
            finish(statement, start: start, info: info, recompilesBefore: recompilesBefore,
                   changesBefore: changesBefore, rowsReportedBefore: rowsReportedBefore, succeeded: false)
            throw error
        }
        statement.reset()
        finish(statement, start: start, info: info, recompilesBefore: recompilesBefore,
               changesBefore: changesBefore, rowsReportedBefore: rowsReportedBefore, succeeded: true)
        return result
    }

    /// What ``withStatement(_:binding:_:)`` records once a statement ran and was reset (not
    /// generic: one copy for every statement).
    private func finish(_ statement: Statement, start: UInt64, info: StatementInfo, recompilesBefore: Int,
                        changesBefore: Int32, rowsReportedBefore: Int, succeeded: Bool) {
        if let trace = options.traceHandler {
            trace(statement.sql, DispatchTime.now().uptimeNanoseconds &- start)
        }
        var info = info
        if automaticRecompiles != recompilesBefore && schemaChanged(since: statement) {
            // SQLite compiled the statement again (the schema changed): what it reads and
            // writes may have changed too (a trigger added, a view redefined).
            info = relearnInfo(of: statement)
            readRecorder?.record(info)
            // Another connection changed the schema (a trigger added, which may REPLACE): this
            // transaction's rows are unknown, and the schema is checked again after it.
            rowLog.schemaChecked = false
            rowLog.isComplete = false
        }
        if info.writes {
            let changedRows = totalChanges != changesBefore
            if changedRows && rowLog.isComplete {
                checkRowLog(statement: statement, info: info, changed: Int(totalChanges &- changesBefore),
                            reportedBefore: rowsReportedBefore)
            }
            if (changedRows || (succeeded && info.changesSchema)) && changes.last !== info { changes.append(info) }
            // `Database.changes` and `lastInsertedRowID` follow row writes, not DDL.
            if !info.changesSchema && (succeeded || changedRows) { writeCount &+= 1 }
        }
        guard succeeded else {
            // What a failed statement kept is committed now if no transaction is open.
            if !changes.isEmpty && info.writes && isAutocommit { publishCommit() }
            return
        }
        if info.changesSchema {
            rowLog.schemaChecked = false
            if !isAutocommit { uncommittedSchemaChange = true }
            schemaChanged?()
        }
        if let control = info.transactionControl { transactionStatementRan(control) }
        // No transaction left open after a write or COMMIT: the changes are committed.
        if !changes.isEmpty && (info.writes || info.transactionControl != nil) && isAutocommit { publishCommit() }
    }

    /// Executes a statement that returns no rows (rows, if any, are stepped through).
    func execute<Source: StatementSource>(_ sql: Source, _ arguments: [DatabaseValue] = []) throws {
        try withStatement(sql, arguments) { statement in
            while try statement.step() {}
        }
    }

    /// The first column of the first row, or nil when there is no row.
    func scalarValue<Source: StatementSource>(_ sql: Source, _ arguments: [DatabaseValue] = []) throws -> DatabaseValue? {
        try withStatement(sql, arguments) { statement in
            // `nil` must be spelled as Optional.none: DatabaseValue is ExpressibleByNilLiteral, so a
            // bare `nil` here would become `.some(.null)` and "no row" would look like a NULL row.
            try statement.step() ? statement.value(at: 0) : Optional<DatabaseValue>.none
        }
    }

    /// Every column of the first row, or nil when there is no row; the statement runs to its
    /// end (a write with `RETURNING` completes).
    func firstRowValues<Source: StatementSource>(_ sql: Source, _ arguments: [DatabaseValue] = []) throws -> [DatabaseValue]? {
        try withStatement(sql, arguments) { statement in
            guard try statement.step() else { return nil }
            let values = (0..<statement.columnCount).map { statement.value(at: $0) }
            while try statement.step() {}
            return values
        }
    }

    /// Every row of a statement, materialized.
    func rows(_ statement: Statement) throws -> [Row] {
        // Read the columns after the first step: a cached `SELECT *` is re-prepared by
        // `sqlite3_step` when another connection changed the schema, and only then shows
        // the new column set.
        var columns: RowColumns?
        var count: Int32 = 0
        var rows: [Row] = []
        while try statement.step() {
            if columns == nil {
                columns = RowColumns(names: statement.columnNames)
                count = statement.columnCount
            }
            guard let columns else { break }
            var values: [DatabaseValue] = []
            values.reserveCapacity(Int(count))
            for index in 0..<count { values.append(statement.value(at: index)) }
            rows.append(Row(columns: columns, values: values, context: valueContext))
        }
        return rows
    }

    /// Every row, materialized.
    func rows(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [Row] {
        try withStatement(sql, arguments) { try rows($0) }
    }

    /// What `statement` reads and writes under the current schema, learned by compiling its SQL
    /// once more with the collector (the statement itself keeps running the program SQLite
    /// re-compiled), and kept as its new ``Statement/info``. Statements that change the
    /// schema keep theirs (compiling `CREATE TABLE t` again after it ran would fail).
    func relearnInfo(of statement: Statement) -> StatementInfo {
        guard !statement.info.changesSchema, let handle = sqliteConnection else { return statement.info }
        statement.infoCookie = currentSchemaCookie() ?? -1
        let collector = StatementInfoCollector()
        var probe: OpaquePointer?
        let code = collecting(into: collector) {
            statement.sql.withCString { sqlite3_prepare_v3(handle, $0, -1, 0, &probe, nil) }
        }
        sqlite3_finalize(probe)
        guard code == SQLITE_OK, probe != nil else { return statement.info }
        let info = collector.build()
        statement.info = info
        return info
    }

    /// Runs `body` (a compilation of our own) with the authorizer's reports going to
    /// `collector`, then restores the collector in place before.
    func collecting<T>(into collector: StatementInfoCollector, _ body: () -> T) -> T {
        let outer = infoCollector
        infoCollector = collector
        defer { infoCollector = outer }
        return body()
    }

    /// `PRAGMA data_version`: changes when another connection commits. Read with a statement
    /// of its own, not reported to the trace hook (the live-query monitor polls it).
    ///
    /// Nil (no look now; the monitor looks again shortly) while a transaction is open on the
    /// connection in WAL mode — a cursor left open on a single-connection database keeps its
    /// read transaction without holding the writer — since the version is then that
    /// snapshot's, and a look would take it as the baseline and hide the commits after it.
    /// (In the rollback-journal modes an open read transaction keeps other connections from
}
