import Foundation

/// Reads the first words of an SQL statement: keywords, identifiers in any of SQLite's quotes
/// (`"name"`, `[name]`, `` `name` ``, bare), and single symbols. Comments and spaces between
/// them are skipped.
struct SQLTokens {
    private var rest: Substring

    init(_ sql: String) { rest = Substring(sql) }

    /// The text not consumed yet.
    var remainder: Substring { rest }

    /// Consumes `word` (any case) when it comes next as a bare word.
    mutating func keyword(_ word: String) -> Bool {
        skipSpace()
        let next = rest.prefix(while: isWordCharacter)
        guard next.uppercased() == word.uppercased() else { return false }
        rest = rest.dropFirst(next.count)
        return true
    }

    /// Consumes `symbol` when it comes next.
    mutating func symbol(_ symbol: Character) -> Bool {
        skipSpace()
        guard rest.first == symbol else { return false }
        rest = rest.dropFirst()
        return true
    }

    /// Consumes an identifier, quoted or bare, and returns it unquoted.
    mutating func identifier() -> String? {
        skipSpace()
        guard let first = rest.first else { return nil }
        let quotes: [Character: Character] = ["\"": "\"", "[": "]", "`": "`"]
        let closing = quotes[first]
        guard let closing else {
            let word = rest.prefix(while: isWordCharacter)
            rest = rest.dropFirst(word.count)
            return word.isEmpty ? nil : String(word)
        }
        var name = ""
        var index = rest.index(after: rest.startIndex)
        while index < rest.endIndex {
            let character = rest[index]
            index = rest.index(after: index)
            if character == closing {
                // A doubled closing quote stands for itself (not inside [brackets]).
                if closing != "]", index < rest.endIndex, rest[index] == closing {
                    name.append(closing)
                    index = rest.index(after: index)
                    continue
                }
                rest = rest[index...]
                return name
            }
            name.append(character)
        }
        return nil
    }

    private func isWordCharacter(_ character: Character) -> Bool {
        character == "_" || character == "$" || character.isLetter || character.isNumber
    }

    private mutating func skipSpace() {
        while let first = rest.first {
            if first.isWhitespace {
                rest = rest.dropFirst()
            } else if rest.hasPrefix("--") {
                rest = rest.drop(while: { $0 != "\n" })
            } else if rest.hasPrefix("/*") {
                if let end = rest.range(of: "*/") { rest = rest[end.upperBound...] } else { rest = "" }
            } else {
                return
            }
        }
    }
}
