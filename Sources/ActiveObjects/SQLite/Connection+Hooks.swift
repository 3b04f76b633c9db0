import CSQLite
import Foundation

// The C callbacks SQLite calls on a connection, in one place: the authorizer (what each
// statement reads and writes, learned while it compiles), the rollback hook (a rollback
// forgets the changes recorded for live queries), and the `data_version` look of the change
// monitor. Each callback gets the connection unretained as its context: the connection
// outlives its C handle (closing it, in `closeNow()`, is the last use of the handle), so the
// pointer is valid whenever SQLite calls back.

extension Connection {
    /// Installs the callbacks on a connection being opened.
    func installHooks(_ handle: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_set_authorizer(handle, statementAuthorizer, context)
        if role == .writer {
            // A rollback (ROLLBACK, or SQLite's own after an error) forgets the changes.
            sqlite3_rollback_hook(handle, { context in
                guard let context else { return }
                Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue().forgetChanges()
            }, context)
        }
    }

    /// committing, so its version is current.)
    func dataVersion() -> Int64? {
        guard let handle = sqliteConnection else { return nil }
        if journalMode == "wal" && sqlite3_txn_state(handle, nil) != SQLITE_TXN_NONE { return nil }
        if dataVersionStatement == nil {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, "PRAGMA data_version", -1, &statement, nil) == SQLITE_OK, let statement else {
                return nil
            }
            liveStatements.insert(statement)
            dataVersionStatement = statement
        }
        guard let statement = dataVersionStatement else { return nil }
        // Never wait for another process's lock (a rollback-journal file being written): the
        // look runs on a committing thread or the monitor's, and is simply made again later.
        sqlite3_busy_timeout(handle, 0)
        defer {
            sqlite3_reset(statement)
            sqlite3_busy_timeout(handle, Int32(clamping: options.busyTimeoutNanoseconds / 1_000_000))
        }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return sqlite3_column_int64(statement, 0)
    }
}

/// The authorizer installed on every connection: forwards reports to the connection's
/// collector while one of our prepares runs, and allows everything.
///
/// SQLite also calls it when it re-compiles a statement by itself: `sqlite3_step` of a
/// statement compiled before a schema change (by this connection, another one, or another
/// process: a trigger added, a view redefined) compiles it again first. No collector is set
/// then; the call is counted in ``Connection/automaticRecompiles``, which tells
/// ``Connection/withStatement(_:binding:_:)`` to compare the schema cookies with those the
/// statement's ``StatementInfo`` was learned under: when they differ, the statement may now
/// read and write other tables, and it learns them again. (SQLite also re-compiles for reasons
/// other than a schema change — a bound `LIKE` pattern, a table-valued pragma compiling its own
/// SQL — which the cookies tell apart.)
let statementAuthorizer: @convention(c) (
    UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
    UnsafePointer<CChar>?, UnsafePointer<CChar>?
) -> Int32 = { context, action, first, second, _, _ in
    guard let context else { return SQLITE_OK }
    let connection = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
    if let collector = connection.infoCollector {
        collector.record(action: action, first.map { String(cString: $0) }, second.map { String(cString: $0) })
    } else {
        connection.automaticRecompiles &+= 1
    }
    return SQLITE_OK
}
