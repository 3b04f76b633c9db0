import ActiveObjects
import Foundation
import Observation
import Testing
@testable import Notes

/// Two windows of the app, as `WindowGroup { NotesWindow() }` makes them: two view models, each
/// with its own live result over the same database, so each with its own `Note` objects for the
/// same rows. A save in one window reaches the other as an update **in place**: the other
/// window's object for that row stays the same object (`===`), its properties change, and the
/// views observing it (its row, its open editor; evaluated here in `withObservationTracking`,
/// as SwiftUI does) are told. What a user typed and has not saved stays in their window.
/// Part of ``NotesViewModelTests`` (serialized: one default database).
extension NotesViewModelTests {
    /// Opens a second window on the same database and waits for its first result.
    func openSecondWindow() async throws -> NotesViewModel {
        let window = NotesViewModel()
        try await startObserving(window)
        return window
    }

    /// Evaluates an open editor of `note` as SwiftUI evaluates its body: it reads the fields it
    /// binds to (`$note.title`, `$note.body`, `$note.pinned`). `renders` counts the re-renders
    /// they ask for (at most one: tracking ends at the first).
    @discardableResult
    func renderEditor(of note: Note, counting renders: RenderCount) -> [String] {
        withObservationTracking({ [note.title, note.body, String(note.pinned)] }, onChange: renders.handler)
    }

    @Test func aNoteSavedInOneWindowIsUpdatedInPlaceInTheOther() async throws {
        try storeNote("groceries", body: "milk", minutesAgo: 5)
        try await startObserving()
        let other = try await openSecondWindow()
        let mine = try #require(model.notes.first)
        let theirs = try #require(other.notes.first)
        #expect(mine !== theirs, "each window has its own objects")
        #expect(mine == theirs, "for the same row")
        let rowRenders = RenderCount(), editorRenders = RenderCount()
        renderRow(of: theirs, counting: rowRenders)
        renderEditor(of: theirs, counting: editorRenders)

        // This window's editor: what the user types stays here until Save.
        mine.title = "groceries, edited"
        mine.body = "milk, eggs"
        #expect(theirs.title == "groceries" && theirs.body == "milk")
        #expect(rowRenders.value == 0 && editorRenders.value == 0)
        try await model.save(mine)

        try await waitUntil("the other window's note updated") {
            theirs.title == "groceries, edited" && theirs.body == "milk, eggs"
        }
        #expect(other.notes.count == 1 && other.notes[0] === theirs, "the same object, updated in place")
        #expect(!theirs.hasChanges, "the row's new values are its stored values")
        #expect(rowRenders.value == 1, "its row re-renders")
        #expect(editorRenders.value == 1, "an editor open on it in the other window shows the new text")
        let id = try #require(mine.id)
        let stored = try #require(try await Note.find(id: id))
        #expect(theirs.updatedAt == stored.updatedAt, "the stamp of the save, as stored")
        #expect(model.notes.count == 1 && model.notes[0] === mine && !mine.hasChanges,
                "the saving window keeps its object too")

