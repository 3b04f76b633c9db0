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
//   mentions REPLACE (the tables a live result reads are checked for `ON CONFLICT REPLACE`
//   and triggers when it starts);
// - `WITHOUT ROWID` tables never reach the hook (live results of such tables compare).
//
// The hook is installed only while a live result wants rows (``CommitSink/wantsRowChanges``),
// and is switched at the end of a transaction, on the writer's thread: a transaction that
// began without it reports no rows. Nobody observing costs nothing.

/// The rows a commit changed, by table (names lowercased): complete, or nil when unknown.
struct CommittedRows: Sendable {
    var rowIDs: [String: Set<Int64>] = [:]
}

/// The writer's record of the rows changed since the last commit or rollback.
struct RowChangeLog {
    /// Whether the update hook is installed.
    var hookInstalled = false
    /// Whether every row changed since the last commit or rollback was reported.
    var isComplete = false
    /// Rows reported by the hook since the last commit or rollback (in the main schema).
    var rowIDs: [String: Set<Int64>] = [:]
    /// How many rows the hook reported in all (compared with `sqlite3_changes` per statement).
    var reported = 0
    /// The last table name the hook saw, kept as C text and as a key, so that rows of one
    /// table cost a `strcmp`, not a new `String`.
    var lastTableName: [CChar] = []
    var lastTableKey = ""

    mutating func record(table: UnsafePointer<CChar>, rowID: Int64) {
        reported &+= 1
        if lastTableName.isEmpty || strcmp(lastTableName, table) != 0 {
            let name = String(cString: table)
            lastTableName = Array(name.utf8CString)
            lastTableKey = name.lowercased()
        }
        rowIDs[lastTableKey, default: []].insert(rowID)
    }
}

/// The update hook: records each changed row of the main schema in the connection's log.
private let rowChangeHook: @convention(c) (
    UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, sqlite3_int64
) -> Void = { context, _, schema, table, rowID in
    guard let context, let table else { return }
    let connection = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
    guard let schema, strcmp(schema, "main") == 0 else {
        // A temp or attached table: not followed, and not the one a live result reads.
        return
    }
    connection.rowLog.record(table: table, rowID: rowID)
}

extension Connection {
    /// Called between transactions on the writer's thread: installs or removes the update hook
    /// as the commit sink wants, and starts a new record. A record is complete only when the
    /// hook was installed for the whole transaction.
    /// Not from SQLite's rollback hook (`switchingHook` false there): a callback must not
    /// change the connection's hooks.
    func restartRowLog(switchingHook: Bool = true) {
        let wanted = commitSink?.wantsRowChanges ?? false
        if switchingHook, wanted != rowLog.hookInstalled, let handle = sqliteConnection {
            if wanted {
                sqlite3_update_hook(handle, rowChangeHook, Unmanaged.passUnretained(self).toOpaque())
            } else {
                sqlite3_update_hook(handle, nil, nil)
            }
            rowLog.hookInstalled = wanted
        }
        if !rowLog.rowIDs.isEmpty { rowLog.rowIDs.removeAll(keepingCapacity: true) }
        rowLog.isComplete = rowLog.hookInstalled
    }

    /// A statement that changed `changed` rows itself ran: when the hook reported fewer rows
    /// since `reportedBefore` (the truncate optimization), or the statement may delete rows by
    /// REPLACE, the transaction's rows are no longer known.
    func checkRowLog(statement: Statement, reportedBefore: Int) {
        guard rowLog.isComplete else { return }
        if rowLog.reported &- reportedBefore < lastChanges
            || statement.sql.range(of: "replace", options: .caseInsensitive) != nil {
            rowLog.isComplete = false
        }
    }

    /// The rows the transaction being committed changed, or nil when they are unknown.
    var committedRows: CommittedRows? {
        rowLog.isComplete ? CommittedRows(rowIDs: rowLog.rowIDs) : nil
    }
}
