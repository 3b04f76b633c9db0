import CSQLite
import Foundation

/// The live queries of one ``Database``: told about every commit of the writer (with the
/// tables it changed) and about commits by other connections and processes (by the
/// ``ChangeMonitor``), it asks the observations that may be affected to fetch again.
///
/// It keeps the tables each observation's last fetch read, and a count per table over all
/// observations, so that a commit to tables nobody observes costs one lock and a lookup per
/// written table — not a call into every observation; the answer for the last statement is
/// kept until the observed tables change (cached statements come back with the same info).
///
/// Nothing holds the center weakly: a weak reference would give it a side table, and every
/// retain of it (one per commit) would take the runtime's slow path.
final class ObservationCenter: CommitSink, @unchecked Sendable {
    // Safety of @unchecked Sendable: `entries`, `tableCounts`, `unknownTables`, `monitor`,
    // `link`, `closed` and the cached answer are guarded by `lock`; `observing` is an atomic flag.
    private let lock = NSLock()
    private struct Registration {
        let entry: any ObservationEntry
        /// What the last fetch read; nil before the first fetch (every commit concerns it).
        var tables: Set<String>?
    }
    private var entries: [ObjectIdentifier: Registration] = [:]
    /// How many registrations read each table.
    private var tableCounts: [String: Int] = [:]
    /// How many registrations have not fetched yet.
    private var unknownTables = 0
    private var monitor: ChangeMonitor?
    /// How the monitor reaches the center; cut when the monitor stops.
    private var link: MonitorLink?
    private var closed = false
    /// The last single-statement commit checked, and whether it wrote an observed table;
    /// valid while `tableCounts` and `unknownTables` stay as they were (`generation`).
    private var lastInfo: StatementInfo?
    private var lastInfoTouches = false
    private var lastInfoGeneration = 0
    private var generation = 1
    private let observing: UnsafeMutablePointer<CLong>
    /// Opens a monitor of other connections' commits, or nil when none can happen (in memory).
    private let makeMonitor: (@escaping @Sendable () -> Void) -> ChangeMonitor?

    init(makeMonitor: @escaping (@escaping @Sendable () -> Void) -> ChangeMonitor?) {
        self.makeMonitor = makeMonitor
        observing = UnsafeMutablePointer<CLong>.allocate(capacity: 1)
        observing.initialize(to: 0)
    }

    deinit { observing.deallocate() }

    var isObserving: Bool { activeobjects_atomic_load(observing) != 0 }

    /// How many observations are registered (tests).
    var count: Int { lock.withLock { entries.count } }

    /// Whether the monitor of other connections runs (tests).
    var isMonitoring: Bool { lock.withLock { monitor != nil } }

    /// The Linux thread id of the monitor's thread, once it runs (tests).
    var monitorThreadID: String? { lock.withLock { monitor }?.threadID }

    /// Registers an observation; false when the database is closed.
    func add(_ entry: any ObservationEntry) -> Bool {
        let start: Bool = lock.withLock {
            guard !closed else { return false }
            if entries.updateValue(Registration(entry: entry, tables: nil), forKey: ObjectIdentifier(entry)) == nil {
                unknownTables += 1
                generation += 1
            }
            activeobjects_atomic_store(observing, 1)
            if monitor == nil {
                let link = MonitorLink(self)
                monitor = makeMonitor { link.changed() }
                if monitor != nil { self.link = link } else { link.cut() }
            }
            return true
        }
        return start
    }

    /// Forgets an observation; the monitor stops with the last one.
    func remove(_ entry: any ObservationEntry) {
        let stopped: (ChangeMonitor, MonitorLink?)? = lock.withLock {
            guard let registration = entries.removeValue(forKey: ObjectIdentifier(entry)) else { return nil }
            forget(registration.tables)
            guard entries.isEmpty else { return nil }
            activeobjects_atomic_store(observing, 0)
            defer {
                monitor = nil
                link = nil
            }
            return monitor.map { ($0, link) }
        }
        stopped?.1?.cut()
        stopped?.0.stop()
    }

