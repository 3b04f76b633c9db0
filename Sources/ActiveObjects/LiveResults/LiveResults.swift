import Foundation
import Observation

/// A query's objects on the main actor, kept up to date in place (§17), made by
/// `Query.liveResults()`. Observable: SwiftUI views (and `withObservationTracking`) that read
/// ``elements``, ``isLoaded`` or ``error`` follow them.
///
/// ```swift
/// @MainActor final class NotesScreen {
///     let notes = Note.where(\.$archived == false).order(by: \.$updatedAt, .descending).liveResults()
/// }
/// // SwiftUI: List(screen.notes.elements) { note in NoteRow(note: note) }
/// ```
///
/// - **One row, one object**: while it follows, a row is always the same object; when the row
///   changes, the object is updated in place, on the main actor, and its observers are told
///   property by property. Rows that enter are new objects; rows that leave are dropped.
/// - **Unsaved edits stay**: a property the user assigned and has not saved keeps the user's
///   value when the row changes underneath; the other properties follow the row.
/// - **Every commit**: of this `Database`, another `Database` on the same file, another
///   process. After the last commit, ``elements`` equals a fresh fetch, in order (rows that
///   tie in the query's order keep the order they were placed in).
/// - **Lifetime**: it follows until ``cancel()``, an error (``error``), the database closing,
///   or its deallocation.
@MainActor @Observable
public final class LiveResults<Model: ActiveObject> {
    /// The objects of the result, in the query's order (empty until ``isLoaded``).
    public private(set) var elements: [Model] = []
    /// False until the first result arrived.
    public private(set) var isLoaded = false
    /// Why it stopped following (a failed read, ``ActiveObjectError/databaseClosed``, the
    /// model without a database…); nil while it follows, and after ``cancel()``.
    public private(set) var error: (any Error)?

    @ObservationIgnored private let following = LockedValue<Task<Void, Never>?>(nil)

    init(query: Query<Model>) {
        let changes = LiveChanges(query: query)
        let task = Task { @MainActor [weak self] in
            do {
                for try await change in changes {
                    guard let self else { return }
                    self.elements = change.elements
                    if !self.isLoaded { self.isLoaded = true }
                }
            } catch {
                // After cancel(), nothing changes: not even the error.
                if !Task.isCancelled { self?.error = error }
            }
        }
        following.withLock { $0 = task }
    }

    deinit {
        following.withLock { $0?.cancel() }
    }

    /// Stops following: ``elements`` keep their last state; nothing changes them from now on.
    /// Also happens when the object is deallocated.
    public func cancel() {
        following.withLock {
            $0?.cancel()
            $0 = nil
        }
    }
}
