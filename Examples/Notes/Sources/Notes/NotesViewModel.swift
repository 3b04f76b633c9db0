import ActiveObjects
import Foundation
import Observation

/// The state of one notes window: its notes, kept by a live result (`liveResults()`, §17), and
/// the actions that change them.
///
/// ```swift
/// List(model.notes) { note in NoteRow(note: note) }
///     .searchable(text: $model.searchText)
///     .onChange(of: model.searchText, initial: true) { model.observe() }   // again for a new search
/// ```
///
/// **One row, one object.** The notes are the live result's objects: while the window follows
/// them, a row is always the same `Note`. A commit that changes a row — saved by this window,
/// by another window (each window has its own view model, so its own live result and its own
/// objects), by a background task, raw SQL or another process — updates that object in place,
/// on the main actor, property by property: the views observing it (the list's row, an editor
/// bound to it with `@Bindable var note`) follow, and no other view does. A note that moves
/// (edited, pinned) moves as the same object; a row that enters is a new object.
///
/// **Unsaved edits stay.** What the user typed into a note and has not saved keeps the user's
/// value when another window saves the same note: the columns the user did not touch follow
/// the row, and the note still `hasChanges`, so ``save(_:)`` writes the user's columns alone
/// and ``discardChanges(_:)`` brings the row's values back.
///
/// The list is never edited by hand: ``save(_:)``, ``add(title:body:)``, ``update(_:title:body:)``,
/// ``togglePinned(_:)`` and ``delete(_:)`` write to the database, and the live result brings
/// the change after the commit, as it does for a commit made anywhere else.
@MainActor
@Observable
public final class NotesViewModel {
    /// The live result behind ``notes``: nil until ``observe()``; replaced by each ``observe()``.
    public private(set) var results: LiveResults<Note>?
    /// The notes to show: pinned first, then the most recently changed. Empty until the live
    /// result delivered its first result.
    public var notes: [Note] { results?.elements ?? [] }
    /// False until the live result delivered its first result.
    public var isLoaded: Bool { results?.isLoaded ?? false }
    /// Why the live result stopped following (the database was closed, a read failed); nil
    /// while it follows.
    public var failure: String? { results?.error.map { $0.localizedDescription } }
    /// Shows only the notes whose title or body contains this text (ignoring ASCII case).
    /// Call ``observe()`` after changing it (`.onChange(of: model.searchText, initial: true)` does).
    public var searchText = ""
    /// An error for the screen to show (an action that failed), cleared by the screen.
    public var errorMessage: String?
    /// Whether there is an ``errorMessage`` to show; setting it to false clears the message
    /// (what an alert's `isPresented` binding does when dismissed).
    public var isShowingError: Bool {
        get { errorMessage != nil }
        set { if !newValue { errorMessage = nil } }
    }

    /// The engine that synchronizes the notes with a server (``NotesDatabase/syncEngine(database:serverURL:token:)``);
    /// nil for notes kept on this device only.
    public let syncEngine: SyncEngine?
    /// True while ``synchronize()`` runs (a screen shows progress, and disables its button).
    public private(set) var isSynchronizing = false
    /// What the last successful ``synchronize()`` did; nil before the first.
    public private(set) var lastSync: SyncReport?

    /// A view model; nothing is read until ``observe()`` runs.
    /// - Parameter syncEngine: the engine ``synchronize()`` uses; nil (the default) for notes
    ///   that stay on this device.
    public init(syncEngine: SyncEngine? = nil) {
        self.syncEngine = syncEngine
    }

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

    /// Starts following the notes matching ``searchText``: a new live result replaces the
    /// previous one, which stops (the notes of a new search are new objects). Its first result
    /// arrives shortly after (``isLoaded``); from then on, ``notes`` follows every commit that
    /// changes them, in place. It follows until ``stopObserving()``, a failure (``failure``
    /// says why), or the view model's deallocation (the window closed).
    public func observe() {
        results?.cancel()
        results = query.liveResults()
    }

    /// Stops following: ``notes`` keep their last state; no commit changes them from now on.
    public func stopObserving() {
        results?.cancel()
    }

    /// Adds a note; it appears in ``notes`` once the live result brings it (as an object of
    /// the live result's, not the one returned).
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

    /// Synchronizes the notes with the server: pushes the changes made on this device (by any
    /// window, task or process) and pulls the other devices'. Pulled notes are commits like any
    /// other: the live result brings them into ``notes``, and a note open in an editor follows
    /// (unsaved edits stay, as for another window's save). Call it at launch, when the app comes
    /// to the foreground, after edits, or on a timer; calls made while one runs wait for it.
    ///
    /// A failure (no network, the server refused the token) is shown in ``errorMessage`` and
    /// loses nothing: the changes stay queued for the next call.
    /// - Returns: the counts of rows pushed and pulled; nil without a ``syncEngine`` or when it
    ///   failed.
    @discardableResult
    public func synchronize() async -> SyncReport? {
        guard let syncEngine else { return nil }
        isSynchronizing = true
        defer { isSynchronizing = false }
        do {
            let report = try await syncEngine.synchronize()
            lastSync = report
            return report
        } catch {
            errorMessage = "Synchronization failed: \(error.localizedDescription)"
            return nil
        }
    }

    /// Deletes a note; it leaves ``notes`` once the live result brings the change.
    /// - Returns: false when the note was already gone.
    /// - Throws: `DatabaseError` from SQLite.
    @discardableResult
    public func delete(_ note: Note) async throws -> Bool {
        try await note.delete()
    }
}
