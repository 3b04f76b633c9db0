import Foundation
import Observation
import Testing
@testable import ActiveObjects

/// A natural key in a WITHOUT ROWID table: saving a new one changes no `id`.
final class ObservedStock: ModelTestRecord {
    override class var primaryKey: String { "sku" }
    override class var withoutRowID: Bool { true }
    @Column var sku: String = ""
    @Column var onHand: Int = 0
}

/// `hasChanges` follows the row state too: a new object compares with the class's defaults, a
/// saved one with its row, so saving, deleting and rolling back tell its observers even when no
/// column and no `id` changes.
@Suite struct ObservedRowStateTests {
    @Test func savingANewObjectWithoutRowIDTellsHasChanges() throws {
        try withModelFileDB { _, _ in
            try ObservedStock.createTable()
            let stock = ObservedStock()
            stock.sku = "A"
            stock.onHand = 1
            let counter = track { _ = stock.hasChanges }
            try stock.save()
            #expect(!stock.hasChanges)
            #expect(counter.value == 1)
        }
    }

    @Test func savingANewObjectWithAHandSetIDTellsHasChanges() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            note.id = 42
            note.title = "x"
            let counter = track { _ = note.hasChanges }
            try note.save()
            #expect(!note.hasChanges)
            #expect(counter.value == 1)
        }
    }

    @Test func deletingTellsHasChanges() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            note.title = "x"
            try note.save()
            let counter = track { _ = note.hasChanges }
            try note.delete()
            #expect(note.hasChanges, "a deleted object compares with the defaults")
            #expect(counter.value == 1)
        }
    }

    @Test func aRolledBackInsertWithAHandSetIDTellsHasChangesAtTheRollback() throws {
        try withModelFileDB { db, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            note.id = 42
            note.title = "x"
            track { _ = note.title }                        // observed before the save
            let counter = LockedBox<ChangeCounter?>(nil)
            inRolledBackTransaction(db) {
                try note.save()
                counter.set(track { _ = note.hasChanges })
            }
            #expect(counter.value?.value == 1)
            #expect(note.recordState == .new && note.hasChanges)
        }
    }

    @Test func aRolledBackInsertWithoutRowIDTellsHasChangesAtTheRollback() throws {
        try withModelFileDB { db, _ in
            try ObservedStock.createTable()
            let stock = ObservedStock()
            stock.sku = "A"
            track { _ = stock.sku }
            let counter = LockedBox<ChangeCounter?>(nil)
            inRolledBackTransaction(db) {
                try stock.save()
                counter.set(track { _ = stock.hasChanges })
            }
            #expect(counter.value?.value == 1)
            #expect(stock.recordState == .new && stock.hasChanges)
        }
    }

    /// A delete, a re-insert as another key and a rename, rolled back: the object's key before
    /// its edits is the row's again, so the next save updates its own row — never the row an
    /// unrelated object inserted since under the intermediate key.
    @Test func aRollbackAfterADeleteAndAReinsertKnowsTheRowsKey() throws {
        try withModelFileDB { db, _ in
            try ObservedStock.createTable()
            let stock = ObservedStock()
            stock.sku = "A"
            stock.onHand = 1
            try stock.save()
            inRolledBackTransaction(db) {
                try stock.delete()
                stock.sku = "B"
                try stock.save()
                stock.sku = "C"
            }
            let other = ObservedStock()
            other.sku = "B"
            other.onHand = 100
            try other.save()
            stock.onHand = 2
            try stock.save()
            let rows = try ObservedStock.all.all().map { "\($0.sku)=\($0.onHand)" }.sorted()
            #expect(rows == ["B=100", "C=2"], "the stock's row A renamed C, the other row untouched")
        }
    }

    @Test func aRollbackAfterADeleteAndAReinsertKnowsTheRowsValues() throws {
        try withModelFileDB { db, _ in
            try StateNote.createTable()
            let note = StateNote()
            note.title = "t"
            try note.save()
            inRolledBackTransaction(db) {
                try note.delete()
                note.rank = 5
                try note.save()
                note.rank = 9
            }
            #expect(note.changedColumns == ["rank"], "the object holds 9, the row 0")
            note.rank = 5
            #expect(note.changedColumns == ["rank"], "the row holds 0, the object 5")
            try note.save()
            #expect(try StateNote.find(id: note.id!)?.rank == 5)
        }
    }
}

/// Async writes apply their outcome on the caller's actor: observers are told there. (The
/// bodies are main-actor methods: a task-local's `withValue` closure need not stay on the
/// caller's actor.)
@MainActor @Suite struct ObservedAsyncWriteTests {
    @Test func anAsyncSaveTellsObserversOnTheCallersActor() async throws {
        let (db, folder) = try TestStorage.file.open()
        defer { try? db.close(); _ = folder }
        try await ModelTestDB.$current.withValue(db) { try await saveTwiceObserved() }
    }

    private func saveTwiceObserved() async throws {
        try ObservedNote.createTable()
        let note = ObservedNote()
        note.title = "x"
        // The main actor's jobs run on the main dispatch queue (drained by whichever thread the
        // test runner gives it): tell it by a value set on that queue.
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        defer { DispatchQueue.main.setSpecific(key: key, value: nil) }
        let onMainActor = LockedBox<[Bool]>([])
        let record: @Sendable () -> Void = {
            onMainActor.set(onMainActor.value + [DispatchQueue.getSpecific(key: key) == true])
        }
        #expect(DispatchQueue.getSpecific(key: key) == true, "the main actor runs on the main queue")
        withObservationTracking({ _ = note.hasChanges }, onChange: record)
        try await note.save()
        #expect(onMainActor.value == [true])
        note.title = "y"
        withObservationTracking({ _ = note.hasChanges }, onChange: record)
        try await note.save()
        #expect(onMainActor.value == [true, true])
    }

    /// A key assigned while the async insert waits for the writer stays a change to save.
    @Test func aKeyAssignedDuringAnAsyncInsertStaysAChange() async throws {
        let (db, folder) = try TestStorage.file.open()
        defer { try? db.close(); _ = folder }
        try await ModelTestDB.$current.withValue(db) { try await assignKeyDuringInsert(db) }
    }

    private func assignKeyDuringInsert(_ db: Database) async throws {
        try SafetyTicket.createTable()
        let ticket = SafetyTicket()
        ticket.title = "first"
        // Hold the writer until the save is in flight.
        let writerHeld = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let busy = Task.detached {
            try await db.transaction {
                writerHeld.signal()
                _ = release.wait(timeout: .now() + 10)
            }
        }
        try await withTimeout(10) {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { _ = writerHeld.wait(timeout: .now() + 10); continuation.resume() }
            }
        }
        let saving = Task { @MainActor in try await ticket.save() }
        let deadline = ContinuousClock.now + .seconds(10)
        while !ticket.asyncWriteInFlight {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            await Task.yield()
        }
        ticket.number = 77
        release.signal()
        try await busy.value
        try await saving.value
        #expect(ticket.hasChanges && ticket.changedColumns == ["number"])
        try await ticket.save()
        #expect(try await SafetyTicket.all.all().map(\.number) == [77])
    }
}
