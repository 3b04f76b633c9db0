import Foundation
import Testing
@testable import ActiveObjects

/// The database of the live-query models: one per test, the suite is serialized.
private let liveDatabase = LockedValue<Database?>(nil)

final class LiveGroup: ActiveObject {
    override class var database: Database? { liveDatabase.withLock { $0 } }
    @Column var name = ""
}

final class LivePerson: ActiveObject {
    override class var database: Database? { liveDatabase.withLock { $0 } }
    @Column var name = ""
    @Column var active = true
    @Column(references: LiveGroup.self) var groupId: Int64? = nil
    var group: BelongsTo<LiveGroup> { belongsTo(\.$groupId) }
}

final class LiveOther: ActiveObject {
    override class var database: Database? { liveDatabase.withLock { $0 } }
    @Column var value = 0
}

@Suite(.serialized)
struct LiveQueryTests {
    static func open(_ folder: borrowing TemporaryDirectory, name: String = "live.sqlite") throws -> Database {
        let db = try Database(path: folder.path(name))
        liveDatabase.withLock { $0 = db }
        try LiveGroup.createTable()
        try LivePerson.createTable()
        try LiveOther.createTable()
        return db
    }

    static func close(_ db: Database) {
        try? db.close()
        liveDatabase.withLock { $0 = nil }
    }

    static func add(_ name: String, active: Bool = true, group: LiveGroup? = nil) throws {
        let person = LivePerson()
        person.name = name
        person.active = active
        person.groupId = group?.id
        try person.save()
    }

