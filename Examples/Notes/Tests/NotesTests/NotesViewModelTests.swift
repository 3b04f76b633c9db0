import ActiveObjects
import Foundation
import Testing
@testable import Notes

/// The view model against a real WAL file: its list comes from its live result only, so every
/// check below waits (with a timeout) for what the database commit produces.
/// Serialized: the models use the process-wide `ActiveObject.defaultDatabase`.
@Suite(.serialized)
@MainActor
final class NotesViewModelTests {
    let file = TemporaryNotesFile()
    let db: Database
    /// The window under test (TwoWindowsTests.swift opens a second one).
    let model = NotesViewModel()

    init() throws {
        db = try NotesDatabase.open(path: file.path)
    }

    deinit {
        // Closing the database ends the windows' live results (with `databaseClosed`).
        try? db.close()
        file.remove()
    }

    /// Starts the live result of `window` (the model under test by default) as the list's
    /// `.onChange(of: searchText, initial: true)` does, and waits for its first result.
    func startObserving(_ window: NotesViewModel? = nil) async throws {
        let window = window ?? model
        window.observe()
        try await waitUntil("the first result") { window.isLoaded }
    }

    /// A stored note with a fixed age, written with the synchronous API (without the library's
    /// timestamps, so that the dates set are the ones written).
    @discardableResult
    func storeNote(_ title: String, body: String = "", pinned: Bool = false, minutesAgo: Double) throws -> Note {
        let note = Note()
        note.title = title
        note.body = body
        note.pinned = pinned
        note.createdAt = Date(timeIntervalSinceNow: -minutesAgo * 60)
        note.updatedAt = note.createdAt
        try ActiveObject.withoutTimestamps { try note.save() }
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
        #expect(shown !== note, "the list holds the live result's objects, not the one saved")
        #expect(try await Note.countAll() == 1)
    }

    @Test func anAddedNoteIsStampedByTheLibrary() async throws {
        let note = try await model.add(title: "new")
        #expect(abs(note.createdAt.timeIntervalSinceNow) < 10, "createdAt \(note.createdAt) is now")
        #expect(note.updatedAt == note.createdAt, "one moment for both stamps of an insert")
        let id = try #require(note.id)
        let stored = try #require(try await Note.find(id: id))
        #expect(abs(stored.createdAt.timeIntervalSince(note.createdAt)) < 0.002)
        // A save that changes nothing leaves updatedAt.
        try await model.save(stored)
        #expect(try await Note.find(id: id)?.updatedAt == stored.updatedAt)
    }

    @Test func editingMovesTheNoteToTheTopAndStampsIt() async throws {
        let older = try storeNote("older", minutesAgo: 10)
        try storeNote("newer", minutesAgo: 5)
        try await startObserving()
        #expect(titles == ["newer", "older"])
        let (newer, shown) = (model.notes[0], model.notes[1])
        let before = shown.updatedAt

        try await model.update(shown, title: "older, edited", body: "more")

        try await waitUntil("the edited note on top") { self.titles == ["older, edited", "newer"] }
        #expect(model.notes[0] === shown && model.notes[1] === newer, "the notes moved, as the same objects")
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
        let (b, a) = (model.notes[0], model.notes[1])

        try await model.togglePinned(a)
        try await waitUntil("the pinned note first") { self.titles == ["a", "b"] && self.model.notes[0].pinned }
        #expect(model.notes[0] === a && model.notes[1] === b)

        try await model.togglePinned(a)
        try await waitUntil("the unpinned note back in place") { self.titles == ["a", "b"] && !self.model.notes[0].pinned }
        #expect(model.notes[0] === a && model.notes[1] === b)
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
        let shown = model.notes[0]
        let renders = RenderCount()
        renderRow(of: shown, counting: renders)

        // Raw SQL, in a transaction: the row's object is updated in place, its row re-renders.
        let db = self.db
        try await db.transaction {
            try db.execute("UPDATE note SET title = ? WHERE title = ?", ["renamed by SQL", "from a background task"])
        }
        try await waitUntil("the SQL update") { self.titles == ["renamed by SQL"] }
        #expect(model.notes[0] === shown && renders.value == 1)

        // A second connection to the same file, as an app extension would have.
        let other = try Database(path: file.path)
        defer { try? other.close() }
        try await other.execute("UPDATE note SET body = 'from an extension'")
        try await waitUntil("the other connection's update") { shown.body == "from an extension" }
        #expect(model.notes.count == 1 && model.notes[0] === shown && !shown.hasChanges)
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
        try await startObserving()                       // what `.onChange(of: searchText)` does
        try await waitUntil("every note") { self.model.notes.count == 5 }
    }

    @Test func dismissingTheErrorAlertClearsTheMessage() {
        #expect(!model.isShowingError)
        model.errorMessage = "Validation failed: title must not be empty"
        #expect(model.isShowingError)
        model.isShowingError = false
        #expect(model.errorMessage == nil)
    }

    @Test func stoppingLeavesTheListAsItIs() async throws {
        let stored = try storeNote("before the stop", minutesAgo: 1)
        try await startObserving()
        let shown = try #require(model.notes.first)
        // Another window, still following: what it sees no longer reaches this one.
        let witness = NotesViewModel()
        try await startObserving(witness)

        model.stopObserving()
        stored.title = "after the stop"
        try await stored.save()
        try await model.add(title: "added after the stop")
        try await waitUntil("the witness window's list") {
            witness.notes.map(\.title) == ["added after the stop", "after the stop"]
        }

        #expect(titles == ["before the stop"] && model.notes[0] === shown)
        #expect(model.failure == nil)
    }

    @Test func closingTheDatabaseStopsTheListWithAFailure() async throws {
        try await startObserving()

        try db.close()
        try await waitUntil("the failure") { self.model.failure != nil }

        let failure = try #require(model.failure)
        #expect(failure == ActiveObjectError.databaseClosed.localizedDescription)
    }
}
