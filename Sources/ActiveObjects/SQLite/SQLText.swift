import Foundation

/// Reading SQL text without parsing it.
enum SQLText {
    /// Whether SQL may resolve a conflict by REPLACE: `INSERT OR REPLACE`, `UPDATE OR REPLACE`,
    /// `REPLACE INTO`, `ON CONFLICT REPLACE` (a word `replace` elsewhere — a column
    /// `replaced_at`, the `replace()` function — does not count). May say yes wrongly (in a
    /// string or comment): that only costs a live result a read of its keys.
    static func mayReplace(_ sql: String) -> Bool {
        guard sql.range(of: "replace", options: .caseInsensitive) != nil else { return false }
        return sql.range(of: #"\b(or|conflict)\s+replace\b|\breplace\s+into\b|^\s*replace\b"#,
                         options: [.regularExpression, .caseInsensitive]) != nil
    }

    /// A word of SQL: a bare word (keyword, name, number) or a quoted name, unquoted.
    /// `adjacent` is false when punctuation (other than a `.` joining a schema to a name) or a
    /// string literal separates it from the word before; `depth` counts the parentheses open
    /// around it.
    struct Word {
        let text: String
        let quoted: Bool
        let adjacent: Bool
        let depth: Int
    }

    /// The words of `sql`, at most `limit`, skipping comments and string literals.
    static func words(of sql: String, limit: Int) -> [Word] {
        let bytes = Array(sql.utf8)
        var words: [Word] = []
        var adjacent = true
        var depth = 0
        var index = 0
        func isWordByte(_ byte: UInt8) -> Bool {
            byte >= 0x80 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
        /// The end of a quoted run starting at `start` (on the opening quote), doubled
        /// closing quotes included, and its content.
        func quoted(from start: Int, closing: UInt8) -> (end: Int, text: [UInt8]) {
            var text: [UInt8] = []
            var position = start + 1
            while position < bytes.count {
                if bytes[position] == closing {
                    if closing != UInt8(ascii: "]"), position + 1 < bytes.count, bytes[position + 1] == closing {
                        text.append(closing)
                        position += 2
                        continue
                    }
                    return (position + 1, text)
                }
                text.append(bytes[position])
                position += 1
            }
            return (position, text)
        }
        while index < bytes.count, words.count < limit {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0C:
                index += 1
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index < bytes.count && !(bytes[index] == UInt8(ascii: "*") && index + 1 < bytes.count
                                               && bytes[index + 1] == UInt8(ascii: "/")) { index += 1 }
                index += 2
            case UInt8(ascii: "'"):
                index = quoted(from: index, closing: UInt8(ascii: "'")).end
                adjacent = false
            case UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
                let closing = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : byte
                let (end, text) = quoted(from: index, closing: closing)
                words.append(Word(text: String(decoding: text, as: UTF8.self), quoted: true, adjacent: adjacent, depth: depth))
                adjacent = true
                index = end
            case _ where isWordByte(byte):
                let start = index
                while index < bytes.count && isWordByte(bytes[index]) { index += 1 }
                words.append(Word(text: String(decoding: bytes[start..<index], as: UTF8.self), quoted: false,
                                  adjacent: adjacent, depth: depth))
                adjacent = true
            case UInt8(ascii: "."):
                // `main.t x`: the schema's dot keeps `t` next to `x`.
                index += 1
            default:
                if byte == UInt8(ascii: "(") { depth += 1 }
                if byte == UInt8(ascii: ")") { depth -= 1 }
                adjacent = false
                index += 1
            }
        }
        return words
    }
}
