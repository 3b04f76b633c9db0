#if canImport(SwiftUI)
import ActiveObjects
import SwiftUI

/// Edits a new or an existing note; Save writes it through the view model, and the list
/// updates from its live query.
struct NoteEditorView: View {
    /// What the editor edits.
    enum Target: Identifiable {
        case new
        case existing(Note)

        var id: Int64 { if case .existing(let note) = self { note.id ?? -1 } else { 0 } }
    }

    let model: NotesViewModel
    let target: Target
    @State private var title = ""
    @State private var text = ""
    @State private var error: String?
    @State private var isSaving = false
    @Environment(\.dismiss) private var dismiss

    init(model: NotesViewModel, target: Target) {
        self.model = model
        self.target = target
        if case .existing(let note) = target {
            _title = State(initialValue: note.title)
            _text = State(initialValue: note.body)
        }
    }

    var body: some View {
        Form {
            TextField("Title", text: $title)
            TextEditor(text: $text).frame(minHeight: 200)
            if let error {
                Text(error).foregroundStyle(.red)
            }
        }
        .navigationTitle(title.isEmpty ? "New Note" : title)
        .toolbar {
            ToolbarItem(placement: .cancellationAction) { Button("Cancel") { dismiss() } }
            ToolbarItem(placement: .confirmationAction) {
                Button("Save") { Task { await save() } }.disabled(isSaving)
            }
        }
    }

    private func save() async {
        isSaving = true
        defer { isSaving = false }
        do {
            switch target {
            case .new: try await model.add(title: title, body: text)
            case .existing(let note): try await model.update(note, title: title, body: text)
            }
            dismiss()
        } catch {
            self.error = error.localizedDescription     // "Validation failed: title must not be empty"
        }
    }
}
#endif
