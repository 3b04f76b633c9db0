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
/// they run; `rows`/`scalar` send statements that write to the writer connection.
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
    /// True for `ATTACH` and `CREATE TEMP …`: state only the connection that runs it sees.
    let createsConnectionState: Bool

    init(readTables: Set<String>, writtenTables: Set<String>, transactionControl: TransactionControl?,
         changesSchema: Bool, createsConnectionState: Bool = false) {
        self.readTables = readTables
        self.writtenTables = writtenTables
        self.transactionControl = transactionControl
        self.changesSchema = changesSchema
        self.createsConnectionState = createsConnectionState
    }

    /// True when the statement may change the database.
    var writes: Bool { !writtenTables.isEmpty }
}

/// A transaction statement, as SQLite's authorizer reports it.
enum TransactionControl: Equatable, Sendable {
    case begin, commit, rollback
    case savepoint(String), release(String), rollbackTo(String)
}

/// Collects the authorizer's reports while one statement compiles.
final class StatementInfoCollector {
    private var readTables: Set<String> = []
    private var writtenTables: Set<String> = []
    private var transactionControl: TransactionControl?
    private var changesSchema = false
    private var createsConnectionState = false

    func build() -> StatementInfo {
        StatementInfo(readTables: readTables, writtenTables: writtenTables, transactionControl: transactionControl,
                      changesSchema: changesSchema, createsConnectionState: createsConnectionState)
    }

    /// Records one authorizer report (action codes: <https://www.sqlite.org/c3ref/c_alter_table.html>).
    func record(action: Int32, _ first: String?, _ second: String?) {
        switch action {
        case SQLITE_ATTACH, SQLITE_CREATE_TEMP_TABLE, SQLITE_CREATE_TEMP_VIEW, SQLITE_CREATE_TEMP_TRIGGER,
             SQLITE_CREATE_TEMP_INDEX:
            createsConnectionState = true
        default:
            break
        }
        switch action {
        case SQLITE_READ:
            if let first { readTables.insert(first.lowercased()) }
        case SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE:
            if let first { writtenTables.insert(first.lowercased()) }
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
