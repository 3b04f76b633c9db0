import Foundation
import Testing
@testable import ActiveObjects

/// The reader pool gives a thread back the idle connection it used last (warm in its CPU's
/// cache; threads reading at once keep to their own connections), and otherwise the first
/// idle one.
@Suite struct ReaderPoolAffinityTests {
    static func pool(_ folder: borrowing TemporaryDirectory, maximumCount: Int) throws -> ReaderPool {
        let path = folder.path("affinity.sqlite")
        let writer = try Connection(path: path, options: Database.Options(), role: .writer)
        defer { writer.lock.withLock { writer.closeNow() } }
        return ReaderPool(maximumCount: maximumCount, serial: -1) {
            try Connection(path: path, options: Database.Options(), role: .reader)
        }
    }

    @Test func aThreadGetsBackTheConnectionItUsedLast() throws {
        let folder = try TemporaryDirectory()
        let pool = try Self.pool(folder, maximumCount: 3)
        defer { pool.close() }
        let timeout: Int64 = 1_000_000_000
        // Four threads' states (the pool keeps each thread's last connection there).
        let threads = (0...4).map { _ in ThreadState() }
        let first = try pool.lease(for: threads[1], timeout: timeout)
        let second = try pool.lease(for: threads[2], timeout: timeout)
        let third = try pool.lease(for: threads[3], timeout: timeout)
        pool.giveBack(first)
        pool.giveBack(second)
        pool.giveBack(third)
        // Each thread finds its own again, whatever the order they come back in.
        let again1 = try pool.lease(for: threads[1], timeout: timeout)
        let again3 = try pool.lease(for: threads[3], timeout: timeout)
        let again2 = try pool.lease(for: threads[2], timeout: timeout)
        #expect(again1 === first)
        #expect(again2 === second)
        #expect(again3 === third)
        pool.giveBack(again2)
        pool.giveBack(again1)
        // A thread without a connection of its own gets the first idle one.
        let stranger = try pool.lease(for: threads[4], timeout: timeout)
        #expect(stranger === first)
        // Thread 2 still finds its own, although another was given back after it.
        pool.giveBack(stranger)
        let other = try pool.lease(for: threads[2], timeout: timeout)
        #expect(other === second)
        pool.giveBack(other)
        pool.giveBack(again3)
        #expect(pool.openCount == 3)
    }
}
