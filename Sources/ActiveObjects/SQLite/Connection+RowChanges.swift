import CSQLite
import Foundation

// Which rows a commit of the writer changed, for live results (§17) that re-read only those
// rows. SQLite's update hook reports every row inserted, updated or deleted on the connection
// (also by triggers and foreign-key actions) — except in three cases, which make a commit's
// rows unknown (live results then compare the whole result instead):
//
// - a `DELETE` without `WHERE` may empty the table at once (the truncate optimization): the
//   statement changed more rows than the hook reported;
// - `REPLACE` conflict resolution deletes the conflicting row silently: a statement that
//   mentions REPLACE, and every statement while a table or trigger of the writer's schema
//   (main or temp) mentions it;
// - `WITHOUT ROWID` tables never reach the hook (live results of such tables compare).
//
// The hook is installed only while a live result wants rows (``CommitSink/rowTables``), and
// is switched between transactions, on the writer's thread (before a statement that writes or
// begins a transaction outside any, and after each commit): a transaction that began without
// it reports no rows. It records the rows of the tables live results follow, and only counts
// the others'. Nobody observing costs nothing.

/// The rows a commit changed in the tables live results follow (names lowercased); a
/// transaction whose rows are unknown reports nil instead.
struct CommittedRows: Sendable {
    /// The tables whose rows were recorded (those followed when the transaction began): a
    /// table missing here has unknown rows, even with no entry in `rowIDs`.
    var tables: Set<String> = []
    var rowIDs: [String: Set<Int64>] = [:]
    /// The columns UPDATEs assigned, by table (of `tables`): a rowid assigned means the hook
    /// reported the row under its new rowid only.
    var updatedColumns: [String: Set<String>] = [:]
}

/// The writer's record of the rows changed since the last commit or rollback.
struct RowChangeLog {
    /// Whether the update hook is installed.
    var hookInstalled = false
    /// Whether every row changed since the last commit or rollback was reported.
    var isComplete = false
    /// The tables whose rows are recorded (lowercased), as of the commit sink's generation.
    var tables: Set<String> = []
    var tablesGeneration = -1
    /// Rows reported by the hook since the last commit or rollback (in the main schema).
    var rowIDs: [String: Set<Int64>] = [:]
    /// How many rows the hook reported in all (compared with `sqlite3_total_changes` per
    /// statement).
    var reported = 0
    /// The columns UPDATEs assigned since the last commit or rollback, in recorded tables.
    var updatedColumns: [String: Set<String>] = [:]
    /// Whether `schemaMentionsReplace` was learned since the schema last changed.
    var schemaChecked = false
    /// Whether a table or trigger of the main or temp schema mentions REPLACE (`ON CONFLICT
    /// REPLACE`, a trigger's `INSERT OR REPLACE`): any write may then delete rows unreported.
    var schemaMentionsReplace = false
    /// The last table name the hook saw, kept as C text and as a key (and whether its rows are
    /// recorded), so that rows of one table cost a `strcmp`, not a new `String`.
    var lastTableName: [CChar] = []
    var lastTableKey = ""
    var lastTableRecorded = false

    mutating func record(table: UnsafePointer<CChar>, rowID: Int64) {
        if lastTableName.isEmpty || strcmp(lastTableName, table) != 0 {
            let name = String(cString: table)
            lastTableName = Array(name.utf8CString)
            lastTableKey = name.lowercased()
            lastTableRecorded = tables.contains(lastTableKey)
        }
        if lastTableRecorded { rowIDs[lastTableKey, default: []].insert(rowID) }
    }
}

/// The update hook: records each changed row of the main schema in the connection's log.
private let rowChangeHook: @convention(c) (
    UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, sqlite3_int64
) -> Void = { context, _, schema, table, rowID in
    guard let context, let table else { return }
    let connection = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
    // Every row counts (compared with `sqlite3_total_changes`); only the main schema's are
    // recorded: a temp or attached table is not the one a live result reads.
    connection.rowLog.reported &+= 1
    guard let schema, strcmp(schema, "main") == 0 else { return }
    connection.rowLog.record(table: table, rowID: rowID)
}

extension Connection {
    /// Before a statement runs on the writer: when it writes or begins a transaction, outside
    /// any transaction, and the update hook is not as live results want it, sets it up — so
    /// that the first transaction after a live result started already reports its rows. When
    /// nothing is followed this is a load and a compare.
    @inline(__always)
    func prepareRowLog(for info: StatementInfo) {
        guard rowLog.hookInstalled != (commitSink?.wantsRowChanges ?? false),
              info.writes || info.transactionControl != nil, isAutocommit else { return }
        restartRowLog()
    }

