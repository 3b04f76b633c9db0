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
struct Access {
    enum Role {
        /// The database's one writer connection (also the only connection of in-memory
        /// databases, `maximumReaderCount = 0` and the rollback-journal modes).
        case writer
        /// A reader connection (`PRAGMA query_only`), leased from the ``ReaderPool``.
        case reader
    }

    let database: Database
    let connection: Connection
    let role: Role

    /// Whether `database` is the one this access belongs to (eager loading reuses an access
    /// only for models of the same database).
    @inline(__always)
    func belongs(to database: Database) -> Bool { self.database === database }
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