    /// An observation's fetch read `tables`: later commits concern it when they write one.
    func record(tables: Set<String>, for entry: any ObservationEntry) {
        lock.withLock {
            guard var registration = entries[ObjectIdentifier(entry)] else { return }
            forget(registration.tables)
            for table in tables { tableCounts[table, default: 0] += 1 }
            generation += 1
            registration.tables = tables
            entries[ObjectIdentifier(entry)] = registration
        }
    }

    /// Takes a registration's tables out of the counts (under `lock`).
    private func forget(_ tables: Set<String>?) {
        generation += 1
        guard let tables else {
            unknownTables -= 1
            return
        }
        for table in tables {
            if let count = tableCounts[table], count > 1 { tableCounts[table] = count - 1 } else { tableCounts[table] = nil }
        }
    }

    /// The writer committed: observations that read one of the changed tables (or have not
    /// fetched yet) fetch again.
    ///
    /// A commit that changed the schema (a table, view, index or trigger created, altered or
    /// dropped) makes every observation fetch again, emitting only if its result changed:
    /// what its reads read may have changed with it (a view redefined over another table),
    /// and the fetch learns it (statements that SQLite re-compiles learn their tables again,
    /// see ``Connection/automaticRecompiles``).
    func committed(_ statements: [StatementInfo]) {
        if statements.contains(where: \.changesSchema) {
            schemaChanged(statements)
            return
        }
        let concerned: [any ObservationEntry] = lock.withLock {
            var touchesObserved = unknownTables > 0
            if !touchesObserved {
                if statements.count == 1, let info = lastInfo, info === statements[0], lastInfoGeneration == generation {
                    touchesObserved = lastInfoTouches
                } else {
                    search: for info in statements {
                        for table in info.writtenTables where tableCounts[table] != nil {
                            touchesObserved = true
                            break search
                        }
                    }
                    if statements.count == 1 {
                        lastInfo = statements[0]
                        lastInfoTouches = touchesObserved
                        lastInfoGeneration = generation
                    }
                }
            }
            guard touchesObserved else { return [] }
            var changed = Set<String>()
            for info in statements { changed.formUnion(info.writtenTables) }
            return entries.values.compactMap { registration in
                guard let tables = registration.tables else { return registration.entry }
                return tables.isDisjoint(with: changed) ? nil : registration.entry
            }
        }
        for entry in concerned { entry.tablesChanged() }
    }

    /// A commit that changed the schema: observations that read a table whose rows changed
    /// fetch again and emit; every other one fetches again and emits only if its result changed.
    private func schemaChanged(_ statements: [StatementInfo]) {
        var rowsChanged = Set<String>()
        for info in statements where !info.changesSchema { rowsChanged.formUnion(info.writtenTables) }
        let registrations = lock.withLock { Array(entries.values) }
        for registration in registrations {
            if registration.tables.map({ !$0.isDisjoint(with: rowsChanged) }) ?? true {
                registration.entry.tablesChanged()
            } else {
                registration.entry.externalChange()
            }
        }
    }

    /// Another connection or process committed: every observation fetches again (it emits
    /// only if its result changed, since the tables are unknown).
    func externalChange() {
        for registration in lock.withLock({ Array(entries.values) }) {
            registration.entry.externalChange()
        }
    }

    /// The database closed: every observation ends with ``ActiveObjectError/databaseClosed``.
    func close() {
        let (all, stopped, cut): ([any ObservationEntry], ChangeMonitor?, MonitorLink?) = lock.withLock {
            closed = true
            activeobjects_atomic_store(observing, 0)
            defer {
                entries.removeAll()
                tableCounts.removeAll()
                unknownTables = 0
                generation += 1
                lastInfo = nil
                monitor = nil
                link = nil
            }
            return (entries.values.map(\.entry), monitor, link)
        }
        cut?.cut()
        stopped?.stop()
        for entry in all { entry.end(throwing: ActiveObjectError.databaseClosed) }
    }
}

