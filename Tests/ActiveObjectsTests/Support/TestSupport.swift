import Foundation
import Testing
@testable import ActiveObjects

/// A fresh, unique folder under the system temporary directory, removed by `cleanUp()`.
struct TemporaryDirectory: ~Copyable {
    let url: URL

    init(_ function: String = #function) throws {
        let name = "ActiveObjectsTests-\(function.prefix(while: { $0 != "(" }))-\(UUID().uuidString)"
        url = FileManager.default.temporaryDirectory.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of a file inside the folder.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The names of the files in the folder, sorted.
    func fileNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Collects the SQL strings (and durations) reported by `Database.Options.trace`.
final class TraceRecorder: @unchecked Sendable {
    // Safety: `entries` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var entries: [(sql: String, duration: Duration)] = []

    /// A trace hook that appends to this recorder.
    var hook: @Sendable (String, Duration) -> Void {
        { [self] sql, duration in lock.withLock { entries.append((sql, duration)) } }
    }

    var statements: [String] { lock.withLock { entries.map(\.sql) } }
    var durations: [Duration] { lock.withLock { entries.map(\.duration) } }
    var all: [(sql: String, duration: Duration)] { lock.withLock { entries } }

    func removeAll() { lock.withLock { entries.removeAll() } }
}

/// Options with a trace hook feeding `recorder`.
func tracedOptions(_ recorder: TraceRecorder, _ base: Database.Options = Database.Options()) -> Database.Options {
    var options = base
    options.trace = recorder.hook
    return options
}

/// A thread-safe box for values written by several threads: the library's own `LockedValue`.
typealias Locked = LockedValue

extension LockedValue {
    /// The value, read under the lock.
    var current: Value { withLock { $0 } }
}

// MARK: - Error matching

/// The `DatabaseError` thrown by `body`, or nil (recorded as a test failure) when it threw
/// something else or nothing.
@discardableResult
func expectDatabaseError(
    _ code: ResultCode,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> DatabaseError? {
    do {
        try body()
        Issue.record("expected DatabaseError \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as DatabaseError {
        #expect(error.resultCode == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected DatabaseError \(code), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// The `ActiveObjectError` thrown by `body`, when `matches` accepts it.
@discardableResult
func expectActiveObjectError(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void,
    matches: (ActiveObjectError) -> Bool
) -> ActiveObjectError? {
    do {
        try body()
        Issue.record("expected an ActiveObjectError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as ActiveObjectError {
        #expect(matches(error), "unexpected ActiveObjectError: \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected an ActiveObjectError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

extension ActiveObjectError {
    var isTypeMismatch: Bool { if case .typeMismatch = self { true } else { false } }
    var isInvalidArgument: Bool { if case .invalidArgument = self { true } else { false } }
    var isInvalidSQL: Bool { if case .invalidSQL = self { true } else { false } }
    var isDatabaseClosed: Bool { if case .databaseClosed = self { true } else { false } }
    var isUnknownColumn: Bool { if case .unknownColumn = self { true } else { false } }
    var isMisuse: Bool { if case .misuse = self { true } else { false } }
}

/// Reads a whole file.
func fileBytes(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

/// Runs `sql` and returns the single integer it produces.
func count(_ db: Database, _ sql: String, _ arguments: [any ColumnValue] = []) throws -> Int {
    try #require(db.scalar(sql, arguments) as Int?)
}

struct TestFailure: Error, Equatable {
    var message = "test failure"
}

/// A small deterministic random generator (SplitMix64), so failures can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// MARK: - Connections, for tests that look below the public API

extension Database {
    /// Runs `body` with the writer connection, as a write would (tests that inspect it).
    func withWriter<T>(_ body: (Connection) throws -> T) throws -> T {
        try withAccess(.write) { try body($0.connection) }
    }

    /// Runs `body` with the connection a read would use (tests that inspect it).
    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        try withAccess(.read) { try body($0.connection) }
    }
}

// MARK: - Where a test's database lives

/// The kinds of database a suite runs on: what users run (a file with the default options:
/// WAL, a writer and readers), one connection for everything, and memory.
enum TestStorage: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A file with the default options: WAL, one writer, up to four readers.
    case file
    /// A file with `maximumReaderCount = 0`: one connection serves everything.
    case fileOneConnection
    /// An in-memory database (one connection).
    case memory

    var testDescription: String { rawValue }

    /// Opens a database of this kind with `options` (the reader count is this kind's), in a
    /// fresh folder removed with the returned folder box.
    func open(_ name: String = "test.sqlite", options: Database.Options = Database.Options()) throws -> (Database, TemporaryFolder) {
        let folder = try TemporaryFolder()
        var options = options
        switch self {
        case .file:
            return (try Database(path: folder.path(name), options: options), folder)
        case .fileOneConnection:
            options.maximumReaderCount = 0
            return (try Database(path: folder.path(name), options: options), folder)
        case .memory:
            return (try Database.inMemory(options: options), folder)
        }
    }
}

/// A temporary folder removed when the last reference to it goes (a class, so that fixtures,
/// which are copied, can keep one).
final class TemporaryFolder: Sendable {
    let url: URL

    init(_ function: String = #function) throws {
        let name = "ActiveObjectsTests-\(function.prefix(while: { $0 != "(" }))-\(UUID().uuidString)"
        url = FileManager.default.temporaryDirectory.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

// MARK: - Acting from another thread

/// Runs `body` on a thread of its own and waits for it, at most `seconds`: for a test that
/// acts while its own thread is inside a call (a trace hook, a `didLoad` hook). Nil when it
/// did not finish in time.
@discardableResult
func runOnAnotherThread<T: Sendable>(timeout seconds: Double = 10,
                                     _ body: @escaping @Sendable () throws -> T) -> Result<T, any Error>? {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
        done.signal()
    }.start()
    _ = done.wait(timeout: .now() + seconds)
    return result.current
}

/// Holds `db` from another thread — its writer in a transaction (`writer: true`), else a
/// reader in a `read` block — until the returned closure is called.
func hold(_ db: Database, writer: Bool = true) -> @Sendable () -> Void {
    let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
    Thread {
        if writer {
            try? db.transaction {
                started.signal()
                _ = release.wait(timeout: .now() + 30)
            }
        } else {
            try? db.read {
                _ = try db.scalar("SELECT 1") as Int?
                started.signal()
                _ = release.wait(timeout: .now() + 30)
            }
        }
    }.start()
    _ = started.wait(timeout: .now() + 30)
    return { release.signal() }
}
