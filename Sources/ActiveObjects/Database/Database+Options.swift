import Foundation

extension Database {
    /// The journal mode of a file database (<https://www.sqlite.org/pragma.html#pragma_journal_mode>).
    public enum JournalMode: String, Sendable, Hashable {
        /// Write-ahead log: readers do not block the writer. The default for files.
        case wal = "WAL"
        /// The classic rollback journal, deleted after each transaction.
        case delete = "DELETE"
        /// Rollback journal truncated instead of deleted.
        case truncate = "TRUNCATE"
    }

    /// When a committed transaction is safe from a crash of the machine (SQLite's
    /// `synchronous`, <https://www.sqlite.org/pragma.html#pragma_synchronous>).
    ///
    /// Whatever the choice, a transaction that committed survives a crash of the *process*
    /// (the operating system has the file's pages), and the database stays consistent. The
    /// difference is a crash of the operating system or a power loss.
    public enum Durability: Sendable, Hashable {
        /// Every commit waits until the disk has the WAL (or the rollback journal and the
        /// database): a transaction that committed survives a power loss. `synchronous = FULL`.
        /// The default — what a server needs before it answers "saved". On Apple platforms the
        /// sync (`fsync`) does not flush the drive's own cache, so a power loss may still take
        /// back the last commits there (SQLite's `PRAGMA fullfsync` is the stronger sync).
        case full
        /// In WAL mode, a commit does not wait for the disk; the WAL is synced when it is
        /// checkpointed. A power loss or an operating-system crash may roll back the last
        /// transactions that committed (never part of one). Commits are several times faster
        /// on disks where a sync is slow. `synchronous = NORMAL`. In the rollback-journal modes
        /// a power loss at the wrong moment may also corrupt the database: use it with WAL.
        case normal
    }

    /// How a ``Database`` is opened and configured.
    ///
    /// ```swift
    /// var options = Database.Options()
    /// options.journalMode = .wal
    /// options.busyTimeout = .seconds(5)
    /// options.trace = { sql, duration in print(sql, duration) }
    /// let db = try Database(path: "people.sqlite", options: options)
    /// ```
    public struct Options: Sendable {
        /// Journal mode for file databases (in-memory databases ignore it). Default `.wal`.
        public var journalMode: JournalMode = .wal
        /// Whether SQLite enforces `REFERENCES` constraints. Default true.
        public var foreignKeys = true
        /// How many prepared statements are kept per connection (0 disables the cache). Default 64.
        public var statementCacheSize = 64
        /// How `Date` values are stored. Default `.iso8601Text`.
        public var dateStrategy: DateStrategy = .iso8601Text
        /// Opens the file read-only (`SQLITE_OPEN_READONLY`): every write throws SQLite's
        /// `readOnly` error. Default false.
        public var readOnly = false
        /// How many reader connections a file database in WAL mode may open beside its writer
        /// (opened when first needed). Default 4; 0 keeps one connection for everything.
        /// `Database.init` throws ``ActiveObjectError/invalidArgument(_:)`` outside 0…64.
        public var maximumReaderCount = 4

        /// When a commit is safe from a power loss. Default ``Durability/full``: every commit
        /// syncs the WAL to the disk before it returns, whatever the SQLite build's own default
        /// (Apple's and some distributions' differ). Set on the writer, the only connection that
        /// commits.
        public var durability: Durability = .full

        /// Whether the writer checkpoints the WAL by itself: after a commit that leaves 1,000
        /// pages or more in it, it copies them into the database file (a *passive* checkpoint,
        /// which never waits for readers and never truncates the WAL while one needs it).
        /// Default true.
        ///
        /// Set it to false when another process checkpoints instead — a replication tool such
        /// as Litestream, which then never races the writer (see <doc:DeployingAServer>) — or when the app calls ``Database/checkpoint(_:)-87d5z`` itself. With nobody
        /// checkpointing, the WAL grows without bound and reads slow down. In-memory databases
        /// and the rollback-journal modes have no WAL and ignore it.
        public var checkpointsAutomatically = true

        /// The largest accepted ``maximumReaderCount``.
        static let readerCountLimit = 64

        /// The busy timeout in nanoseconds (default 5 s).
        var busyTimeoutNanoseconds: Int64 = 5_000_000_000
        /// The trace hook with the duration in nanoseconds.
        var traceHandler: (@Sendable (String, UInt64) -> Void)?
        /// The hook as the user gave it, so that the getter returns the same closure.
        private var userTrace: (any Sendable)?

