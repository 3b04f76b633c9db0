#if canImport(SwiftUI)
import ActiveObjects
import SwiftUI

/// The notes list: search, pin, swipe to delete, tap to edit, + to add.
///
/// ```swift
/// @main struct NotesApp: App {
///     @State private var model = NotesViewModel()
///     init() { try! NotesDatabase.open(path: NotesApp.databasePath) }
///     var body: some Scene { WindowGroup { NotesListView(model: model) } }
/// }
/// ```
public struct NotesListView: View {
    @Bindable var model: NotesViewModel
    @State private var editing: NoteEditorView.Target?

    /// A list showing `model`.
    public init(model: NotesViewModel) {
        self.model = model
    }

    /// The list, its search field, toolbar, editor sheet and error alert.
    public var body: some View {
        NavigationStack {
            List {
                ForEach(model.notes) { note in
                    Button { editing = .existing(note) } label: { NoteRow(note: note) }
                        .swipeActions(edge: .leading) {
                            Button(note.pinned ? "Unpin" : "Pin") { perform { try await model.togglePinned(note) } }
                        }
                }
                .onDelete { offsets in
                    let doomed = offsets.map { model.notes[$0] }
                    perform { for note in doomed { try await model.delete(note) } }
                }
            }
            .overlay {
                if model.isLoaded && model.notes.isEmpty {
                    ContentUnavailableView(model.searchText.isEmpty ? "No Notes" : "No Results", systemImage: "note.text")
                } else if let failure = model.failure {
                    ContentUnavailableView("Cannot Read Notes", systemImage: "exclamationmark.triangle", description: Text(failure))
                }
            }
            .navigationTitle("Notes")
            .searchable(text: $model.searchText)
            .toolbar {
                Button { editing = .new(Note()) } label: { Label("New Note", systemImage: "square.and.pencil") }
            }
            .sheet(item: $editing) { target in
                NavigationStack { NoteEditorView(model: model, target: target) }
            }
            .alert("Something Went Wrong", isPresented: $model.isShowingError) {
                Button("OK", role: .cancel) {}
            } message: {
                Text(model.errorMessage ?? "")
            }
        }
        // The live query runs while the list is on screen, restarted when the search changes.
        .task(id: model.searchText) { await model.observe() }
    }

    private func perform(_ action: @escaping @MainActor () async throws -> Void) {
        Task {
            do { try await action() } catch { model.errorMessage = error.localizedDescription }
        }
    }
}

/// One line of the list. Reads the note's properties through ``NoteRowContent``: it re-renders
/// when one of them changes (an edit in the editor, which binds to the same object), and not
/// when another note changes.
struct NoteRow: View {
    let note: Note

    var body: some View {
        let content = NoteRowContent(note)
        VStack(alignment: .leading, spacing: 2) {
            HStack {
                if content.pinned { Image(systemName: "pin.fill").foregroundStyle(.orange) }
                Text(content.title).font(.headline).lineLimit(1)
            }
            Text(content.updatedAt, style: .relative).font(.caption).foregroundStyle(.secondary)
            if let preview = content.preview {
                Text(preview).font(.subheadline).foregroundStyle(.secondary).lineLimit(2)
            }
        }
    }
}
#endif
