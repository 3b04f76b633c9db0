import Foundation
import Testing
@testable import ActiveObjects

// Regressions for the findings of the round-2 review: each test failed before its fix.

final class NumberedWarehouse: ModelTestRecord {
    override class var primaryKey: String { "number" }
    @Column var number: Int = 0
    @Column var city: String = ""
}

final class OptionallyNumberedBin: ModelTestRecord {
    override class var primaryKey: String { "number" }
    @Column var number: Int? = nil
    @Column var label: String = ""
}

final class TimedEvent: ModelTestRecord {
    @Column var at: Date = Date(timeIntervalSince1970: 0)
    @Column var amount: Int = 0
    @Column var price: Double? = nil
}

class StaffPerson: ModelTestRecord {
    @Column var name: String = ""
}

final class StaffEmployee: StaffPerson {
    @Column var salary: Int = 0
}

final class DatedBatch: ModelTestRecord {
    override class var primaryKey: String { "startedAt" }
    @Column var startedAt: Date = Date(timeIntervalSince1970: 0)
    var samples: HasMany<DatedSample> { hasMany(\.$batchStart) }
}

final class DatedSample: ModelTestRecord {
    @Column(references: DatedBatch.self) var batchStart: Date? = nil
    @Column var reading: Int = 0
    var batch: BelongsTo<DatedBatch> { belongsTo(\.$batchStart) }
}

final class NestedReadRow: ActiveObject {
    nonisolated(unsafe) static var testDatabase: Database?
    override class var database: Database? { testDatabase }
    @Column var n: Int = 0
}

@Suite("Round-2 review regressions", .serialized)
struct ReviewRound2Tests {
    // MARK: Async writes in flight

    /// Holds the writer of `db` from another thread (a transaction left open) until the
    /// returned closure is called, so that an async write stays in flight meanwhile.
    static func holdWriter(of db: Database) -> @Sendable () -> Void {
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        Thread {
            try? db.transaction {
                started.signal()
                _ = release.wait(timeout: .now() + 30)
            }
        }.start()
        _ = started.wait(timeout: .now() + 30)
        return { release.signal() }
    }

    /// Waits (bounded) until `object` has an async write planned and awaiting the writer.
    @MainActor static func waitUntilInFlight(_ object: ActiveObject) async throws {
        let deadline = Date(timeIntervalSinceNow: 20)
        while !object.asyncWriteInFlight && Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        try #require(object.asyncWriteInFlight, "the async write never started")
    }

    @MainActor @Test func anEditMadeWhileAnAsyncSaveAwaitsStaysAChange() async throws {
        try await withAsyncModelDB { db in
            let note = AsyncNote()
            note.title = "a"
            try await note.save()
            note.title = "b"
            let release = Self.holdWriter(of: db)
            let save = Task { @MainActor in try await note.save() }
            try await Self.waitUntilInFlight(note)
            note.title = "c"            // typed while "b" is being written
            release()
            try await save.value
            let stored: String? = try await db.scalar("SELECT title FROM async_note")
            #expect(stored == "b")
            #expect(note.hasChanges && note.changedColumns == ["title"])
            try await note.save()
            let after: String? = try await db.scalar("SELECT title FROM async_note")
            #expect(after == "c")
            #expect(!note.hasChanges)
        }
    }

    @MainActor @Test func anEditMadeWhileAsyncInsertAllAwaitsStaysAChange() async throws {
        try await withAsyncModelDB { db in
            let notes = (0..<3).map { index -> AsyncNote in
                let note = AsyncNote()
                note.title = "first \(index)"
                return note
            }
            let release = Self.holdWriter(of: db)
            let insert = Task { @MainActor in try await AsyncNote.insertAll(notes) }
            try await Self.waitUntilInFlight(notes[1])
            notes[1].title = "edited"
            release()
            try await insert.value
            #expect(notes.allSatisfy { $0.id != nil })
            #expect(!notes[0].hasChanges && notes[1].changedColumns == ["title"] && !notes[2].hasChanges)
            try await notes[1].save()
            let titles: [String] = try await db.rows("SELECT title FROM async_note ORDER BY id").map { try $0[0] }
            #expect(titles == ["first 0", "edited", "first 2"])
        }
    }

    @MainActor @Test func twoOverlappingAsyncSavesOfANewObjectInsertOneRow() async throws {
        try await withAsyncModelDB { db in
            let note = AsyncNote()
            note.title = "draft"
            let first = Task { @MainActor in try await note.save() }
            let second = Task { @MainActor in try await note.save() }   // a double tap on Save
            try await first.value
            try await second.value
            let rows: Int? = try await db.scalar("SELECT count(*) FROM async_note")
            #expect(rows == 1)
            #expect(note.id == 1 && !note.hasChanges)
            // A delete queued behind a save waits for it, then deletes the row it inserted.
            let other = AsyncNote()
            other.title = "short-lived"
            let saving = Task { @MainActor in try await other.save() }
            let deleting = Task { @MainActor in try await other.delete() }
            try await saving.value
            #expect(try await deleting.value)
            let left: Int? = try await db.scalar("SELECT count(*) FROM async_note")
            #expect(left == 1)
        }
    }