        /// Creates the default options.
        public init() {}

        /// How long a statement waits for another connection's lock before failing with
        /// SQLite's `busy` error. Default 5 seconds. A negative duration means no waiting; a
        /// duration too long to count in nanoseconds is kept as the longest one that fits
        /// (about 292 years; SQLite itself waits at most `Int32.max` milliseconds, about 24.8
        /// days), never wrapped around to a short one.
        public var busyTimeout: Duration {
            get { .nanoseconds(busyTimeoutNanoseconds) }
            set { busyTimeoutNanoseconds = Self.saturatedNanoseconds(newValue) }
        }

        /// `duration` in whole nanoseconds, clamped to `0...Int64.max`.
        static func saturatedNanoseconds(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
            let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            if overflow { return .max }
            let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
            return overflowAgain ? .max : total
        }

        /// Called when a statement's query plan reads a whole table without an index, with the
        /// statement's SQL (placeholders, never values) and its plan. Nil by default: nothing
        /// is explained.
        ///
        /// ```swift
        /// var options = Database.Options()
        /// options.reportsFullScans = { sql, plan in print("full scan: \(sql)\n\(plan)") }
        /// let db = try Database(path: "people.sqlite", options: options)
        /// let parisians = try Person.where(\.$city == "Paris").all()   // no index on city
        /// // full scan: SELECT "id", "name", "city" FROM "person" WHERE "city" = ?
        /// // SCAN person
        /// ```
        ///
        /// The first time the database compiles a statement's SQL text — on any of its
        /// connections, from any call: models, queries, relations, live queries, raw
        /// ``Database/rows(_:_:)-8kx75`` and ``Database/execute(_:_:)-93qp6`` — it asks SQLite
        /// for the statement's plan (`EXPLAIN QUERY PLAN`, which compiles the statement and
        /// reads no row), and calls this closure when the plan:
        /// - scans a table without an index (`SCAN t`, also `SCAN TABLE t` before SQLite 3.36,
        ///   an alias `SCAN x` of `t AS x`), also in a subquery, a join, an `UPDATE` or a
        ///   `DELETE`; a scan through an index (`SCAN t USING COVERING INDEX i`), of a virtual
        ///   table, of a constant row, a subquery or a common table expression does not count;
        /// - or builds an automatic index (`SEARCH t USING AUTOMATIC COVERING INDEX (a=?)`):
        ///   SQLite reads the whole table for it each time the statement runs.
        ///
        /// Each distinct SQL text is explained once per database, whatever its plan, and
        /// reported at most once: the statements the connections cache later cost nothing, and
        /// neither does a statement run again. A statement meant to read every row (`all()`
        /// with no filter, `count()` of a table without an index) is reported too: its plan is
        /// a whole-table scan, and so is, once, a table rebuild's read of the rows it copies
        /// (``ActiveRecord/createTable()`` of a changed model). Scans of SQLite's tables
        /// (`sqlite_…`: the library reads `sqlite_master`) and of the library's own
        /// (`activeobjects_…`, a rebuild's copy, the migrator's `schema_migrations`) are never
        /// reported; neither are statements SQLite does not plan (`CREATE`, `PRAGMA`, `BEGIN`,
        /// `EXPLAIN`…). Explaining never changes what a statement does: when SQLite cannot
        /// explain it, nothing is reported. The database keeps the text of every statement it
        /// checked while it is open.
        ///
        /// The closure runs synchronously on the thread that compiled the statement (an async
        /// call's: one of the library's queues), while the database is in use, before the
        /// statement runs: keep it short, and do not use the database from it.
        public var reportsFullScans: (@Sendable (String, String) -> Void)?

        /// Called after each statement with its SQL (placeholders, never values) and how long
        /// it ran. Runs on the calling thread while the database is locked: keep it short.
        public var trace: (@Sendable (String, Duration) -> Void)? {
            get { userTrace as? @Sendable (String, Duration) -> Void }
            set {
                userTrace = newValue
                if let hook = newValue {
                    traceHandler = { @Sendable (sql: String, nanoseconds: UInt64) in
                        hook(sql, Duration.nanoseconds(Int64(clamping: nanoseconds)))
                    }
                } else {
                    traceHandler = nil
                }
            }
        }
    }
}
