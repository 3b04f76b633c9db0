import Foundation

extension Database {
    /// Which of the database's worker lanes runs an async call's SQLite work.
    enum Lane { case reading, writing }

    /// Runs `work` on one of the database's own queues (``BackgroundWork``) and suspends the
    /// calling task until it is done: no thread of Swift's cooperative pool waits for a
    /// connection or runs SQLite.
    ///
    /// Cancelling the task before `work` starts makes the call throw `CancellationError`
    /// without running it; once started, it runs to completion (a write or a transaction is
    /// never left half done: it commits or rolls back as a whole). The result is `sending`:
    /// objects created by `work` become the caller's.
    ///
    /// The caller's ``ActiveObject/withoutTimestamps(_:)-(()->R)`` scope goes with the work
    /// (a task-local value does not reach the queue's thread by itself): the body of an
    /// `await db.transaction { }` inside the scope saves without stamps.
    func perform<T>(_ lane: Lane, _ work: sending @escaping () throws -> T) async throws -> sending T {
        try Task.checkCancellation()
        let job: BackgroundJob<T>
        if Timestamps.areSuspended {
            job = BackgroundJob(database: self) { try ActiveObject.withoutTimestamps(work) }
        } else {
            job = BackgroundJob(database: self, work)
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                job.continuation = continuation
                let submitted = lane == .writing
                    ? background.submitWrite { job.run() } : background.submitRead { job.run() }
                if !submitted { job.fail(ActiveObjectError.databaseClosed) }
            }
        } onCancel: {
            job.cancel()
        }
    }

    // MARK: Async raw SQL

    /// Async form of ``execute(_:_:)``: runs on the database's writer thread.
    ///
    /// ```swift
    /// try await db.execute("UPDATE person SET age = age + 1 WHERE id = ?", [42])
    /// ```
    /// - Throws: as ``execute(_:_:)``; a raw `BEGIN` is refused
    ///   (``ActiveObjectError/misuse(_:)``): use ``transaction(_:)-1zlox`` instead.
    public func execute(_ sql: String, _ arguments: [(any ColumnValue)?] = []) async throws {
        try await perform(.writing) { try self.execute(sql, arguments) }
    }

    /// Async form of ``execute(_:arguments:)``.
    /// - Throws: as ``execute(_:_:)-93qp6``.
    public func execute(_ sql: String, arguments: [(any ColumnValue)?]) async throws {
        try await execute(sql, arguments)
    }

    /// Async form of ``rows(_:_:)``: runs on a reader thread.
    /// - Throws: as ``rows(_:_:)``.
    public func rows(_ sql: String, _ arguments: [(any ColumnValue)?] = []) async throws -> [Row] {
        try await perform(.reading) { try self.rows(sql, arguments) }
    }

    /// Async form of ``rows(_:arguments:)``.
    /// - Throws: as ``rows(_:_:)-8kx75``.
    public func rows(_ sql: String, arguments: [(any ColumnValue)?]) async throws -> [Row] {
        try await rows(sql, arguments)
    }

    /// Async form of ``scalar(_:_:)``: runs on a reader thread.
    /// - Throws: as ``scalar(_:_:)``.
    public func scalar<T: ColumnValue>(_ sql: String, _ arguments: [(any ColumnValue)?] = []) async throws -> T? {
        try await perform(.reading) { () throws -> T? in try self.scalar(sql, arguments) }
    }

    /// Async form of ``scalar(_:arguments:)``.
    /// - Throws: as ``scalar(_:_:)-3fqwy``.
    public func scalar<T: ColumnValue>(_ sql: String, arguments: [(any ColumnValue)?]) async throws -> T? {
        try await scalar(sql, arguments)
    }

    /// Async form of ``read(_:)``: `body` runs on a reader thread, in one snapshot; its result
    /// is handed to the caller.
    ///
    /// ```swift
    /// let everyone = try await db.read { try Person.findAll() }
    /// ```
    /// - Throws: as ``read(_:)``.
    @discardableResult
    public func read<T>(_ body: sending @escaping () throws -> T) async throws -> sending T {
        try await perform(.reading) { try self.read(body) }
    }

    /// Async form of ``transaction(_:)``: `body` runs on the database's writer thread, in a
    /// transaction; its result is handed to the caller.
    ///
    /// ```swift
    /// try await db.transaction { try Person.delete(where: ["active": false]) }
    /// ```
    /// - Throws: as ``transaction(_:)``.
    @discardableResult
    public func transaction<T>(_ body: sending @escaping () throws -> T) async throws -> sending T {
        try await perform(.writing) { try self.transaction(body) }
    }
}

/// One async call's work, waiting in a ``BackgroundWork`` queue: runs once, or fails when cancelled
/// before it started or when the lane refused it.
final class BackgroundJob<T>: @unchecked Sendable {
    // Safety of @unchecked Sendable: `work` was passed as `sending` (no one else holds what it
    // captures) and is called once, on the lane's thread; `state` and `continuation` are
    // guarded by `lock`. The result is transferred out through the continuation.
    private let lock = NSLock()
    private var work: (() throws -> T)?
    var continuation: CheckedContinuation<T, Error>?
    private var cancelled = false
    private let database: Database

    init(database: Database, _ work: sending @escaping () throws -> T) {
        self.database = database
        self.work = work
    }

    /// Marks the job cancelled: if it has not started, it will not run.
    func cancel() {
        lock.withLock { cancelled = true }
    }

    /// Resumes the caller with `error` without running the work.
    func fail(_ error: Error) {
        let continuation = lock.withLock { () -> CheckedContinuation<T, Error>? in
            defer { self.continuation = nil; work = nil }
            return self.continuation
        }
        continuation?.resume(throwing: error)
    }

    /// Runs the work on the current (background) thread and resumes the caller.
    func run() {
        let (work, continuation, cancelled) = lock.withLock { () -> ((() throws -> T)?, CheckedContinuation<T, Error>?, Bool) in
            defer { self.work = nil; self.continuation = nil }
            return (self.work, self.continuation, self.cancelled)
        }
        guard let work, let continuation else { return }
        if cancelled {
            continuation.resume(throwing: CancellationError())
            return
        }
        let thread = ThreadState.current
        thread.jobDatabase = database
        defer { thread.jobDatabase = nil }
        do {
            continuation.resume(returning: try work())
        } catch {
            continuation.resume(throwing: error)
        }
    }
}
