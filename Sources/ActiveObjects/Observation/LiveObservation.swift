import Foundation

/// One running live query, as the scheduler of its fetches: at most one fetch runs or waits at
/// a time, on a reader thread; changes that arrive meanwhile make it fetch once more
/// afterwards, so intermediate states may be skipped but the last fetch always starts after
/// the last change. A lock held by another connection makes it try again later.
///
/// Subclasses fetch and deliver: ``ValuesObservation`` (`values()`, a fresh result each time)
/// and ``LiveResultsObservation`` (`changes()` and `liveResults()`, what changed).
class LiveObservation: ObservationEntry, @unchecked Sendable {
    // Safety of @unchecked Sendable: the mutable state is guarded by `lock`; subclasses guard
    // their own.
    let database: Database
    let lock = NSLock()

    enum Reason { case none, external, tables }
    /// Why a fetch is wanted (tables outrank external: table changes always emit).
    private var pending = Reason.tables
    private var scheduled = false
    private(set) var ended = false
    /// How long to wait before fetching again after a busy error, in milliseconds (0 after a
    /// fetch that succeeded).
    private var retryDelay = 0
    /// When the current run of busy errors began (nil after a fetch that succeeded).
    private var busySince: DispatchTime?
    /// The first wait after a busy error, and the longest, in milliseconds.
    static var firstRetryDelay: Int { 10 }
    static var longestRetryDelay: Int { 500 }
    /// A lock held longer than this (four busy timeouts, at least 30 s) is no longer
    /// transient — a raw `BEGIN` left open on the thread that awaits the sequence, say: the
    /// sequence then ends with the busy error.
    private var busyGiveUpNanoseconds: UInt64 {
        max(30_000_000_000, UInt64(max(0, database.options.busyTimeoutNanoseconds)) &* 4)
    }

    init(database: Database) {
        self.database = database
    }

    // MARK: What subclasses provide

    /// Whether the center should report the rows each commit changed.
    var wantsRowChanges: Bool { false }

    /// The table whose rows it wants (see ``wantsRowChanges``).
    var rowTable: String { "" }

    /// One fetch, on a reader thread, for `reason`: delivers what it found to the consumer, and
    /// returns the tables it read — nil when it read nothing (nothing to read: the tables of
    /// the last read stay those the center routes commits by).
    func fetchAndDeliver(_ reason: Reason) throws -> Set<String>? { fatalError("abstract") }

    /// Ends the consumer's sequence with `error`.
    func finishDelivery(throwing error: Error) { fatalError("abstract") }

    // MARK: Scheduling

    /// Registers with the center and fetches the current result; false when the database is
    /// closed (the sequence then ended with ``ActiveObjectError/databaseClosed``).
    @discardableResult
    func start() -> Bool {
        guard database.observations.add(self) else {
            end(throwing: ActiveObjectError.databaseClosed)
            return false
        }
        schedule()
        return true
    }

    func tablesChanged(_ rows: CommittedRows?) { request(.tables) }

    func externalChange() { request(.external) }

    final func request(_ reason: Reason) {
        let start: Bool = lock.withLock {
            guard !ended else { return false }
            if reason == .tables || pending == .none { pending = reason }
            if scheduled { return false }
            scheduled = true
            return true
        }
        if start { submit() }
    }

    private func schedule() {
        let start: Bool = lock.withLock {
            guard !ended, !scheduled else { return false }
            scheduled = true
            return true
        }
        if start { submit() }
    }

    private func submit() {
        if !database.background.submitRead({ [self] in refresh() }) {
            end(throwing: ActiveObjectError.databaseClosed)
        }
    }

    /// One fetch, on a reader thread.
    private func refresh() {
        let reason: Reason = lock.withLock {
            defer { pending = .none }
            return ended ? .none : pending
        }
        guard reason != .none else {
            lock.withLock { scheduled = false }
            return
        }
        let thread = ThreadState.current
        thread.jobDatabase = database
        defer { thread.jobDatabase = nil }
        do {
            let startedAt = database.observations.currentCommitSequence
            if let read = try fetchAndDeliver(reason),
               database.observations.record(tables: read, for: self, fetchStartedAt: startedAt) {
                // The fetch read a new table, and a commit landed meanwhile: it may have missed
                // it (its snapshot may be older). Fetch again, after delivering this result.
                tablesChanged(nil)
            }
        } catch where Self.isTransient(error) {
            let now = DispatchTime.now()
            let since = lock.withLock { () -> DispatchTime in
                if busySince == nil { busySince = now }
                return busySince!
            }
            if now.uptimeNanoseconds &- since.uptimeNanoseconds > busyGiveUpNanoseconds {
                end(throwing: error)
            } else {
                retry(reason)
            }
            return
        } catch {
            end(throwing: error)
            return
        }
        let again: Bool = lock.withLock {
            retryDelay = 0
            busySince = nil
            if pending == .none || ended {
                scheduled = false
                return false
            }
            return true
        }
        if again { submit() }
    }

