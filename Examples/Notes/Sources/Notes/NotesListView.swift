#if canImport(SwiftUI)
import ActiveObjects
import SwiftUI

/// One window of the app: its own ``NotesViewModel``, so its own live result and its own
/// objects. A note saved in one window is updated in place in every other window (the same
/// object, its views following); what a user typed and has not saved in one window stays there.
///
/// ```swift
/// @main struct NotesApp: App {
///     init() { try! NotesDatabase.open(path: NotesApp.databasePath) }
///     var body: some Scene { WindowGroup { NotesWindow() } }     // File > New Window: another
/// }
/// ```
///
/// Synchronized with a server, every window shares one engine:
/// `NotesWindow(syncEngine: NotesApp.syncEngine)` with
/// `NotesDatabase.syncEngine(database:serverURL:token:)`.
public struct NotesWindow: View {
    @State private var model: NotesViewModel

    /// A window with a view model of its own (nothing is read before the list appears).
    /// - Parameter syncEngine: the engine the window's sync button and pull-to-refresh use;
    ///   nil (the default) for notes kept on this device.
    @MainActor public init(syncEngine: SyncEngine? = nil) {
        _model = State(initialValue: NotesViewModel(syncEngine: syncEngine))
    }

    /// The notes list of this window.
    public var body: some View {
        NotesListView(model: model)
    }
}

/// The notes list: search, pin, swipe to delete, tap to edit, + to add; with a sync engine,
/// synchronized when it appears, by pull-to-refresh and by its sync button.
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
            .refreshable { [model] in _ = await model.synchronize() }
            .toolbar {
                Button { editing = .new(Note()) } label: { Label("New Note", systemImage: "square.and.pencil") }
                if model.syncEngine != nil {
                    Button { Task { _ = await model.synchronize() } } label: {
                        Label("Sync", systemImage: "arrow.triangle.2.circlepath")
                    }
                    .disabled(model.isSynchronizing)
                }
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
        // The live result starts with the list, and starts again when the search changes; it
        // stops with the view model (the window closing).
        .onChange(of: model.searchText, initial: true) { model.observe() }
        // Pulls what the other devices wrote when the list appears (nothing without an engine).
        .task { [model] in _ = await model.synchronize() }
    }

    private func perform(_ action: @escaping @MainActor () async throws -> Void) {
        Task {
            do { try await action() } catch { model.errorMessage = error.localizedDescription }
        }
    }
}

/// One line of the list. Reads the note's properties through ``NoteRowContent``: it re-renders
/// when one of them changes (an edit in the editor, which binds to the same object; a save in
/// another window, which the live result brings into this object), and not when another note
/// changes.
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