    @Test func aQueryEmitsItsResultThenAfterEachCommitToItsTable() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        try Self.add("Bob")
        let probe = LiveProbe(LivePerson.where(\.$active == true).order(by: \.$name).values()) { $0.map(\.name) }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        #expect(probe.elements == [["Bob"]])
        try Self.add("Ann")                                            // a save
        #expect(await probe.waitFor(count: 2))
        try await db.execute("UPDATE live_person SET name = 'Cid' WHERE name = 'Bob'")   // raw SQL
        #expect(await probe.waitFor(count: 3))
        try await db.transaction {                                            // one element per transaction
            try Self.add("Dee")
            try Self.add("Eve", active: false)
        }
        #expect(await probe.waitFor(count: 4))
        try await LivePerson.delete(where: ["name": "Ann"])                   // a class-level delete
        #expect(await probe.waitFor(count: 5))
        #expect(probe.elements == [["Bob"], ["Ann", "Bob"], ["Ann", "Cid"], ["Ann", "Cid", "Dee"], ["Cid", "Dee"]])
        #expect(await probe.staysAt(5))
    }

    @Test func nothingIsEmittedForRollbacksOrOtherTables() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let probe = LiveProbe(LivePerson.all.values()) { $0.count }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        // Another table.
        let other = LiveOther()
        try await other.save()
        try await db.execute("UPDATE live_other SET value = 2")
        // A rolled-back transaction.
        try? await db.transaction {
            try Self.add("rolled back")
            throw TestFailure()
        }
        // A committed transaction whose only write to the table was in a rolled-back savepoint.
        try await db.transaction {
            try? db.transaction {
                try Self.add("savepoint")
                throw TestFailure()
            }
            try db.execute("UPDATE live_other SET value = 3")
        }
        // An UPDATE that changes no row.
        try await db.execute("UPDATE live_person SET name = 'x' WHERE id = 999")
        #expect(await probe.staysAt(1, for: 0.5))
        try Self.add("counted")
        #expect(await probe.waitFor(count: 2))
        #expect(probe.elements == [0, 1])
    }

    @Test func theTablesOfIncludedRelationsAndOfEveryReadAreObserved() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let group = LiveGroup()
        group.name = "g"
        try await group.save()
        try Self.add("Ann", group: group)
        let people = LiveProbe(LivePerson.all.including(\.group).values()) { $0.map { (try? $0.group.get()?.name) ?? "-" } }
        defer { people.cancel() }
        #expect(await people.waitFor(count: 1))
        group.name = "renamed"
        try await group.save()                         // the parent's table
        #expect(await people.waitFor(count: 2))
        #expect(people.elements.last == ["renamed"])

        let mixed = LiveProbe(db.values { (try LivePerson.countAll(), try LiveOther.all.order(by: \.$id, .descending).first()?.value) }) { "\($0.0) \($0.1.map(String.init) ?? "nil")" }
        defer { mixed.cancel() }
        #expect(await mixed.waitFor(count: 1))
        let other = LiveOther()
        other.value = 7
        try await other.save()
        #expect(await mixed.waitFor(count: 2))
        try Self.add("Bob")
        #expect(await mixed.waitFor(count: 3))
        #expect(mixed.elements == ["1 nil", "1 7", "2 7"])
    }

    @Test func aBurstOfCommitsEndsWithTheFreshResultAndASlowConsumerGetsTheNewest() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        // The iterator is pulled directly: should it never answer, closing the database after
        // 30 s ends the sequence (and fails the test) instead of hanging CI.
        let watchdog = Task.detached {
            try await Task.sleep(nanoseconds: 30_000_000_000)
            try? db.close()
        }
        defer { watchdog.cancel() }
        var iterator = LivePerson.all.values().makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.count == 0)
        for i in 0..<200 { try Self.add("p\(i)") }
        // The consumer was away for the whole burst: it finds at most one element waiting,
        // or one in flight, and soon the newest state.
        var last = -1
        let deadline = Date().addingTimeInterval(10)
        var pulled = 0
        while last != 200 && Date() < deadline {
            last = try await iterator.next()?.count ?? -1
            pulled += 1
        }
        #expect(last == 200)
        #expect(pulled <= 3, "intermediate states piled up: \(pulled) elements after the burst")
        _ = db
    }

    @Test func commitsByAnotherConnectionAreNoticed() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let probe = LiveProbe(LivePerson.all.values()) { $0.map(\.name) }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        #expect(db.observations.isMonitoring)
        let other = try Database(path: folder.path("live.sqlite"))
        try await other.execute("INSERT INTO live_person(name) VALUES ('from another connection')")
        #expect(await probe.waitFor(count: 2, timeout: 30))
        #expect(probe.elements.last == ["from another connection"])
        // Another connection's commit to another table changes nothing observed: no element.
        try await other.execute("INSERT INTO live_other(value) VALUES (1)")
        #expect(await probe.staysAt(2, for: 0.5))
        try other.close()
    }

    @Test func commitsByAnotherProcessAreNoticed() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("live.sqlite")
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let probe = LiveProbe(LivePerson.all.values()) { $0.map(\.name) }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        setenv("ACTIVEOBJECTS_LIVE_PATH", path, 1)
        await #expect(processExitsWith: .success) {
            let child = try Database(path: ProcessInfo.processInfo.environment["ACTIVEOBJECTS_LIVE_PATH"]!)
            try child.execute("INSERT INTO live_person(name) VALUES ('from another process')")
            try child.close()
        }
        #expect(await probe.waitFor(count: 2, timeout: 30))
        #expect(probe.elements.last == ["from another process"])
        // The sqlite3 shell, when installed (as a user would try it).
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") {
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            shell.arguments = [path, "INSERT INTO live_person(name) VALUES ('from the sqlite3 shell')"]
            try shell.run()
            shell.waitUntilExit()
            #expect(shell.terminationStatus == 0)
            #expect(await probe.waitFor(count: 3, timeout: 30))
            #expect(probe.elements.last?.last == "from the sqlite3 shell")
        }
    }

    @Test func leavingTheLoopOrCancellingReleasesEverything() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        try Self.add("Ann")
        for _ in 0..<100 {
            for try await people in LivePerson.all.values() {
                #expect(people.count == 1)
                break
            }
        }
        for _ in 0..<100 {
            let probe = LiveProbe(LivePerson.all.values()) { $0.count }
            #expect(await probe.waitFor(count: 1))
            probe.cancel()
            #expect(await probe.waitForEnd())
        }
        // Dropped observations are gone, with their monitor thread.
        let deadline = Date().addingTimeInterval(10)
        while (db.observations.count > 0 || db.observations.isMonitoring) && Date() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(db.observations.count == 0)
        #expect(!db.observations.isMonitoring)
        // Commits afterwards cost nothing: no observer is told.
        #expect(!db.observations.isObserving)
        try Self.add("Bob")
        #expect(db.background.runningReads <= db.options.maximumReaderCount)
    }

    @Test func closingTheDatabaseEndsTheSequenceWithDatabaseClosed() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let probe = LiveProbe(LivePerson.all.values()) { $0.count }
        #expect(await probe.waitFor(count: 1))
        try db.close()
        #expect(await probe.waitForEnd())
        #expect((probe.error as? ActiveObjectError)?.isDatabaseClosed == true)
        // Observing a closed database ends at once.
        let late = LiveProbe(LivePerson.all.values()) { $0.count }
        #expect(await late.waitForEnd())
        #expect((late.error as? ActiveObjectError)?.isDatabaseClosed == true)
    }

    @Test func aFailedFetchEndsTheSequenceWithItsError() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let probe = LiveProbe(LivePerson.all.values()) { $0.count }
        #expect(await probe.waitFor(count: 1))
        try await db.execute("DROP TABLE live_person")
        #expect(await probe.waitForEnd())
        #expect(probe.error is DatabaseError)
        #expect(db.observations.count == 0)
        // A write inside the observed reads is refused, and ends it too.
        let writing = LiveProbe(db.values { try LiveOther().save() }) { _ in 0 }
        #expect(await writing.waitForEnd())
        #expect((writing.error as? ActiveObjectError)?.isMisuse == true)
    }

    @Test func inMemoryDatabasesAreObservedWithoutAMonitor() async throws {
        let db = try Database.inMemory()
        liveDatabase.withLock { $0 = db }
        defer { Self.close(db) }
        try LiveGroup.createTable()
        try LivePerson.createTable()
        let probe = LiveProbe(LivePerson.all.values()) { $0.count }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        #expect(!db.observations.isMonitoring)
        try Self.add("Ann")
        #expect(await probe.waitFor(count: 2))
        #expect(probe.elements == [0, 1])
    }

    /// The monitor sleeps on Dispatch sources: while nothing is written it wakes for nothing
    /// (no polling, no timer). Measured on this test's own monitor (the suites running beside
    /// it have monitors of their own).
    @Test func theMonitorDoesNothingWhileNothingIsWritten() async throws {
        let folder = try TemporaryDirectory()
        let db = try Self.open(folder)
        defer { Self.close(db) }
        let probe = LiveProbe(LivePerson.all.values()) { $0.count }
        defer { probe.cancel() }
        #expect(await probe.waitFor(count: 1))
        #expect(db.observations.isMonitoring)
        // Past the looks of its start (its first look, retried while the writer is busy).
        let settle = Date().addingTimeInterval(10)
        var before = db.observations.monitorActivityCount ?? 0
        repeat {
            try? await Task.sleep(nanoseconds: 300_000_000)
            let now = db.observations.monitorActivityCount ?? 0
            if now == before { break }
            before = now
        } while Date() < settle
        try? await Task.sleep(nanoseconds: 2_000_000_000)
        let after = try #require(db.observations.monitorActivityCount, "the monitor stopped while observing")
        #expect(after - before == 0, "the monitor woke \(after - before) times in 2 s without writes")
        print("RELIABILITY live queries: monitor woke \(after - before) times in 2 s without writes")
    }
}
