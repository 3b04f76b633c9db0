import Foundation

/// Renders values as SQL literals, for `DEFAULT` clauses only (data is always bound).
enum SQLLiteral {
    /// The text encoding of a database (`PRAGMA encoding`), which decides how text given as
    /// bytes is read.
    enum TextEncoding: Equatable {
        case utf8, utf16le, utf16be

        /// The encoding of the database `connection` is open on.
        /// - Throws: ``DatabaseError`` from SQLite.
        init(_ connection: Connection) throws {
            let name: String = try connection.rows("PRAGMA encoding").first?[0] ?? "UTF-8"
            switch name.uppercased() {
            case "UTF-16LE": self = .utf16le
            case "UTF-16BE": self = .utf16be
            default: self = .utf8
            }
        }
    }

    /// Why a value has no literal form.
    struct Unrenderable: Error, CustomStringConvertible {
        let description: String
    }

    /// The literal of `value`, usable as a column's `DEFAULT` — including by
    /// `ALTER TABLE … ADD COLUMN`, which accepts only literals and `CAST`s of them.
    ///
    /// Text containing NUL cannot be a quoted literal (SQLite's tokenizer ends the string at
    /// the NUL), so it is written as `(CAST(X'…' AS TEXT))`: its UTF-8 bytes, which SQLite
    /// reads back byte for byte in a UTF-8 database.
    /// - Throws: ``Unrenderable`` for text containing NUL in a UTF-16 database (SQLite reads
    ///   such a `CAST` differently for new rows and for the rows an `ADD COLUMN` extends).
    static func render(_ value: DatabaseValue, textEncoding: TextEncoding = .utf8) throws -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let int): return String(int)
        case .real(let real):
            if real.isInfinite { return real < 0 ? "-9e999" : "9e999" }
            return "(\(String(real)))"
        case .text(let text):
            guard text.utf8.contains(0) else { return "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
            guard textEncoding == .utf8 else {
                throw Unrenderable(description: "text containing NUL cannot be a DEFAULT in a UTF-16 database")
            }
            return "(CAST(\(hex(Data(text.utf8))) AS TEXT))"
        case .blob(let data): return hex(data)
        }
    }

    /// `X'CAFE'`.
    private static func hex(_ data: Data) -> String {
        "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
    }
}
