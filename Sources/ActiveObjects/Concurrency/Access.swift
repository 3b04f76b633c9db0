/// A connection lent to one call, and in which role.
///
/// Every call into a ``Database`` — a public method, or the library's own work on behalf of one
/// — gets its `Access` from ``Database/withAccess(_:_:)`` at the public boundary, and passes it
/// down to whatever runs its SQL: query compilation and loading, write plans, eager loading,
/// transaction bookkeeping. Code below the boundary never asks thread-local state which
/// connection to use.
///
/// The access is valid only inside the closure it was given to: the connection is leased,
/// held, or borrowed from an enclosing scope for exactly that long.
///
/// It holds its database and connection without counting references: an access is created and
/// passed down on every call, and counting references to objects every thread shares (the
/// database, the writer) costs contended atomic operations on every read — what kept reads
/// from scaling with threads — and a retain and release at every use. Safety: an access never
/// outlives the call that made it, during which the caller holds the database (and the
/// database its connections), with two exceptions that hold what keeps it valid: the scope of
/// a raw `BEGIN`, kept between calls, keeps its database alive (``ThreadState/pinnedDatabases``;
/// the writer is the database's), and a cursor's placement keeps its leased connection
/// (``CursorPlacement/leased(_:_:)``) while the cursor keeps its database. Identity comparisons use
/// ``databaseID``, which needs no reference at all. Hot paths reach the connection with
/// ``withConnection(_:)``, which lends it without a retain; ``connection`` returns a counted
/// reference, for everything else.
struct Access {
    enum Role {
        /// The database's one writer connection (also the only connection of in-memory
        /// databases, `maximumReaderCount = 0` and the rollback-journal modes).
        case writer
        /// A reader connection (`PRAGMA query_only`), leased from the ``ReaderPool``.
        case reader
    }

    unowned(unsafe) let database: Database
    private let connectionReference: Unmanaged<Connection>
    let role: Role
    /// The database's identity.
    let databaseID: ObjectIdentifier

    init(database: Database, connection: Connection, role: Role) {
        self.database = database
        connectionReference = Unmanaged.passUnretained(connection)
        self.role = role
        databaseID = ObjectIdentifier(database)
    }

    /// The connection.
    var connection: Connection { connectionReference.takeUnretainedValue() }

    /// Runs `body` with the connection, lent without counting a reference (the access keeps it
    /// alive, see above).
    @inline(__always)
    func withConnection<R>(_ body: (Connection) throws -> R) rethrows -> R {
        try connectionReference._withUnsafeGuaranteedRef(body)
    }

    /// Whether `database` is the one this access belongs to (eager loading reuses an access
    /// only for models of the same database).
    @inline(__always)
    func belongs(to database: Database) -> Bool { databaseID == ObjectIdentifier(database) }
}

/// What a call needs from its database. The need, and the thread's open scopes (``Scope``),
/// decide the connection — see ``Database/withAccess(_:_:)`` and ARCHITECTURE.md.
enum AccessNeed {
    /// Statements that read, each in its own read transaction: finders, counts, aggregates, a
    /// query without `including`, `each`, a cursor, a relation's fetch.
    case read
    /// Several reads that must agree: one read transaction spans them (a query with
    /// `including`: its rows and their relations).
    case snapshot
    /// A ``Database/read(_:)-54zpm`` block: a snapshot whose body may not write.
    case readBlock
    /// A write, or anything that must run on the writer in a transaction.
    case write
    /// A read that must run on the writer: it reads what only the writer connection has (a
    /// TEMP table, an attached database, `last_insert_rowid()`, `changes()`, a `PRAGMA`'s
    /// value), or continues on the writer where it began (a cursor opened in a transaction).
    /// Allowed inside ``Database/read(_:)-54zpm``, unlike ``write``.
    case writerRead
}
