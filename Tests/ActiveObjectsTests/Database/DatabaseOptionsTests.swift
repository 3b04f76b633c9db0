import Foundation
import Testing
@testable import ActiveObjects

/// `Database.Options` values at their limits.
@Suite struct DatabaseOptionsTests {
    /// SQLite's own view of the busy timeout of a database opened with `timeout`.
    func sqliteBusyTimeout(_ timeout: Duration) throws -> Int? {
        var options = Database.Options()
        options.busyTimeout = timeout
        let database = try Database.inMemory(options: options)
        defer { try? database.close() }
        return try database.scalar("PRAGMA busy_timeout")
    }

    /// Reads of `PRAGMA foreign_keys` run on a reader of a file database: every connection
    /// reports the option, on and off, in memory and on file, inside a transaction or not.
    @Test(arguments: [true, false])
    func everyConnectionReportsTheForeignKeysOption(enabled: Bool) throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.foreignKeys = enabled
        for db in [try Database(path: folder.path("fk.sqlite"), options: options), try Database.inMemory(options: options)] {
            defer { try? db.close() }
            #expect(try db.scalar("PRAGMA foreign_keys") == (enabled ? 1 : 0))
            #expect(try db.read { try db.scalar("PRAGMA foreign_keys") as Int? } == (enabled ? 1 : 0))
            #expect(try db.transaction { try db.scalar("PRAGMA foreign_keys") as Int? } == (enabled ? 1 : 0))
        }
    }

    @Test func anEnormousBusyTimeoutSaturatesInsteadOfWrappingToZero() throws {
        var options = Database.Options()
        options.busyTimeout = .seconds(10_000_000_000)
        #expect(options.busyTimeout == .nanoseconds(Int64.max))
        #expect(options.busyTimeout > .seconds(9_000_000_000))
        // SQLite takes milliseconds in an Int32: the longest wait it can do.
        #expect(try sqliteBusyTimeout(.seconds(10_000_000_000)) == Int(Int32.max))
        #expect(try sqliteBusyTimeout(.seconds(Int64.max)) == Int(Int32.max))
        #expect(try sqliteBusyTimeout(.seconds(3_000_000)) == Int(Int32.max))
    }

    @Test func ordinaryTimeoutsAreKeptToTheNanosecond() throws {
        var options = Database.Options()
        options.busyTimeout = .milliseconds(1_500)
        #expect(options.busyTimeout == .milliseconds(1_500))
        options.busyTimeout = .nanoseconds(123_456_789)
        #expect(options.busyTimeout == .nanoseconds(123_456_789))
        #expect(try sqliteBusyTimeout(.milliseconds(1_500)) == 1_500)
        #expect(try sqliteBusyTimeout(.seconds(2_000_000)) == 2_000_000_000)
    }

    @Test func aNegativeTimeoutMeansNoWaiting() throws {
        var options = Database.Options()
        options.busyTimeout = .seconds(-5)
        #expect(options.busyTimeout == .zero)
        options.busyTimeout = .milliseconds(-1)
        #expect(options.busyTimeout == .zero)
        options.busyTimeout = .seconds(Int64.min)
        #expect(options.busyTimeout == .zero)
        #expect(try sqliteBusyTimeout(.seconds(-5)) == 0)
    }
}
