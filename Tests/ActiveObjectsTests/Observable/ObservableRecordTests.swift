import Foundation
import Observation
import Testing
@testable import ActiveObjects

final class ObservedNote: ModelTestRecord {
    @Column var title = ""
    @Column var body = ""
    @Column var stars = 0
    @Column var due: Date? = nil
    @JSONColumn var tags: [String] = []
    var scratch = 0
}

/// A subclass: reads through either static type name the same properties.
final class ObservedPinnedNote: ModelTestRecord {
    @Column var title = ""
    @Column var pinned = false
}

/// Counts the changes `withObservationTracking` reports.
final class ChangeCounter: @unchecked Sendable {
    // Safety of @unchecked Sendable: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0

    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// Tracks what `read` reads, once: the counter counts the changes reported.
@discardableResult
func track(_ read: () -> Void) -> ChangeCounter {
    let counter = ChangeCounter()
    withObservationTracking(read) { counter.increment() }
    return counter
}

/// `ActiveObject` is `Observable`, property by property (API §16), with
/// `withObservationTracking` and the `Observations` sequence, on file databases.
@Suite struct ObservableRecordTests {
    @Test func theProbeFindsTheTrackingPointerOnThisPlatform() {
        // Unobserved reads cost a few instructions only when the probe is located; the fallback
        // is correct but slow, and a CI failure here says the runtime's layout moved.
        #expect(TrackingProbe.waitUntilSettled() == .located)
        #expect(TrackingProbe.readsAtAFixedDistance)
        #expect(!TrackingProbe.mayBeTracking, "no tracking scope is open here")
        withObservationTracking {
            #expect(TrackingProbe.mayBeTracking)
            withObservationTracking { #expect(TrackingProbe.mayBeTracking) } onChange: {}
            #expect(TrackingProbe.mayBeTracking)
        } onChange: {}
        #expect(!TrackingProbe.mayBeTracking)
    }

    @Test func theProbeAnswersPerThread() throws {
        #expect(TrackingProbe.waitUntilSettled() == .located)
        let elsewhere = LockedBox<Bool?>(nil)
        withObservationTracking {
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                elsewhere.set(TrackingProbe.mayBeTracking)
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
        } onChange: {}
        #expect(elsewhere.value == false, "another thread is not inside this thread's scope")
    }

    @Test func readingAPropertyTracksThatPropertyAlone() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            note.title = "First"
            try note.save()
            let loaded = try #require(try ObservedNote.find(id: note.id!))

            let counter = track { _ = loaded.title }
            loaded.body = "other"
            loaded.stars = 3
            loaded.scratch = 9
            #expect(counter.value == 0, "properties that were not read do not notify")
            loaded.title = "New"
            #expect(counter.value == 1)
            loaded.title = "Newer"
            #expect(counter.value == 1, "withObservationTracking reports once")
        }
    }

    @Test func anEqualAssignmentDoesNotNotify() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            note.title = "Same"
            note.tags = ["a"]
            let counter = track { _ = note.title; _ = note.tags; _ = note.due }
            note.title = "Same"
            note.tags = ["a"]
            note.due = nil
            #expect(counter.value == 0)
            note.tags = ["a", "b"]
            #expect(counter.value == 1)

