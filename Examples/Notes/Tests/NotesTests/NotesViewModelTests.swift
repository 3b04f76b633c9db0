import ActiveObjects
import Foundation
import Testing
@testable import Notes

/// The view model against a real WAL file: its list comes from the live query only, so every
/// check below waits (with a timeout) for the list the database commit produces.
/// Serialized: the models use the process-wide `ActiveObject.defaultDatabase`.
@Suite(.serialized)
@MainActor
final class NotesViewModelTests {
    let file = TemporaryNotesFile()
    let db: Database
    let model = NotesViewModel()
    var observation: Task<Void, Never>?

    init() throws {
        db = try NotesDatabase.open(path: file.path)
    }

    deinit {
        observation?.cancel()
        try? db.close()
        file.remove()
    }

    /// Starts the live query as a SwiftUI `.task` would, and waits for its first result.
    func startObserving() async throws {
        observation?.cancel()
        let model = self.model
        observation = Task { await model.observe() }
        try await waitUntil("the first result") { model.isLoaded }
    }

    /// A stored note with a fixed age, written with the synchronous API.
    @discardableResult
    func storeNote(_ title: String, body: String = "", pinned: Bool = false, minutesAgo: Double) throws -> Note {
        let note = Note()
        note.title = title
        note.body = body
        note.pinned = pinned
        note.createdAt = Date(timeIntervalSinceNow: -minutesAgo * 60)
        note.updatedAt = note.createdAt
        try note.save()
        return note
    }

    var titles: [String] { model.notes.map(\.title) }

    @Test func showsStoredNotesPinnedFirstThenMostRecentlyChanged() async throws {
        try storeNote("old", minutesAgo: 30)
        try storeNote("new", minutesAgo: 1)
        try storeNote("pinned but older", pinned: true, minutesAgo: 60)
        #expect(model.notes.isEmpty && !model.isLoaded)

        try await startObserving()

        #expect(titles == ["pinned but older", "new", "old"])
        #expect(model.failure == nil)
    }

    @Test func anAddedNoteArrivesThroughTheLiveQuery() async throws {
        try await startObserving()
        #expect(model.notes.isEmpty)

        let note = try await model.add(title: "  Buy milk \n", body: "2 litres")

        #expect(note.id != nil)
        #expect(note.title == "Buy milk")
        try await waitUntil("the new note") { self.model.notes.count == 1 }
        let shown = try #require(model.notes.first)
        #expect(shown.id == note.id && shown.title == "Buy milk" && shown.body == "2 litres")
        #expect(shown !== note, "the list holds the objects the live query fetched")
        #expect(try await Note.countAll() == 1)
    }

    @Test func editingMovesTheNoteToTheTopAndStampsIt() async throws {
        let older = try storeNote("older", minutesAgo: 10)
        try storeNote("newer", minutesAgo: 5)
        try await startObserving()
        #expect(titles == ["newer", "older"])
        let shown = try #require(model.notes.last)
        let before = shown.updatedAt

        try await model.update(shown, title: "older, edited", body: "more")

        try await waitUntil("the edited note on top") { self.titles == ["older, edited", "newer"] }
        let olderID = try #require(older.id)
        let stored = try #require(try await Note.find(id: olderID))
        #expect(stored.title == "older, edited" && stored.body == "more")
        #expect(stored.updatedAt > before)
        #expect(!shown.hasChanges)
    }

    @Test func anInvalidEditThrowsWritesNothingAndRestoresTheNote() async throws {
        let stored = try storeNote("keep me", body: "body", minutesAgo: 3)
        try await startObserving()
        let shown = try #require(model.notes.first)

        await #expect(throws: ActiveObjectError.self) {
            try await self.model.update(shown, title: "   ", body: "changed")
        }