/// How the change monitor calls the center: holds it strongly (no weak reference to the
/// center, see ``ObservationCenter``) until the monitor stops, which breaks the cycle
/// center → monitor → link → center.
final class MonitorLink: @unchecked Sendable {
    // Safety of @unchecked Sendable: `center` is guarded by `lock`.
    private let lock = NSLock()
    private var center: ObservationCenter?

    init(_ center: ObservationCenter) { self.center = center }

    /// Another connection committed.
    func changed() { lock.withLock { center }?.externalChange() }

    /// The monitor stops: calls from now on do nothing.
    func cut() { lock.withLock { center = nil } }
}

/// One running observation, as the center sees it.
protocol ObservationEntry: AnyObject, Sendable {
    /// A commit of this database wrote a table the last fetch read.
    func tablesChanged()
    func externalChange()
    func end(throwing error: Error)
}

/// One iteration of a live query: fetches on a reader thread, in one snapshot, recording the
/// tables the fetch reads and a fingerprint of its rows; yields results to its stream.
///
/// At most one fetch runs or waits at a time; changes that arrive meanwhile make it fetch
/// once more afterwards, so intermediate states may be skipped but the last fetch always
/// starts after the last change.
final class Observation<Value>: ObservationEntry, @unchecked Sendable {
    // Safety of @unchecked Sendable: the mutable state is guarded by `lock`; `fetch` is
    // `@Sendable`; results cross to the consumer through the stream as `sending` values.
    private let database: Database
    private let fetch: @Sendable () throws -> sending Value
    private let continuation: AsyncThrowingStream<Value, Error>.Continuation
    private let lock = NSLock()

    private enum Reason { case none, external, tables }
    /// Why a fetch is wanted (tables outrank external: table changes always emit).
    private var pending = Reason.tables
    private var scheduled = false
    private var ended = false
    private var lastFingerprint: (value: UInt64, rows: Int)?
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

    init(database: Database, fetch: @escaping @Sendable () throws -> sending Value,
         continuation: AsyncThrowingStream<Value, Error>.Continuation) {
        self.database = database
        self.fetch = fetch
        self.continuation = continuation
    }

    /// Registers with the center and fetches the current result.
    func start() {
        guard database.observations.add(self) else {
            end(throwing: ActiveObjectError.databaseClosed)
            return
        }
        continuation.onTermination = { [weak self] _ in self?.cancel() }
        schedule()
    }

    func tablesChanged() { request(.tables) }

    func externalChange() { request(.external) }

    private func request(_ reason: Reason) {
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
        if !database.readerLane.submit({ [self] in refresh() }) {
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
        let context = ThreadContext.current
        context.jobDatabase = database
        defer { context.jobDatabase = nil }
        do {
            let (value, read, fingerprint) = try database.observedRead(fetch)
            database.observations.record(tables: read, for: self)
            let emit: Bool = lock.withLock {
                defer { lastFingerprint = fingerprint }
                guard !ended else { return false }
                // Another process's commit emits only if the result changed.
                return reason == .tables || lastFingerprint == nil || lastFingerprint! != fingerprint
            }
            if emit { continuation.yield(value) }
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

    /// Ends the stream with an error (database closed, a failed fetch).
    func end(throwing error: Error) {
        guard lock.withLock({ () -> Bool in
            defer { ended = true }
            return !ended
        }) else { return }
        database.observations.remove(self)
        continuation.finish(throwing: error)
    }

    /// The consumer left the loop or its task was cancelled.
    private func cancel() {
        lock.withLock { ended = true }
        database.observations.remove(self)
    }
}

extension Database {
    /// Runs an observed fetch in one read snapshot, recording the tables it reads and the
    /// fingerprint of the rows it steps through.
    func observedRead<T>(_ fetch: () throws -> T) throws -> (T, Set<String>, (value: UInt64, rows: Int)) {
        try read {
            try withReader { connection in
                let recorder = ReadRecorder(), fingerprint = ResultFingerprint()
                connection.readRecorder = recorder
                connection.fingerprint = fingerprint
                defer {
                    connection.readRecorder = nil
                    connection.fingerprint = nil
                }
                let value = try fetch()
                return (value, recorder.tables, (fingerprint.value, fingerprint.rows))
            }
        }
    }
}
