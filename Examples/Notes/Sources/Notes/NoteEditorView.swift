#if canImport(SwiftUI)
import ActiveObjects
import SwiftUI

/// Edits a new or an existing note by binding straight to the record (`@Bindable`): what the
/// user types is in the note at once, so the list's row for it follows as they type. Save
/// writes the changed columns through the view model; Cancel gives the note its stored values
/// back.
///
/// An existing note is an object of the window's live result: when another window saves it
/// meanwhile, the fields the user has not touched here show the new values at once, and what
/// the user typed here stays (Save then writes it; Cancel shows the other window's values).
struct NoteEditorView: View {
    /// What the editor edits: a new note (made when + is tapped) or one of the list's.
    enum Target: Identifiable {
        case new(Note)
        case existing(Note)

        /// The note the editor binds to.
        var note: Note {
            switch self {
            case .new(let note), .existing(let note): note
            }
        }

        var id: ObjectIdentifier { ObjectIdentifier(note) }
    }

    let model: NotesViewModel
    @Bindable var note: Note
    private let isNew: Bool
    @State private var error: String?
    @State private var isSaving = false
    @Environment(\.dismiss) private var dismiss

    init(model: NotesViewModel, target: Target) {
        self.model = model
        self.note = target.note
        if case .new = target { isNew = true } else { isNew = false }
    }

    var body: some View {
        Form {
            TextField("Title", text: $note.title)
            TextEditor(text: $note.body).frame(minHeight: 200)
            Toggle("Pinned", isOn: $note.pinned)
            if let error {
                Text(error).foregroundStyle(.red)
            }
        }
        .navigationTitle(note.title.isEmpty ? "New Note" : note.title)
        .interactiveDismissDisabled(note.hasChanges)     // Cancel or Save, not a swipe
        .toolbar {
            ToolbarItem(placement: .cancellationAction) {
                Button("Cancel") {
                    Task {
                        await model.discardChanges(note)
                        dismiss()
                    }
                }
            }
            ToolbarItem(placement: .confirmationAction) {
                Button("Save") { Task { await save() } }
                    .disabled(isSaving || (!isNew && !note.hasChanges))
            }
        }
    }

    private func save() async {
        isSaving = true
        defer { isSaving = false }
        do {
            try await model.save(note)
            dismiss()
        } catch {
            self.error = error.localizedDescription     // "Validation failed: title must not be empty"
        }
    }
}
#endif