    @MainActor @Test func aSynchronousWriteDuringAnAsyncWriteIsRefused() async throws {
        try await withAsyncModelDB { db in
            let note = AsyncNote()
            note.title = "x"
            let release = Self.holdWriter(of: db)
            let save = Task { @MainActor in try await note.save() }
            try await Self.waitUntilInFlight(note)
            defer { release() }
            let error = expectActiveObjectError { try note.save() }
            #expect(error?.isMisuse == true)
            #expect(expectActiveObjectError { _ = try note.delete() }?.isMisuse == true)
            #expect(expectActiveObjectError { try AsyncNote.insertAll([note]) }?.isMisuse == true)
            release()
            try await save.value
            try Self.saveSynchronously(note)   // once it is done, writes work again
            let rows: Int? = try await db.scalar("SELECT count(*) FROM async_note")
            #expect(rows == 1)
        }
    }

    static func saveSynchronously(_ object: ActiveObject) throws { try object.save() }

    // MARK: insertAll

    @Test func insertAllOfAnIntegerNaturalKeyGivesEachObjectItsKeyAsId() throws {
        try withModelDB { db in
            try NumberedWarehouse.createTable()
            let (a, b) = (NumberedWarehouse(), NumberedWarehouse())
            (a.number, a.city, b.number, b.city) = (7, "A", 2, "B")
            try NumberedWarehouse.insertAll([a, b])
            #expect(a.id == 7 && b.id == 2)
            let (c, d) = (NumberedWarehouse(), NumberedWarehouse())
            (c.number, d.number) = (100, 50)
            try NumberedWarehouse.insertAll([c, d])
            #expect(c.id == 100 && d.id == 50)
            let rows: [[Int]] = try db.rows("SELECT rowid, number FROM numbered_warehouse ORDER BY number").map { [try $0[0], try $0[1]] }
            #expect(rows == [[2, 2], [7, 7], [50, 50], [100, 100]])
            c.city = "C"
            try c.save()
            #expect(try NumberedWarehouse.find(key: 100)?.city == "C")
        }
    }

