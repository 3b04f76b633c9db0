import ActiveObjects
import Foundation

/// The canonical text of synchronized rows, so that a device's table and the rows a hub holds
/// can be compared with `diff`: `notes-device --dump` and `SyncServer dump` print their notes
/// with these functions, hence in one format.
///
/// One line per row, sorted by key; in a line the key column first, then every other column in
/// the order of their names, as `name=value`, separated by single spaces. A value is written so
/// that two different values never print alike: `NULL`, `i:42`, `r:0.1` (Swift's shortest
/// round-trip form; `r:-0.0`, `r:inf`, `r:nan`), `t:"…"` (text with `\`, `"` and control
/// characters escaped, so a line never breaks), `x:0aff` (a blob in hex).
public enum NoteRows {
    /// The lines of `rows` (column name → value), sorted by the value of `keyColumn`.
    public static func lines(_ rows: [[String: DatabaseValue]], keyColumn: String) -> [String] {
        rows.map { line($0, keyColumn: keyColumn) }.sorted()
    }

    /// The line of one row: `keyColumn` first, then the other columns by name.
    public static func line(_ row: [String: DatabaseValue], keyColumn: String) -> String {
        var parts = ["\(keyColumn)=\(render(row[keyColumn] ?? .null))"]
        for name in row.keys.sorted() where name != keyColumn {
            parts.append("\(name)=\(render(row[name] ?? .null))")
        }
        return parts.joined(separator: " ")
    }

    /// The unambiguous text of one value (see the type's documentation).
    public static func render(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let integer): return "i:\(integer)"
        case .real(let real): return "r:\(real)"
        case .text(let text): return "t:\"\(escaped(text))\""
        case .blob(let data): return "x:" + data.map { String(format: "%02x", $0) }.joined()
        }
    }

    private static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f || (0x80..<0xa0).contains(scalar.value)
                || scalar.value == 0x2028 || scalar.value == 0x2029:
                result += String(format: "\\u{%04x}", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