        // And back: a save in the other window reaches this one.
        let renders = RenderCount()
        renderRow(of: mine, counting: renders)
        try await other.togglePinned(theirs)
        try await waitUntil("the pin in this window") { mine.pinned }
        #expect(model.notes[0] === mine && renders.value == 1 && !mine.hasChanges)
    }

    @Test func aNoteSavedInOneWindowMovesInTheOtherAsTheSameObject() async throws {
        try storeNote("older", minutesAgo: 10)
        try storeNote("newer", minutesAgo: 5)
        try await startObserving()
        let other = try await openSecondWindow()
        #expect(other.notes.map(\.title) == ["newer", "older"])
        let (newer, older) = (other.notes[0], other.notes[1])
        let listRenders = RenderCount()
        withObservationTracking({ _ = other.notes }, onChange: listRenders.handler)

        // Editing stamps `updatedAt`: the note moves to the top, in both windows.
        try await model.update(model.notes[1], title: "older, edited", body: "")
        try await waitUntil("the edited note on top in the other window") {
            other.notes.map(\.title) == ["older, edited", "newer"]
        }
        #expect(other.notes[0] === older && other.notes[1] === newer)
        #expect(listRenders.value == 1, "the other window's list re-renders for the move")

        // Pinning "newer" here brings it first there: the same objects again.
        try await waitUntil("this window's own order") { self.titles == ["older, edited", "newer"] }
        try await model.togglePinned(model.notes[1])
        try await waitUntil("the pinned note first in the other window") {
            other.notes.first === newer && newer.pinned
        }
        #expect(other.notes.count == 2 && other.notes[1] === older)
    }

    @Test func whatTheUserTypedAndHasNotSavedStaysWhenAnotherWindowSavesTheNote() async throws {
        try storeNote("draft", body: "first line", minutesAgo: 5)
        try await startObserving()
        let other = try await openSecondWindow()
        let mine = try #require(model.notes.first)
        let theirs = try #require(other.notes.first)

        // This window's editor: the user types a title and does not save.
        mine.title = "typed here"
        #expect(mine.hasChanges)
        let editorRenders = RenderCount()
        #expect(renderEditor(of: mine, counting: editorRenders) == ["typed here", "first line", "false"])

        // The other window pins the note, adds a line to its body, and saves.
        theirs.pinned = true
        theirs.body = "first line\nsecond line"
        try await other.save(theirs)

        try await waitUntil("the other window's save in this window") {
            mine.pinned && mine.body == "first line\nsecond line"
        }
        #expect(model.notes.count == 1 && model.notes[0] === mine, "updated in place")
        #expect(mine.title == "typed here", "the unsaved title keeps what the user typed")
        #expect(mine.hasChanges, "and is still an unsaved change")
        #expect(editorRenders.value == 1, "the open editor shows the other window's pin and body")
        let id = try #require(mine.id)
        var stored = try #require(try await Note.find(id: id))
        #expect(stored.title == "draft" && stored.pinned && stored.body == "first line\nsecond line")

        // Saving here writes the user's title; the other window's pin and body stay.
        try await model.save(mine)
        #expect(!mine.hasChanges)
        stored = try #require(try await Note.find(id: id))
        #expect(stored.title == "typed here" && stored.pinned && stored.body == "first line\nsecond line")
        try await waitUntil("the title in the other window") { theirs.title == "typed here" }
        #expect(other.notes.count == 1 && other.notes[0] === theirs && theirs.pinned && !theirs.hasChanges)
    }

    @Test func anUnsavedEditOfTheSameFieldStaysAndCancelShowsTheOtherWindowsValue() async throws {
        try storeNote("title", minutesAgo: 5)
        try await startObserving()
        let other = try await openSecondWindow()
        let mine = try #require(model.notes.first)
        let theirs = try #require(other.notes.first)

        mine.title = "mine, unsaved"
        try await other.update(theirs, title: "theirs, saved", body: "their body")

        try await waitUntil("the other window's body here") { mine.body == "their body" }
        #expect(mine.title == "mine, unsaved" && mine.hasChanges && model.notes[0] === mine)

        // Cancel in this window's editor: the row's values, which the other window saved.
        await model.discardChanges(mine)
        #expect(mine.title == "theirs, saved" && mine.body == "their body" && !mine.hasChanges)
        #expect(model.notes[0] === mine && model.errorMessage == nil)
    }

    @Test func aNoteDeletedInOneWindowLeavesTheOtherAndItsEditorCannotSaveIt() async throws {
        try storeNote("stays", minutesAgo: 10)
        try storeNote("goes", minutesAgo: 5)
        try await startObserving()
        let other = try await openSecondWindow()
        let (doomed, staying) = (other.notes[0], other.notes[1])
        doomed.title = "typed into a note about to go"

        #expect(try await model.delete(model.notes[0]))

        try await waitUntil("the other window without it") { other.notes.count == 1 }
        #expect(other.notes[0] === staying)
        await #expect(throws: ActiveObjectError.self) { try await other.save(doomed) }
        #expect(try await Note.countAll() == 1)
    }
}
