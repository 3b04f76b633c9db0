import ActiveObjects
import Foundation
import Observation
import Testing
@testable import Notes

/// Notes are `Observable` records: what the SwiftUI views rely on, checked on Linux with the
/// Observation framework — a row's `body` evaluated in `withObservationTracking`, as SwiftUI
/// does, and an editor that binds to the record (`@Bindable var note`) assigning its
/// properties. Part of ``NotesViewModelTests`` (serialized: one default database).
extension NotesViewModelTests {
    /// Evaluates a row of the list as SwiftUI evaluates a body: `renders` counts the
    /// re-renders the observed properties ask for (at most one: tracking ends at the first).
    @discardableResult
    func renderRow(of note: Note, counting renders: RenderCount) -> NoteRowContent {
        withObservationTracking({ NoteRowContent(note) }, onChange: renders.handler)
    }

    @Test func anObservedRowRerendersWhenItsNoteChangesAndNotWhenAnotherDoes() async throws {
        try storeNote("first", minutesAgo: 2)
        try storeNote("second", minutesAgo: 1)
        try await startObserving()
        #expect(titles == ["second", "first"])
        let second = model.notes[0]
        let first = model.notes[1]
        let renders = RenderCount()

        #expect(renderRow(of: first, counting: renders) == NoteRowContent(first))
        second.title = "second, edited"
        second.body = "more"
        second.pinned = true
        #expect(renders.value == 0, "another note changed")
        first.title = "first"
        #expect(renders.value == 0, "an equal title is no change")
        first.title = "first, edited"
        #expect(renders.value == 1)
    }

    @Test func aRowDoesNotRerenderForAPropertyItDoesNotShow() async throws {
        try storeNote("note", minutesAgo: 1)
        try await startObserving()
        let note = try #require(model.notes.first)
        let renders = RenderCount()

        renderRow(of: note, counting: renders)
        note.createdAt = Date(timeIntervalSince1970: 0)
        #expect(renders.value == 0, "the row does not show createdAt")
        note.body = "a body now"
        #expect(renders.value == 1, "the row shows a preview of the body")
    }

    @Test func anEditorBoundToTheNoteSavesWhatWasTyped() async throws {
        try storeNote("draft", body: "text", minutesAgo: 5)
        try await startObserving()
        let note = try #require(model.notes.first)
        let renders = RenderCount()
        renderRow(of: note, counting: renders)

        note.title = "  final  "                      // what TextField("Title", text: $note.title) does
        #expect(renders.value == 1, "the row follows the editor as the user types")
        #expect(note.hasChanges)
        try await model.save(note)

        #expect(note.title == "final" && !note.hasChanges)
        let id = try #require(note.id)
        let stored = try #require(try await Note.find(id: id))
        #expect(stored.title == "final" && stored.body == "text")
        try await waitUntil("the saved title in the list") { self.titles == ["final"] }
        #expect(model.notes.count == 1 && model.notes[0] === note, "the list keeps the edited object")
    }

    @Test func cancellingAnEditGivesTheNoteItsStoredValuesBack() async throws {
        try storeNote("kept", body: "body", minutesAgo: 5)
        try await startObserving()
        let note = try #require(model.notes.first)
        note.title = "typed"
        note.body = "typed too"
        let renders = RenderCount()
        renderRow(of: note, counting: renders)

        await model.discardChanges(note)

        #expect(note.title == "kept" && note.body == "body" && !note.hasChanges)
        #expect(renders.value == 1, "the row shows the stored values again")
        #expect(model.errorMessage == nil)
    }

    @Test func anInvalidEditWritesNothingAndKeepsTheEditsForTheEditor() async throws {
        try storeNote("valid", minutesAgo: 5)
        try await startObserving()
        let note = try #require(model.notes.first)

        note.title = "   "
        note.body = "typed"
        await #expect(throws: ActiveObjectError.self) { try await self.model.save(note) }

        #expect(note.title == "" && note.body == "typed" && note.hasChanges)
        let id = try #require(note.id)
        let stored = try #require(try await Note.find(id: id))
        #expect(stored.title == "valid" && stored.body == "")
    }

    @Test func aNewNoteFromTheEditorIsInserted() async throws {
        try await startObserving()
        let note = Note()                                  // what + hands the editor
        note.title = "new one"
        note.body = "text"

        try await model.save(note)

        #expect(note.id != nil && !note.hasChanges)
        try await waitUntil("the new note") { self.titles == ["new one"] }
    }

    @Test func theListRerendersWhenTheLiveQueryBringsNewNotes() async throws {
        try await startObserving()
        let renders = RenderCount()
        let model = self.model
        withObservationTracking({ _ = model.notes }, onChange: renders.handler)

        try await model.add(title: "arrives")

        try await waitUntil("the list re-rendered") { renders.value == 1 }
        #expect(titles == ["arrives"])
    }
}

/// Counts the changes an observation reported. Notes change on the main actor, and observers
/// are told on the thread that changes the property: `onChange` runs there too.
@MainActor
final class RenderCount {
    private(set) var value = 0

    /// An `onChange` handler that counts (it traps if called off the main actor).
    nonisolated var handler: @Sendable () -> Void {
        { MainActor.assumeIsolated { self.value += 1 } }
    }
}
