import CSQLite

/// What SQLite told us about a statement while compiling it: the tables it reads and
/// writes, and whether it controls transactions.
///
/// Gathered by an authorizer callback (<https://www.sqlite.org/c3ref/set_authorizer.html>)
/// installed on every connection. SQLite calls it while it compiles a statement, for every
/// table read (also by `count(*)`, views, subqueries), every table written (also by triggers
/// and foreign-key actions, which are compiled into the statement) and every transaction
/// statement. Statements are cached, so the cost is paid once per compiled statement.
///
/// Uses: live queries observe the tables an observed fetch read and are told the tables a
/// commit wrote; raw `BEGIN`/`COMMIT` inside ``Database/transaction(_:)`` are refused before
/// they run; `rows`/`scalar` run a statement on a reader only when ``mayRunOnReader(_:)``.
final class StatementInfo: Sendable {
    /// Tables (and views) the statement reads, lowercased.
    let readTables: Set<String>
    /// Tables the statement may insert into, update, delete from, create, alter or drop,
    /// lowercased.
    let writtenTables: Set<String>
    /// The transaction statement it is, if any.
    let transactionControl: TransactionControl?
    /// True for CREATE, DROP and ALTER statements (of tables, views, indexes and triggers):
    /// they change tables without changing rows, and what other statements read and write.
    let changesSchema: Bool
    /// True for `ATTACH`, `DETACH` and `CREATE TEMP …`: state only the connection that runs it
    /// sees (SQLite reports `ATTACH` read-only, yet it must run on the writer).
    let createsConnectionState: Bool
    /// True when what the statement returns or does depends on the connection that runs it:
    /// it calls `last_insert_rowid()`, `changes()` or `total_changes()`, or runs a `PRAGMA`
    /// other than those that only read the database file (``fileReadingPragmas``).
    let readsConnectionState: Bool
    /// The columns an UPDATE may assign, by table (lowercased; triggers' too): a live result
    /// learns from it that a row's rowid may have changed, which SQLite's update hook reports
    /// under the new rowid only.
    let updatedColumns: [String: Set<String>]

    init(readTables: Set<String>, writtenTables: Set<String>, transactionControl: TransactionControl?,
         changesSchema: Bool, createsConnectionState: Bool = false, readsConnectionState: Bool = false,
         updatedColumns: [String: Set<String>] = [:]) {
        self.updatedColumns = updatedColumns
        self.readTables = readTables
        self.writtenTables = writtenTables
        self.transactionControl = transactionControl
        self.changesSchema = changesSchema
        self.createsConnectionState = createsConnectionState
        self.readsConnectionState = readsConnectionState
    }

    /// True when the statement may change the database.
    var writes: Bool { !writtenTables.isEmpty }

    /// Whether `statement` (compiled with this info) may run on a reader connection: it
    /// writes nothing (SQLite's `sqlite3_stmt_readonly` agrees), controls no transaction, and
    /// reads no connection state. Anything else runs on the writer, as it would with one
    /// connection (a `PRAGMA` that sets a value is read-only for SQLite, yet sets it only on
    /// the connection that runs it).
    func mayRunOnReader(_ statement: Statement) -> Bool {
        !writes && transactionControl == nil && !readsConnectionState && !createsConnectionState && statement.isReadOnly
    }

    /// Whether `statement` writes or controls transactions (refused inside `db.read`), rather
    /// than only needing the writer's connection state.
    func writesOrControlsTransactions(_ statement: Statement) -> Bool {
        writes || transactionControl != nil || !statement.isReadOnly
    }

    /// The pragmas that only read the database file (its schema, header or pages), the same
    /// on every connection: they may run on a reader. Those listed in
    /// ``pragmasNamingAnObject`` take a table or index name as argument; the others run on a
    /// reader only without an argument (with one, they set a value).
    static let fileReadingPragmas: Set<String> = [
        "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
        "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check",
        "schema_version", "user_version", "application_id", "page_count", "freelist_count",
        "page_size", "encoding", "collation_list", "function_list", "module_list", "pragma_list",
        "compile_options",
    ]
    static let pragmasNamingAnObject: Set<String> = [
        "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
        "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check",
    ]

    /// Whether running `PRAGMA name(argument)` reads or sets connection state.
    static func pragmaReadsConnectionState(_ name: String, argument: String?) -> Bool {
        let name = name.lowercased()
        guard fileReadingPragmas.contains(name) else { return true }
        return argument != nil && !pragmasNamingAnObject.contains(name)
    }

    /// The SQL functions whose result is the state of the connection that runs them.
    static let connectionStateFunctions: Set<String> = ["last_insert_rowid", "changes", "total_changes"]
}