    /// Whether a failed fetch may succeed if tried again: SQLite's `busy` and `locked` (another
    /// connection or process holds a lock), and the library's own `busy` (no reader became
    /// free, the writer stayed held by another thread's transaction — reads use the writer
    /// in memory and inside transactions) once the busy timeout passed.
    static func isTransient(_ error: Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .busy || error.resultCode == .locked
    }

    /// The fetch met a lock: fetch again later, for the same reason, without holding a thread
    /// or a connection meanwhile. The wait doubles from ``firstRetryDelay`` up to
    /// ``longestRetryDelay`` while the lock stays; the fetch is tried again until it succeeds
    /// (its result is then fresh, after every commit so far), the observation is cancelled,
    /// the database is closed, or the lock outlasts ``busyGiveUpNanoseconds``.
    private func retry(_ reason: Reason) {
        let delay: Int? = lock.withLock {
            guard !ended else {
                scheduled = false
                return nil
            }
            // Changes that arrived meanwhile are covered by the next fetch; keep the strongest reason.
            if reason == .tables || pending == .none { pending = reason }
            retryDelay = retryDelay == 0 ? Self.firstRetryDelay : min(retryDelay * 2, Self.longestRetryDelay)
            return retryDelay
        }
        guard let delay else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) { [self] in
            let stillWanted: Bool = lock.withLock {
                if ended { scheduled = false }
                return !ended
            }
            if stillWanted { submit() }
        }
    }

    /// Ends the sequence with an error (database closed, a failed fetch).
    func end(throwing error: Error) {
        guard lock.withLock({ () -> Bool in
            defer { ended = true }
            return !ended
        }) else { return }
        database.observations.remove(self)
        finishDelivery(throwing: error)
    }

    /// The consumer left the loop or its task was cancelled.
    final func cancel() {
        lock.withLock { ended = true }
        database.observations.remove(self)
    }
}

/// The observation behind `values()`: fetches the whole result each time, with a fingerprint
/// of its rows, and yields it to its stream — after a commit of this database, always; after
/// another connection's commit, only when the fingerprint changed.
final class ValuesObservation<Value>: LiveObservation, @unchecked Sendable {
    // Safety of @unchecked Sendable: `lastFingerprint` is guarded by `lock`; `fetch` is
    // `@Sendable`; results cross to the consumer through the stream as `sending` values.
    private let fetch: @Sendable () throws -> sending Value
    private let continuation: AsyncThrowingStream<Value, Error>.Continuation
    private var lastFingerprint: (value: UInt64, rows: Int)?

    init(database: Database, fetch: @escaping @Sendable () throws -> sending Value,
         continuation: AsyncThrowingStream<Value, Error>.Continuation) {
        self.fetch = fetch
        self.continuation = continuation
        super.init(database: database)
    }

    @discardableResult
    override func start() -> Bool {
        continuation.onTermination = { [weak self] _ in self?.cancel() }
        return super.start()
    }

    override func fetchAndDeliver(_ reason: Reason) throws -> Set<String>? {
        let (value, read, fingerprint) = try database.observedRead(fetch)
        let emit: Bool = lock.withLock {
            defer { lastFingerprint = fingerprint }
            guard !ended else { return false }
            // Another process's commit emits only if the result changed.
            return reason == .tables || lastFingerprint == nil || lastFingerprint! != fingerprint
        }
        if emit { continuation.yield(value) }
        return read
    }

    override func finishDelivery(throwing error: Error) {
        continuation.finish(throwing: error)
    }
}

extension Database {
    /// Runs an observed fetch in one read snapshot, recording the tables it reads and the
    /// fingerprint of the rows it steps through.
    func observedRead<T>(_ fetch: () throws -> T) throws -> (T, Set<String>, (value: UInt64, rows: Int)) {
        try observedRead { _ in try fetch() }
    }

    /// The same, giving `fetch` the connection it reads on; without `fingerprinting`, the
    /// fingerprint is left empty (live results hash rows themselves).
    func observedRead<T>(fingerprinting: Bool = true, _ fetch: (Connection) throws -> T)
        throws -> (T, Set<String>, (value: UInt64, rows: Int)) {
        try withAccess(.readBlock) { access in
            let connection = access.connection
            let recorder = ReadRecorder(), fingerprint = ResultFingerprint()
            connection.readRecorder = recorder
            connection.fingerprint = fingerprinting ? fingerprint : nil
            defer {
                connection.readRecorder = nil
                connection.fingerprint = nil
            }
            let value = try fetch(connection)
            return (value, recorder.tables, (fingerprint.value, fingerprint.rows))
        }
    }
}
