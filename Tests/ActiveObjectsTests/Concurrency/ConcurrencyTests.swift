import Dispatch
import Foundation
import Testing
@testable import ActiveObjects

/// One `Database` shared by threads and tasks; several databases on one file.
@Suite struct ConcurrencyTests {
    enum Storage: String, CaseIterable, CustomTestStringConvertible {
        case memory, file
        var testDescription: String { rawValue }
    }

    static func open(_ storage: Storage, _ dir: borrowing TemporaryDirectory) throws -> Database {
        let db = storage == .memory ? try Database.inMemory() : try Database(path: dir.path("shared.sqlite"))
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, thread INTEGER, i INTEGER, UNIQUE(thread, i))")
        try db.execute("CREATE TABLE counter(value INTEGER)")
        try db.execute("INSERT INTO counter VALUES (0)")
        return db
    }

    @Test(arguments: Storage.allCases)
    func manyThreadsInsertingAtOnce(_ storage: Storage) throws {
        let dir = try TemporaryDirectory()
        let db = try Self.open(storage, dir)
        let threads = 8, insertsPerThread = 200
        let errors = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for i in 0..<insertsPerThread {
                do {
                    try db.execute("INSERT INTO t(thread, i) VALUES (?, ?)", [thread, i])
                    if i.isMultiple(of: 50) { _ = try db.rows("SELECT count(*) FROM t WHERE thread = ?", [thread]) }
                } catch {
                    errors.withLock { $0.append("\(thread)/\(i): \(error)") }
                }
            }
        }
        #expect(errors.current.isEmpty, "\(errors.current.count) failures, e.g. \(errors.current.prefix(3))")
        #expect(try count(db, "SELECT count(*) FROM t") == threads * insertsPerThread)
        #expect(try count(db, "SELECT count(DISTINCT thread * 1000 + i) FROM t") == threads * insertsPerThread)
        for thread in 0..<threads {
            #expect(try count(db, "SELECT count(*) FROM t WHERE thread = ?", [thread]) == insertsPerThread)
        }
    }

    @Test(arguments: Storage.allCases)
    func transactionsOnDifferentThreadsDoNotLoseUpdates(_ storage: Storage) throws {
        let dir = try TemporaryDirectory()
        let db = try Self.open(storage, dir)
        let threads = 8, incrementsPerThread = 25
        let errors = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<incrementsPerThread {
                do {
                    try db.transaction {
                        let value = try count(db, "SELECT value FROM counter")
                        usleep(50)   // invite another thread to interleave
                        try db.execute("UPDATE counter SET value = ?", [value + 1])
                    }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(errors.current.isEmpty, "\(errors.current.count) failures, e.g. \(errors.current.prefix(3))")
        #expect(try count(db, "SELECT value FROM counter") == threads * incrementsPerThread)
    }

    /// With reader connections (a WAL file), a read on another thread never waits for a
    /// transaction: it sees the database as it was before the transaction began. With one
    /// connection (in memory), it waits for the transaction to end. Either way it never sees
    /// uncommitted rows.
    @Test(arguments: Storage.allCases)
    func otherThreadsNeverSeeATransactionsUncommittedWrites(_ storage: Storage) throws {
        let dir = try TemporaryDirectory()
        let db = try Self.open(storage, dir)
        let inside = DispatchSemaphore(value: 0)
        let readerDone = DispatchSemaphore(value: 0)
        let observed = Locked<[Int]>([])
        let readerFinishedInside = Locked(false)
        let hold = 0.3

        Thread.detachNewThread {
            inside.wait()
            let n = (try? count(db, "SELECT count(*) FROM t")) ?? -1
            observed.withLock { $0.append(n) }
            readerDone.signal()
        }

        #expect(throws: TestFailure.self) {
            try db.transaction {
                try db.execute("INSERT INTO t(thread, i) VALUES (1, 1)")
                #expect(try count(db, "SELECT count(*) FROM t") == 1)   // its own write
                inside.signal()
                let finished = readerDone.wait(timeout: .now() + (db.usesReaderConnections ? 10 : hold)) == .success
                readerFinishedInside.withLock { $0 = finished }
                #expect(try count(db, "SELECT count(*) FROM t") == 1)
                throw TestFailure()
            }
        }
        if db.usesReaderConnections {
            #expect(readerFinishedInside.current, "the read waited for the transaction")
        } else {
            #expect(readerFinishedInside.current == false, "one connection: the read must wait")
            #expect(readerDone.wait(timeout: .now() + 10) == .success)
        }
        #expect(observed.current == [0])
    }

    @Test func theSameThreadReentersWhileOthersAreBusy() throws {
        let dir = try TemporaryDirectory()
        let db = try Self.open(.file, dir)
        let errors = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<20 {
                do {
                    try db.transaction {
                        try db.execute("INSERT INTO t(thread, i) VALUES (?, ?)", [thread, i])
                        // Re-entering from the same thread: raw SQL and a nested transaction.
                        let mine = try count(db, "SELECT count(*) FROM t WHERE thread = ?", [thread])
                        if mine != i + 1 { errors.withLock { $0.append("thread \(thread) saw \(mine) rows at \(i)") } }
                        try db.transaction {
                            try db.execute("UPDATE counter SET value = value + 1")
                        }
                    }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(errors.current.isEmpty, "\(errors.current.count) failures, e.g. \(errors.current.prefix(3))")
        #expect(try count(db, "SELECT count(*) FROM t") == 80)
        #expect(try count(db, "SELECT value FROM counter") == 80)
    }

    @Test(arguments: Storage.allCases)
    func swiftConcurrencyTasks(_ storage: Storage) async throws {
        let dir = try TemporaryDirectory()
        let db = try Self.open(storage, dir)
        let tasks = 8, insertsPerTask = 100
        try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for i in 0..<insertsPerTask {
                        if i.isMultiple(of: 10) {
                            try db.transaction {
                                try db.execute("INSERT INTO t(thread, i) VALUES (?, ?)", [task, i])
                                try db.execute("UPDATE counter SET value = value + 1")
                            }
                        } else {
                            try db.execute("INSERT INTO t(thread, i) VALUES (?, ?)", [task, i])
                        }
                    }
                    return try count(db, "SELECT count(*) FROM t WHERE thread = ?", [task])
                }
            }
            for try await inserted in group {
                #expect(inserted == insertsPerTask)
            }
        }
        #expect(try count(db, "SELECT count(*) FROM t") == tasks * insertsPerTask)
        #expect(try count(db, "SELECT value FROM counter") == tasks * insertsPerTask / 10)
    }

    @Test func twoDatabasesOnOneFileWriteConcurrentlyWithoutBusyErrors() throws {
        let dir = try TemporaryDirectory()
        let first = try Self.open(.file, dir)
        let second = try Database(path: dir.path("shared.sqlite"))
        let databases = [first, second]
        let threads = 8, transactionsPerThread = 50
        let errors = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let db = databases[thread % 2]
            for i in 0..<transactionsPerThread {
                do {
                    // Read, then write: a deferred transaction would hit SQLITE_BUSY here.
                    try db.transaction {
                        let value = try count(db, "SELECT value FROM counter")
                        try db.execute("INSERT INTO t(thread, i) VALUES (?, ?)", [thread, i])
                        try db.execute("UPDATE counter SET value = ?", [value + 1])
                    }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(errors.current.isEmpty, "\(errors.current.count) failures, e.g. \(errors.current.prefix(3))")
        #expect(try count(first, "SELECT count(*) FROM t") == threads * transactionsPerThread)
        #expect(try count(second, "SELECT value FROM counter") == threads * transactionsPerThread)
    }

    @Test func closingWhileOtherThreadsWorkFailsThemCleanly() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(x)")
        let unexpected = Locked<[String]>([])
        let started = DispatchSemaphore(value: 0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            if thread == 0 {
                for _ in 1..<4 { started.wait() }
                try? db.close()
                return
            }
            started.signal()
            for i in 0..<500 {
                do {
                    try db.execute("INSERT INTO t VALUES (?)", [i])
                } catch ActiveObjectError.databaseClosed {
                    return
                } catch {
                    unexpected.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        #expect(unexpected.current.isEmpty, "\(unexpected.current.prefix(3))")
        #expect(db.isClosed)
    }
}
