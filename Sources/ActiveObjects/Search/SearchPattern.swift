import Foundation

/// A user's search text turned into an FTS5 query that can only mean "rows containing every
/// word, the last one also as a prefix": the text is never FTS5 syntax.
///
/// The words are the runs of letters and digits of the text (in Unicode's sense: `é`, `ß`,
/// `日本`, `٣` are word characters; spaces, punctuation, symbols, quotes, `*`, `-`, `:`, `^`,
/// parentheses separate words — the way the `unicode61` tokenizer splits the indexed text).
/// Each word becomes an FTS5 string (`"word"`), so that `AND`, `OR`, `NOT`, `NEAR` are words
/// like any other; the last gets `*` (a prefix query: search as you type). The pattern has at
/// most ``maximumWordCount`` words: FTS5 refuses deeper expressions, and a search text that
/// long is not typed by a person.
struct SearchPattern: Sendable, Hashable {
    /// The most words a pattern keeps; the text's words after these are ignored.
    static let maximumWordCount = 32

    /// The words, in order (at most ``maximumWordCount``).
    let words: [String]

    init(_ text: String) {
        // One normal form for the text, as for most stored text (composed characters).
        let normalized = text.precomposedStringWithCanonicalMapping
        var words: [String] = []
        var current = ""
        for character in normalized {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
                if words.count == Self.maximumWordCount { break }
            }
        }
        if !current.isEmpty && words.count < Self.maximumWordCount { words.append(current) }
        self.words = words
    }

    /// The FTS5 query: `"sqlite" "swi" *`; nil when the text has no word (it matches no row).
    var matchExpression: String? {
        guard !words.isEmpty else { return nil }
        var parts = words.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        parts[parts.count - 1] += " *"
        return parts.joined(separator: " ")
    }
}