            let dates = track { _ = note.due }
            note.due = Date(timeIntervalSince1970: 1)
            #expect(dates.value == 1)
            let again = track { _ = note.due }
            note.due = Date(timeIntervalSince1970: 1)
            #expect(again.value == 0)
            note.due = Date(timeIntervalSince1970: 1.0001)
            #expect(again.value == 1, "a date a tenth of a millisecond later is another value")
        }
    }

    @Test func eachObjectHasItsOwnObservers() throws {
        try withModelFileDB { _, _ in
            let first = ObservedNote()
            let second = ObservedNote()
            let counter = track { _ = first.title }
            second.title = "not the tracked one"
            #expect(counter.value == 0)
            first.title = "tracked"
            #expect(counter.value == 1)
        }
    }

    @Test func readsThroughTheBaseClassAndTheModelNameTheSameProperty() throws {
        let note = ObservedPinnedNote()
        let base: ActiveObject = note
        let throughBase = track { _ = base.id }
        let throughModel = track { _ = note.title }
        note.title = "x"
        note.id = 5
        #expect(throughBase.value == 1)
        #expect(throughModel.value == 1)
    }

    @Test func saveSettingTheIDNotifies() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            let ids = track { _ = note.id }
            let titles = track { _ = note.title }
            note.stars = 1
            try note.save()
            #expect(note.id != nil)
            #expect(ids.value == 1)
            #expect(titles.value == 0)
            // An update keeps the id: no notification.
            let again = track { _ = note.id }
            note.stars = 2
            try note.save()
            #expect(again.value == 0)
        }
    }

    @Test func aRolledBackInsertOfAnObservedObjectNotifiesAtTheRollback() throws {
        try withModelFileDB { db, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            let saved = track { _ = note.id }           // observed before it is saved
            var counter: ChangeCounter?
            inRolledBackTransaction(db) {
                try note.save()
                counter = track { _ = note.id }
            }
            #expect(saved.value == 1, "the save set the id")
            #expect(counter?.value == 1, "told at the rollback, before anything reads the object")
            #expect(note.id == nil)
        }
    }

    @Test func aRolledBackInsertOfAnObjectObservedAfterItsSaveNotifiesWhenNextUsed() throws {
        try withModelFileDB { db, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            var counter: ChangeCounter?
            inRolledBackTransaction(db) {
                try note.save()
                counter = track { _ = note.id }
            }
            #expect(note.id == nil)
            #expect(counter?.value == 1)
        }
    }

    @Test func hasChangesIsObservedThroughEditsSavesReloadsAndRollbacks() throws {
        try withModelFileDB { db, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            note.title = "Draft"
            try note.save()

            // An edit of any column.
            let edited = track { _ = note.hasChanges }
            note.tags = ["a"]
            #expect(edited.value == 1 && note.hasChanges)

            // The save that makes the values the row's changes no column.
            let saved = track { _ = note.hasChanges }
            try note.save()
            #expect(saved.value == 1 && !note.hasChanges)

            // A reload that discards edits.
            note.body = "typed"
            let reloaded = track { _ = note.changedColumns }
            try note.reload()
            #expect(reloaded.value == 1 && !note.hasChanges)

            // A rollback that makes a saved change pending again.
            note.stars = 5
            let rolledBack = LockedBox<ChangeCounter?>(nil)
            inRolledBackTransaction(db) {
                try note.save()
                rolledBack.set(track { _ = note.hasChanges })
            }
            #expect(rolledBack.value?.value == 1)
            #expect(note.changedColumns == ["stars"])

            // Reads that are not tracked stay unobserved.
            let other = track { _ = note.title }
            _ = note.hasChanges
            #expect(other.value == 0)
        }
    }

    @Test func aValueTheColumnCannotHoldNotifiesNobodyAndChangesNothing() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            try note.save()
            let schema = try ModelSchema.of(ObservedNote.self)
            let slot = try schema.columnSlot(for: \ObservedNote.$stars)
            let stars = track { _ = note.stars }

            #expect(throws: ActiveObjectError.self) {
                try note.assignColumnValue(.text("many"), atSlot: slot, schema: schema)
            }
            #expect(stars.value == 0)
            #expect(!note.hasChanges)

            try note.assignColumnValue(.integer(4), atSlot: slot, schema: schema)
            #expect(stars.value == 1 && note.stars == 4 && note.changedColumns == ["stars"])
        }
    }

    @Test func descriptionIsObservedThroughEveryColumn() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            let described = track { _ = note.description }
            note.stars = 3
            #expect(described.value == 1)
        }
    }

    @Test func reloadNotifiesTheObserversOfWhatChangedOnly() throws {
        try withModelFileDB { db, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            note.title = "Before"
            note.body = "Body"
            try note.save()
            try db.execute("UPDATE observed_note SET title = 'After' WHERE id = ?", [note.id!])

            let titles = track { _ = note.title }
            let bodies = track { _ = note.body }
            let ids = track { _ = note.id }
            try note.reload()
            #expect(note.title == "After")
            #expect(titles.value == 1)
            #expect(bodies.value == 0)
            #expect(ids.value == 0)
        }
    }

    @Test func asyncReloadNotifiesToo() async throws {
        let (db, folder) = try TestStorage.file.open()
        defer { try? db.close(); _ = folder }
        try await ModelTestDB.$current.withValue(db) {
            let note = ObservedNote()
            try synchronously {
                try ObservedNote.createTable()
                note.title = "Before"
                try note.save()
                try db.execute("UPDATE observed_note SET title = 'After' WHERE id = ?", [note.id!])
            }
            let titles = synchronously { track { _ = note.title } }
            try await note.reload()
            #expect(note.title == "After")
            #expect(titles.value == 1)
        }
    }

    @Test func aRelationSettingAForeignKeyNotifies() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            try note.save()
            let counter = track { _ = note.stars }
            let schema = try ModelSchema.of(ObservedNote.self)
            try note.assignColumnValue(.integer(4), atSlot: try schema.slot(forKey: "stars"), schema: schema)
            #expect(note.stars == 4)
            #expect(counter.value == 1)
            #expect(note.changedColumns == ["stars"])
        }
    }

    @Test func unobservedObjectsGetNoRegistrar() throws {
        #expect(TrackingProbe.waitUntilSettled() == .located)
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            for index in 0..<3 {
                let note = ObservedNote()
                note.title = "n\(index)"
                try note.save()
            }
            let notes = try ObservedNote.findAll()
            var total = 0
            for note in notes {
                total += note.title.count + note.body.count + note.stars + Int(note.id ?? 0)
                note.body = "edited"
            }
            #expect(total > 0)
            #expect(notes.allSatisfy { $0.observationRegistrar == nil })
            #expect(notes.allSatisfy { $0.assignmentBookkeeping == AssignmentBookkeeping.tracksEdits })
            // Observed once, an object keeps its registrar.
            track { _ = notes[0].title }
            #expect(notes[0].observationRegistrar != nil)
            #expect(notes[1].observationRegistrar == nil)
        }
    }

    @Test func changeTrackingIsTheSameForObservedObjects() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            note.title = "A"
            try note.save()
            let loaded = try #require(try ObservedNote.find(id: note.id!))
            track { _ = loaded.title; _ = loaded.body }
            #expect(!loaded.hasChanges)
            loaded.title = "B"
            loaded.body = ""          // equal: not a change
            #expect(loaded.changedColumns == ["title"])
            loaded.title = "A"        // back: no change
            #expect(!loaded.hasChanges)
            loaded.title = "C"
            try loaded.save()
            #expect(!loaded.hasChanges)
            #expect(try ObservedNote.find(id: note.id!)?.title == "C")
        }
    }

    @MainActor
    @Test func theObservationsSequenceEmitsEachNewTitle() async throws {
        let note = ObservedNote()
        note.title = "one"
        let seen = SeenValues()
        let consumer = Task { @MainActor in
            for await title in Observations({ note.title }) { seen.values.append(title) }
        }
        defer { consumer.cancel() }
        try await waitUntil(seconds: 10) { seen.values == ["one"] }
        note.title = "two"
        try await waitUntil(seconds: 10) { seen.values == ["one", "two"] }
        note.body = "not observed"
        note.stars = 5
        note.title = "three"
        try await waitUntil(seconds: 10) { seen.values == ["one", "two", "three"] }
    }
}

