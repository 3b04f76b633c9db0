import ActiveObjects
import Foundation
import Observation

/// The notes screen's state: the notes, fed by a live query, and the actions that change them.
///
/// ```swift
/// List(model.notes) { note in NoteRow(note: note) }
///     .searchable(text: $model.searchText)
///     .task(id: model.searchText) { await model.observe() }   // restarts when the search changes
/// ```
///
/// The notes are `Observable` records: an editor binds to one (`@Bindable var note`) and
/// ``save(_:)`` writes its edits; the list's row for that note re-renders as it is edited, and
/// no other row does.
///
/// The list is never edited by hand: ``save(_:)``, ``add(title:body:)``, ``update(_:title:body:)``,
/// ``togglePinned(_:)`` and ``delete(_:)`` write to the database, and the live query started
/// by ``observe()`` brings the new list (fresh objects) after the commit — as it does for a
/// commit made anywhere else (another window, a sync engine, an app extension on the same file).
@MainActor
@Observable
public final class NotesViewModel {
    /// The notes to show: pinned first, then the most recently changed.
    public private(set) var notes: [Note] = []
    /// False until the live query delivered its first result.
    public private(set) var isLoaded = false
    /// Why the live query stopped (the database was closed, a read failed); nil while it runs.
    public private(set) var failure: String?
    /// Shows only the notes whose title or body contains this text (ignoring ASCII case).
    /// Restart ``observe()`` after changing it (`.task(id: model.searchText)` does).
    public var searchText = ""
    /// An error for the screen to show (an action that failed), cleared by the screen.
    public var errorMessage: String?
    /// Whether there is an ``errorMessage`` to show; setting it to false clears the message
    /// (what an alert's `isPresented` binding does when dismissed).
    public var isShowingError: Bool {
        get { errorMessage != nil }
        set { if !newValue { errorMessage = nil } }
    }

    /// A view model; nothing is read until ``observe()`` runs.
    public init() {}

    /// The query behind ``notes``, for the current ``searchText``.
    public var query: Query<Note> {
        var query = Note.order(by: \.$pinned, .descending)
            .order(by: \.$updatedAt, .descending)
            .order(by: \.$id, .descending)
        let search = searchText.trimmingCharacters(in: .whitespacesAndNewlines)
        if !search.isEmpty {
            query = query.where("instr(lower(title), lower(?)) > 0 OR instr(lower(body), lower(?)) > 0", search, search)
        }
        return query
    }

    /// Follows the notes matching ``searchText`` until the calling task is cancelled: ``notes``
    /// is replaced after every commit that changed the `note` table. Returns when the task is
    /// cancelled, or when the live query fails (``failure`` then says why).
    public func observe() async {
        failure = nil
        do {
            for try await notes in query.values() {
                self.notes = notes
                isLoaded = true
            }
        } catch is CancellationError {
            // The view went away.
        } catch {
            failure = error.localizedDescription
        }
    }

    /// Adds a note; it appears in ``notes`` once the live query brings it.
    /// - Returns: the saved note (its `id` is set).
    /// - Throws: `ActiveObjectError.validationFailed` for an empty or over-long title (nothing
    ///   is written); `DatabaseError` from SQLite.
    @discardableResult
    public func add(title: String, body: String = "") async throws -> Note {
        let note = Note()
        note.title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        note.body = body
        try await note.save()
        return note
    }

    /// Saves the edits made on `note` itself — what an editor bound to it (`@Bindable var note`)
    /// typed — trimming the title first; a new note is inserted. Only the changed columns are
    /// written. If the save fails, the edits stay on the note, for the editor to show the error
    /// and let the user fix them.
    /// - Throws: `ActiveObjectError.validationFailed` for an empty or over-long title (nothing
    ///   is written); `ActiveObjectError.recordNotFound` when the note was deleted meanwhile;
    ///   `DatabaseError` from SQLite.
    public func save(_ note: Note) async throws {
        let trimmed = note.title.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed != note.title { note.title = trimmed }
        try await note.save()
    }

    /// Throws away the edits made on `note` since it was loaded or saved: a stored note gets its
    /// row's values back (`reload()`), and the views showing it follow. A new note is left as it
    /// is (the editor drops it). A failure to read the row is shown in ``errorMessage``.
    public func discardChanges(_ note: Note) async {
        guard note.id != nil, note.hasChanges else { return }
        do {
            try await note.reload()
        } catch {
            errorMessage = error.localizedDescription
        }
    }

    /// Changes a note's title and body. If the save fails, `note` gets its previous values back.
    /// - Throws: `ActiveObjectError.validationFailed` for an empty or over-long title;
    ///   `ActiveObjectError.recordNotFound` when the note was deleted meanwhile; `DatabaseError`.
    public func update(_ note: Note, title: String, body: String) async throws {
        let previous = (title: note.title, body: note.body)
        note.title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        note.body = body
        do {
            try await note.save()
        } catch {
            note.title = previous.title                // equal to the stored values: no change left
            note.body = previous.body
            throw error
        }
    }

    /// Pins an unpinned note, or unpins a pinned one.
    /// - Throws: as ``update(_:title:body:)``.
    public func togglePinned(_ note: Note) async throws {
        note.pinned.toggle()
        do {
            try await note.save()
        } catch {
            note.pinned.toggle()
            throw error
        }
    }

    /// Deletes a note; it leaves ``notes`` once the live query brings the new list.
    /// - Returns: false when the note was already gone.
    /// - Throws: `DatabaseError` from SQLite.
    @discardableResult
    public func delete(_ note: Note) async throws -> Bool {
        try await note.delete()
    }
}
