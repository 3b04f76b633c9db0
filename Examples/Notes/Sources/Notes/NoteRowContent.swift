import Foundation

/// What one line of the notes list shows, read from the note: the SwiftUI row's `body` reads
/// exactly these properties, so it re-renders when one of them changes — and only then (notes
/// are `Observable`, property by property). Platform-independent, so that Linux tests can
/// observe what a row reads.
public struct NoteRowContent: Equatable {
    /// The note's title, on the first line.
    public let title: String
    /// Whether the pin shows.
    public let pinned: Bool
    /// When the note last changed, shown as a relative time.
    public let updatedAt: Date
    /// The start of the body, on the second line; nil for an empty body.
    public let preview: String?

    /// The longest preview, in characters.
    public static let previewLength = 80

    /// Reads what the row shows from `note`.
    public init(_ note: Note) {
        title = note.title
        pinned = note.pinned
        updatedAt = note.updatedAt
        let body = note.body
        preview = body.isEmpty ? nil : String(body.prefix(Self.previewLength))
    }
}