/// What a main-actor consumer of an `Observations` sequence received.
@MainActor
final class SeenValues {
    var values: [String] = []
}

/// Polls `condition` on the main actor until it holds; throws after `seconds`.
@MainActor
func waitUntil(seconds: Double, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { throw TestFailure(message: "condition not met within \(seconds) s") }
        try await Task.sleep(nanoseconds: 1_000_000)
    }
}

/// `ActiveObject` is `Hashable` by class and saved key (API §16).
@Suite struct HashableRecordTests {
    @Test func aRowFetchedTwiceGivesTwoEqualObjects() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            try ObservedPinnedNote.createTable()
            let note = ObservedNote()
            note.title = "A"
            try note.save()
            let first = try #require(try ObservedNote.find(id: note.id!))
            let second = try #require(try ObservedNote.find(id: note.id!))
            #expect(first !== second)
            #expect(first == second)
            #expect(first == note)
            #expect(first.hashValue == second.hashValue)
            #expect(Set([first, second, note]).count == 1)
            // An unsaved edit does not change which row it holds.
            first.title = "edited"
            #expect(first == second)
            #expect(first.hashValue == second.hashValue)

            // Same id, another class: not equal.
            let other = ObservedPinnedNote()
            try other.save()
            #expect(other.id == note.id)
            #expect((other as ActiveObject) != (note as ActiveObject))
        }
    }

    @Test func newObjectsEqualOnlyThemselves() throws {
        let first = ObservedNote()
        let second = ObservedNote()
        #expect(first == first)
        #expect(first != second)
        #expect(Set([first, second, first]).count == 2)
        first.id = 7     // set by hand: still holds no row
        second.id = 7
        #expect(first != second)
    }

    @Test func deletedObjectsHoldNoRow() throws {
        try withModelFileDB { _, _ in
            try ObservedNote.createTable()
            let note = ObservedNote()
            try note.save()
            let twin = try #require(try ObservedNote.find(id: note.id!))
            #expect(note == twin)
            try note.delete()
            #expect(note != twin)
            #expect(note == note)
        }
    }

    @Test func naturalKeysCompareByTheSavedKey() throws {
        try withModelFileDB { _, _ in
            try ShopCustomer.createTable()
            let customer = ShopCustomer()
            customer.code = "ALFKI"
            customer.name = "Alfreds"
            try customer.insert()
            let loaded = try #require(try ShopCustomer.find(key: "ALFKI"))
            #expect(loaded == customer)
            loaded.code = "RENAMED"      // not saved: still the row ALFKI
            #expect(loaded == customer)
            try loaded.save()
            #expect(loaded != customer, "saved: now the row RENAMED")
        }
    }
}