        #expect(shown.title == "keep me" && shown.body == "body")
        #expect(!shown.hasChanges, "the restored values equal the stored ones")
        let storedID = try #require(stored.id)
        let reread = try #require(try await Note.find(id: storedID))
        #expect(reread.title == "keep me" && reread.body == "body")
    }

    @Test func addingAnEmptyOrOverlongTitleIsAValidationError() async throws {
        do {
            try await model.add(title: " \n ")
            Issue.record("an empty title was saved")
        } catch ActiveObjectError.validationFailed(let error) {
            #expect(error.field == "title")
        }
        do {
            try await model.add(title: String(repeating: "x", count: Note.maximumTitleLength + 1))
            Issue.record("an over-long title was saved")
        } catch ActiveObjectError.validationFailed(let error) {
            #expect(error.field == "title")
        }
        #expect(try await Note.countAll() == 0)
    }

    @Test func pinningMovesTheNoteFirst() async throws {
        try storeNote("a", minutesAgo: 20)
        try storeNote("b", minutesAgo: 10)
        try await startObserving()
        #expect(titles == ["b", "a"])

        try await model.togglePinned(try #require(model.notes.last))
        try await waitUntil("the pinned note first") { self.titles == ["a", "b"] && self.model.notes[0].pinned }

        try await model.togglePinned(try #require(model.notes.first))
        try await waitUntil("the unpinned note back in place") { self.titles == ["a", "b"] && !self.model.notes[0].pinned }
        // "a" was changed last, so it stays first once unpinned.
    }

    @Test func aDeletedNoteLeavesTheList() async throws {
        try storeNote("stay", minutesAgo: 2)
        try storeNote("go", minutesAgo: 1)
        try await startObserving()
        let doomed = try #require(model.notes.first)

        #expect(try await model.delete(doomed))

        try await waitUntil("the list without it") { self.titles == ["stay"] }
        #expect(try await model.delete(doomed) == false, "already gone")
    }

    @Test func commitsMadeElsewhereReachTheList() async throws {
        try await startObserving()

        // Another task, off the main actor, with its own objects.
        try await Task.detached {
            let note = Note()
            note.title = "from a background task"
            try await note.save()
        }.value
        try await waitUntil("the background note") { self.titles == ["from a background task"] }

        // Raw SQL, in a transaction.
        let db = self.db
        try await db.transaction {
            try db.execute("UPDATE note SET title = ? WHERE title = ?", ["renamed by SQL", "from a background task"])
        }
        try await waitUntil("the SQL update") { self.titles == ["renamed by SQL"] }

        // A second connection to the same file, as an app extension would have.
        let other = try Database(path: file.path)
        defer { try? other.close() }
        try await other.execute("DELETE FROM note")
        try await waitUntil("the other connection's delete") { self.model.notes.isEmpty }
    }

    @Test func theSearchFiltersTitlesAndBodiesIgnoringCase() async throws {
        try storeNote("Shopping", body: "milk, eggs", minutesAgo: 3)
        try storeNote("MILK prices", minutesAgo: 2)
        try storeNote("Ideas", body: "none", minutesAgo: 1)

        model.searchText = "Milk"
        try await startObserving()
        #expect(titles == ["MILK prices", "Shopping"])

        try await model.add(title: "Oat milk")
        try await model.add(title: "Bread")
        try await waitUntil("the new match") { self.titles == ["Oat milk", "MILK prices", "Shopping"] }

        model.searchText = "  "
        try await startObserving()                       // what `.task(id: searchText)` does
        try await waitUntil("every note") { self.model.notes.count == 5 }
    }

    @Test func dismissingTheErrorAlertClearsTheMessage() {
        #expect(!model.isShowingError)
        model.errorMessage = "Validation failed: title must not be empty"
        #expect(model.isShowingError)
        model.isShowingError = false
        #expect(model.errorMessage == nil)
    }

    @Test func cancellingTheTaskEndsTheObservation() async throws {
        try await startObserving()
        let task = try #require(observation)

        task.cancel()
        try await finish(task)

        #expect(model.failure == nil)
    }

    @Test func closingTheDatabaseEndsTheObservationWithAFailure() async throws {
        try await startObserving()
        let task = try #require(observation)

        try db.close()
        try await finish(task)

        let failure = try #require(model.failure)
        #expect(failure == ActiveObjectError.databaseClosed.localizedDescription)
    }
}