    @Test func insertAllMixesHandNumberedAndSQLiteNumberedKeys() throws {
        try withModelDB { db in
            try OptionallyNumberedBin.createTable()
            let bins = [10, nil, 3, nil].enumerated().map { index, number -> OptionallyNumberedBin in
                let bin = OptionallyNumberedBin()
                bin.number = number
                bin.label = "bin \(index)"
                return bin
            }
            try OptionallyNumberedBin.insertAll(bins)
            let stored: [String: Int] = try Dictionary(uniqueKeysWithValues: db.rows(
                "SELECT label, rowid FROM optionally_numbered_bin").map { (try $0[0], try $0[1]) })
            #expect(stored.count == 4)
            for bin in bins { #expect(bin.id.map(Int.init) == stored[bin.label], "\(bin.label)") }
            #expect(bins[0].id == 10 && bins[2].id == 3)
            // The two SQLite numbered follow the largest key, in order.
            #expect(Set([bins[1].id, bins[3].id]) == [11, 12])
        }
    }

    @Test func insertAllRefusesObjectsOfASubclassModel() throws {
        try withModelDB { db in
            try StaffPerson.createTable()
            try StaffEmployee.createTable()
            let employee = StaffEmployee()
            employee.name = "Eve"
            let plain = StaffPerson()
            plain.name = "Sam"
            let people: [StaffPerson] = [plain, employee]
            let error = expectActiveObjectError { try StaffPerson.insertAll(people) }
            #expect(error?.isInvalidArgument == true)
            #expect("\(error.map { "\($0)" } ?? "")".contains("StaffEmployee"))
            let rows: Int? = try db.scalar("SELECT (SELECT count(*) FROM staff_person) + (SELECT count(*) FROM staff_employee)")
            #expect(rows == 0)
            #expect(plain.id == nil && employee.id == nil)
        }
    }

    // MARK: group(by:)

    @Test func groupsWhoseStoredKeysReadAsOneKeyAreMerged() throws {
        try withModelDB { db in
            try TimedEvent.createTable()
            // One instant in two stored forms, and another instant.
            try db.execute("""
                INSERT INTO timed_event (at, amount, price) VALUES
                  ('2024-01-01 00:00:00.000', 1, 2.0), ('2024-01-01T00:00:00Z', 10, 4.0),
                  ('2024-01-01 00:00:00.000', 100, NULL), ('2024-02-01 00:00:00.000', 5, 1.0)
                """)
            let january = try #require(Date.fromDatabaseValue(.text("2024-01-01 00:00:00"), in: ValueContext()))
            let february = try #require(Date.fromDatabaseValue(.text("2024-02-01 00:00:00"), in: ValueContext()))
            let grouped = TimedEvent.all.group(by: \.$at)
            #expect(try grouped.count() == [january: 3, february: 1])
            #expect(try grouped.sum(\.$amount) == [january: 111, february: 5])
            #expect(try grouped.min(\.$amount) == [january: 1, february: 5])
            #expect(try grouped.max(\.$amount) == [january: 100, february: 5])
            // Averages weighted by how many values each stored form had: (2 + 4) / 2, not 3 of 3.
            #expect(try grouped.average(\.$price) == [january: 3.0, february: 1.0])
            #expect(try grouped.average(\.$amount) == [january: 37.0, february: 5.0])
        }
    }

    // MARK: Keys, readers, arena

    @Test func aDateNaturalKeyIsReferencedWithTheDatabasesDateStrategy() throws {
        var options = Database.Options()
        options.dateStrategy = .unixSeconds
        let db = try Database.inMemory(options: options)
        defer { try? db.close() }
        try ModelTestDB.$current.withValue(db) {
            try DatedBatch.createTable()
            try DatedSample.createTable()
            let batch = DatedBatch()
            batch.startedAt = Date(timeIntervalSince1970: 1_700_000_000)
            try batch.save()
            let sample = DatedSample()
            sample.reading = 42
            try batch.samples.add(sample)
            let stored: Int64? = try db.scalar("SELECT batchStart FROM dated_sample")
            #expect(stored == 1_700_000_000)
            #expect(try batch.samples.all().map(\.reading) == [42])
            #expect(try sample.batch.get()?.startedAt == batch.startedAt)
            #expect(try DatedBatch.all.including(\.samples).all().first?.samples.count() == 1)
        }
    }

    @Test func threadsReadingInsideTheirOwnWalksDoNotWaitForEachOther() throws {
        let folder = try TemporaryDirectory()
        var options = Database.Options()
        options.maximumReaderCount = 2
        options.busyTimeout = .seconds(5)
        let db = try Database(path: folder.path("nested.sqlite"), options: options)
        defer { try? db.close() }
        NestedReadRow.testDatabase = db
        defer { NestedReadRow.testDatabase = nil }
        try NestedReadRow.createTable()
        for n in 0..<3 {
            let row = NestedReadRow()
            row.n = n
            try row.save()
        }
        // Both threads hold a reader (their walk) before either reads inside it.
        let holding = DispatchGroup()
        holding.enter()
        holding.enter()
        let errors = Locked<[String]>([])
        let counts = Locked<[Int]>([])
        let done = DispatchGroup()
        for _ in 0..<2 {
            done.enter()
            Thread {
                defer { done.leave() }
                var first = true
                do {
                    try NestedReadRow.all.each { _ in
                        if first {
                            first = false
                            holding.leave()
                            _ = holding.wait(timeout: .now() + 10)
                        }
                        let count = try NestedReadRow.countAll()   // a read inside the walk
                        counts.withLock { $0.append(count) }
                    }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "the walks did not finish")
        #expect(errors.withLock { $0 }.isEmpty)
        #expect(counts.withLock { $0 } == Array(repeating: 3, count: 6))
    }

    @Test func aStatementThatNeededSeveralArenaBlocksStillBindsExactly() throws {
        try withModelDB { db in
            try TextBindingNote.createTable()
            // 200 rows × 3 texts of about 3 KiB: a chunk far beyond one arena block.
            let big = (0..<200).map { index -> TextBindingNote in
                let note = TextBindingNote()
                note.title = TextBindingTests.text(3_000, seed: index)
                note.body = TextBindingTests.text(3_100, seed: -index)
                note.tag = TextBindingTests.text(2_900, seed: index * 7)
                return note
            }
            try TextBindingNote.insertAll(big)
            // The same statement again (its arena merged to one block), with other texts.
            let small = (0..<200).map { index -> TextBindingNote in
                let note = TextBindingNote()
                note.title = "t\(index)"
                note.tag = TextBindingTests.text(index, seed: index)
                return note
            }
            try TextBindingNote.insertAll(small)
            let stored = try TextBindingNote.all.order(by: \.$id).all()
            #expect(stored.count == 400)
            let expected = big + small
            let mismatches = zip(stored, expected).filter { $0.title != $1.title || $0.body != $1.body || $0.tag != $1.tag }
            #expect(mismatches.isEmpty, "\(mismatches.count) rows differ")
            let bytes: Int? = try db.scalar("SELECT sum(length(CAST(title AS BLOB))) FROM text_binding_note")
            #expect(bytes == expected.reduce(0) { $0 + $1.title.utf8.count })
        }
    }
}