    /// Called between transactions on the writer's thread: installs or removes the update hook
    /// as the commit sink wants, learns the tables to record, and starts a new record. A
    /// record is complete only when the hook was installed for the whole transaction.
    /// Not from SQLite's rollback hook (`switchingHook` false there): a callback must not
    /// change the connection's hooks.
    func restartRowLog(switchingHook: Bool = true) {
        if switchingHook { setUpRowLog() }
        if !rowLog.rowIDs.isEmpty { rowLog.rowIDs.removeAll(keepingCapacity: true) }
        if !rowLog.updatedColumns.isEmpty { rowLog.updatedColumns.removeAll() }
        rowLog.isComplete = rowLog.hookInstalled && rowLog.schemaChecked && !rowLog.schemaMentionsReplace
    }

    /// Installs or removes the update hook as the commit sink wants; while installed, learns
    /// the tables to record when they changed, and whether the schema may REPLACE when the
    /// schema changed.
    private func setUpRowLog() {
        let wanted = commitSink?.wantsRowChanges ?? false
        if wanted != rowLog.hookInstalled, let handle = sqliteConnection {
            if wanted {
                sqlite3_update_hook(handle, rowChangeHook, Unmanaged.passUnretained(self).toOpaque())
            } else {
                sqlite3_update_hook(handle, nil, nil)
            }
            rowLog.hookInstalled = wanted
        }
        guard rowLog.hookInstalled, let sink = commitSink else { return }
        if sink.rowTablesGeneration != rowLog.tablesGeneration {
            (rowLog.tables, rowLog.tablesGeneration) = sink.rowTables
            rowLog.lastTableName = []
        }
        if !rowLog.schemaChecked {
            // Learned again after each schema change (by anyone: a statement SQLite compiled
            // again tells), on the writer, which alone sees its own temp triggers. A failed
            // read (a lock) counts as a yes, and is made again next time.
            if let definitions = schemaDefinitionsMentioningReplace() {
                rowLog.schemaMentionsReplace = definitions.contains(where: SQLText.mayReplace)
                rowLog.schemaChecked = true
            } else {
                rowLog.schemaMentionsReplace = true
            }
        }
    }

    /// A statement that changed `changed` rows (with its triggers and foreign-key actions:
    /// `sqlite3_total_changes`) ran: when the hook reported fewer rows since `reportedBefore`
    /// (the truncate optimization, also in a trigger), or the statement may delete rows by
    /// REPLACE, the transaction's rows are no longer known. The columns its UPDATEs assign in
    /// recorded tables are noted.
    func checkRowLog(statement: Statement, info: StatementInfo, changed: Int, reportedBefore: Int) {
        guard rowLog.isComplete else { return }
        if rowLog.reported &- reportedBefore < changed
            || statement.mentionsReplace {
            rowLog.isComplete = false
            return
        }
        for (table, columns) in info.updatedColumns where rowLog.tables.contains(table) {
            rowLog.updatedColumns[table, default: []].formUnion(columns)
        }
    }

    /// The SQL of the tables and triggers of the main and temp schemas that mention `replace`,
    /// read with the C API directly: not a statement of the app's (no trace, no bookkeeping of
    /// what it read), never waiting for a lock. Nil when it cannot be read now.
    private func schemaDefinitionsMentioningReplace() -> [String]? {
        guard let handle = sqliteConnection else { return nil }
        let sql = """
            SELECT sql FROM sqlite_master WHERE type IN ('table', 'trigger') AND sql LIKE '%replace%' \
            UNION ALL SELECT sql FROM sqlite_temp_master WHERE type IN ('table', 'trigger') AND sql LIKE '%replace%'
            """
        var statement: OpaquePointer?
        // Our own compilation: the authorizer's reports must not count as a re-compile.
        let prepared = collecting(into: StatementInfoCollector()) {
            sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        }
        guard prepared == SQLITE_OK, let statement else { return nil }
        defer { sqlite3_finalize(statement) }
        sqlite3_busy_timeout(handle, 0)
        defer { sqlite3_busy_timeout(handle, Int32(clamping: options.busyTimeoutNanoseconds / 1_000_000)) }
        var definitions: [String] = []
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW:
                if let text = sqlite3_column_text(statement, 0) { definitions.append(String(cString: text)) }
            case SQLITE_DONE:
                return definitions
            default:
                return nil
            }
        }
    }

    /// The rows the transaction being committed changed, or nil when they are unknown.
    var committedRows: CommittedRows? {
        rowLog.isComplete
            ? CommittedRows(tables: rowLog.tables, rowIDs: rowLog.rowIDs, updatedColumns: rowLog.updatedColumns)
            : nil
    }
}
