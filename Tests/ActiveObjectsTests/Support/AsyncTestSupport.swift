import Foundation
import Testing
@testable import ActiveObjects

// Shared helpers for the async, live-query and key suites: the model and database of
// `withAsyncModelDB`, bounded waits, and a probe that pulls a live sequence with timeouts.

/// The model of `withAsyncModelDB`'s database (and of AsyncTests); records the hooks it ran.
final class AsyncNote: ModelTestRecord {
    @Column var title = ""
    @Column var rank = 0
    @Column var done = false

    var hooksRan: [String] = []
    override func willSave() throws { hooksRan.append("willSave") }
    override func didSave() { hooksRan.append("didSave") }
    override func willDelete() throws { hooksRan.append("willDelete") }
    override func didDelete() { hooksRan.append("didDelete") }
}

/// Runs `body` with a fresh WAL file database for the test models (task-local, so the async
/// calls below find it on the library's threads through the job's database).
nonisolated(nonsending) func withAsyncModelDB<T>(_ body: nonisolated(nonsending) (Database) async throws -> T) async throws -> T {
    let folder = try TemporaryDirectory()
    let db = try Database(path: folder.path("async.sqlite"))
    defer { try? db.close() }
    return try await ModelTestDB.$current.withValue(db) {
        try AsyncNote.createTable()
        return try await body(db)
    }
}

/// Waits for `semaphore` without blocking a thread of the cooperative pool (it polls), and
/// fails the test when it is not signalled within `seconds`. Be generous: the signalling task
/// may itself wait for a pool thread while the suites running beside it hold both.
func waitForSignal(_ semaphore: DispatchSemaphore, seconds: Double) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while semaphore.wait(timeout: .now()) != .success {
        guard Date() < deadline else { throw TestFailure(message: "not signalled within \(seconds) s") }
        try await Task.sleep(nanoseconds: 1_000_000)
    }
}

/// Fails the test (instead of hanging CI) when `body` takes longer than `seconds`.
func withTimeout<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw TestFailure(message: "timed out after \(seconds) s")
        }
        group.cancelAll()
        return value
    }
}

/// Pulls elements from a live sequence one at a time, each with a timeout, so that a bug fails
/// the test instead of hanging CI.
final class LiveProbe<Element: Sendable>: @unchecked Sendable {
    // Safety: `received` is guarded by `lock`; the task is only touched by the test.
    private let lock = NSLock()
    private var received: [Element] = []
    private var failure: Error?
    private var finished = false
    private var task: Task<Void, Never>?

    init<S: AsyncSequence & Sendable>(_ sequence: S, map: @escaping @Sendable (S.Element) -> Element) {
        task = Task {
            do {
                for try await value in sequence {
                    let mapped = map(value)
                    lock.withLock { received.append(mapped) }
                }
                lock.withLock { finished = true }
            } catch {
                lock.withLock { failure = error; finished = true }
            }
        }
    }

    var elements: [Element] { lock.withLock { received } }
    var error: Error? { lock.withLock { failure } }
    var isFinished: Bool { lock.withLock { finished } }

    /// Waits until `count` elements arrived (or the timeout passes: generous, since the tests
    /// running in parallel share two cores and the cooperative pool with this one).
    @discardableResult
    func waitFor(count: Int, timeout: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if lock.withLock({ received.count >= count }) { return true }
            if let error { Issue.record("the sequence ended with \(error)", sourceLocation: sourceLocation) }
            if isFinished { return false }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        return false
    }

    /// Waits until the last element arrived satisfies `condition` (or the timeout passes).
    @discardableResult
    func waitUntilLast(timeout: Double = 30, _ condition: (Element) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let last = elements.last, condition(last) { return true }
            if isFinished { return false }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        return false
    }

    /// Waits until the sequence ended.
    func waitForEnd(timeout: Double = 30) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if isFinished { return true }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        return false
    }

    /// Asserts that nothing more arrives for `seconds`.
    func staysAt(_ count: Int, for seconds: Double = 0.3) async -> Bool {
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        return elements.count == count
    }

    func cancel() { task?.cancel() }
}

/// Runs `body` synchronously: inside it, calls resolve to the synchronous forms even in an
/// async test (where Swift prefers the async overloads), for tests of what the calling thread
/// sees (`Database.changes`, `lastInsertedRowID`).
func synchronously<T>(_ body: () throws -> T) rethrows -> T { try body() }