/// A transaction statement, as SQLite's authorizer reports it.
enum TransactionControl: Equatable, Sendable {
    case begin, commit, rollback
    case savepoint(String), release(String), rollbackTo(String)
}

/// Collects the authorizer's reports while one statement compiles.
final class StatementInfoCollector {
    /// The names of SQLite's schema tables.
    static let schemaTables: Set<String> = ["sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"]

    private var readTables: Set<String> = []
    private var writtenTables: Set<String> = []
    private var transactionControl: TransactionControl?
    private var changesSchema = false
    private var createsConnectionState = false
    private var readsConnectionState = false
    private var updatedColumns: [String: Set<String>] = [:]

    func build() -> StatementInfo {
        StatementInfo(readTables: readTables, writtenTables: writtenTables, transactionControl: transactionControl,
                      changesSchema: changesSchema, createsConnectionState: createsConnectionState,
                      readsConnectionState: readsConnectionState, updatedColumns: updatedColumns)
    }

    /// Records one authorizer report (action codes: <https://www.sqlite.org/c3ref/c_alter_table.html>).
    func record(action: Int32, _ first: String?, _ second: String?) {
        switch action {
        case SQLITE_ATTACH, SQLITE_DETACH, SQLITE_CREATE_TEMP_TABLE, SQLITE_CREATE_TEMP_VIEW,
             SQLITE_CREATE_TEMP_TRIGGER, SQLITE_CREATE_TEMP_INDEX:
            createsConnectionState = true
        default:
            break
        }
        switch action {
        case SQLITE_READ:
            if let first { readTables.insert(first.lowercased()) }
        case SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE:
            // The schema table is reported written by statements that only read it (a
            // table-valued pragma such as `pragma_table_info` reports UPDATEs of its columns);
            // real schema changes report their own actions (CREATE, ALTER, DROP) below.
            if let first, !Self.schemaTables.contains(first.lowercased()) {
                writtenTables.insert(first.lowercased())
                if action == SQLITE_UPDATE, let second { updatedColumns[first.lowercased(), default: []].insert(second.lowercased()) }
            }
        case SQLITE_CREATE_TABLE, SQLITE_DROP_TABLE, SQLITE_CREATE_TEMP_TABLE, SQLITE_DROP_TEMP_TABLE,
             SQLITE_CREATE_VTABLE, SQLITE_DROP_VTABLE:
            changesSchema = true
            if let first { writtenTables.insert(first.lowercased()) }
        case SQLITE_ALTER_TABLE:
            // The first argument is the schema name, the second the table.
            changesSchema = true
            if let second { writtenTables.insert(second.lowercased()) }
        case SQLITE_CREATE_VIEW, SQLITE_DROP_VIEW, SQLITE_CREATE_TEMP_VIEW, SQLITE_DROP_TEMP_VIEW:
            // A view redefined changes what reads of it read: the first argument is the view.
            changesSchema = true
            if let first { writtenTables.insert(first.lowercased()) }
        case SQLITE_CREATE_INDEX, SQLITE_DROP_INDEX, SQLITE_CREATE_TRIGGER, SQLITE_DROP_TRIGGER,
             SQLITE_CREATE_TEMP_INDEX, SQLITE_DROP_TEMP_INDEX, SQLITE_CREATE_TEMP_TRIGGER, SQLITE_DROP_TEMP_TRIGGER:
            // The second argument is the table the index or trigger belongs to.
            changesSchema = true
            if let second { writtenTables.insert(second.lowercased()) }
        case SQLITE_PRAGMA:
            // The first argument is the pragma's name, the second its argument (or nil).
            if let first, StatementInfo.pragmaReadsConnectionState(first, argument: second) {
                readsConnectionState = true
            }
        case SQLITE_FUNCTION:
            // The second argument is the function's name.
            if let second, StatementInfo.connectionStateFunctions.contains(second.lowercased()) {
                readsConnectionState = true
            }
        case SQLITE_TRANSACTION:
            switch first?.uppercased() {
            case "BEGIN": transactionControl = .begin
            case "COMMIT": transactionControl = .commit
            case "ROLLBACK": transactionControl = .rollback
            default: break
            }
        case SQLITE_SAVEPOINT:
            let name = second ?? ""
            switch first?.uppercased() {
            case "BEGIN": transactionControl = .savepoint(name)
            case "RELEASE": transactionControl = .release(name)
            case "ROLLBACK": transactionControl = .rollbackTo(name)
            default: break
            }
        default:
            break
        }
    }
}
