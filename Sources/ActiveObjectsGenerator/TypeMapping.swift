import Foundation

/// The Swift type of a generated `@Column`.
enum SwiftType: String, Sendable, Equatable {
    case int = "Int"
    case int64 = "Int64"
    case double = "Double"
    case decimal = "Decimal"
    case string = "String"
    case data = "Data"
    case date = "Date"
    case bool = "Bool"
    case uuid = "UUID"

    /// The value a non-optional property starts with when the schema gives no literal default.
    /// A date starts as `Date()`, the moment the object is made (a run-time default the library
    /// never writes into the table's SQL), never as 1970: a NOT NULL date column without a
    /// default (`placed_at`, `played_at`) is most often the moment of the event.
    var zeroValue: String {
        switch self {
        case .int, .int64, .double, .decimal: return "0"
        case .string: return "\"\""
        case .data: return "Data()"
        case .date: return "Date()"
        case .bool: return "false"
        case .uuid: return "UUID()"
        }
    }
}

/// Maps SQLite declared types to Swift types, following SQLite's affinity rules
/// (<https://www.sqlite.org/datatype3.html#determination_of_column_affinity>) with the common
/// type names that carry more meaning checked first.
enum TypeMapping {
    /// The Swift type for a declared column type, and a note when the choice is a guess.
    ///
    /// | declared type | Swift |
    /// |---|---|
    /// | BOOLEAN, BOOL | `Bool` |
    /// | DATE, DATETIME, TIMESTAMP | `Date` |
    /// | UUID, GUID, UNIQUEIDENTIFIER | `UUID` (stored as lowercase text) |
    /// | contains INT | `Int` (`Int64` for keys: `isKey`) |
    /// | contains CHAR, CLOB, TEXT | `String` |
    /// | contains BLOB | `Data` |
    /// | contains REAL, FLOA, DOUB | `Double` |
    /// | NUMERIC, DECIMAL(10,2), NUMBER, MONEY | `Decimal` (reads the INTEGER, REAL or TEXT SQLite stores) |
    /// | none, or anything else (TIME, JSON, UUID…) | `String`, with a note |
    static func swiftType(declared: String, isKey: Bool) -> (type: SwiftType, note: String?) {
        let upper = declared.uppercased()
        let base = upper.split(separator: "(").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        if upper.trimmingCharacters(in: .whitespaces).isEmpty {
            return (.string, "no declared type: mapped to String")
        }
        if base.contains("BOOL") { return (.bool, nil) }
        if ["UUID", "GUID", "UNIQUEIDENTIFIER"].contains(base) { return (.uuid, nil) }
        if ["DATE", "DATETIME", "TIMESTAMP"].contains(base) || base.hasPrefix("TIMESTAMP ") {
            return (.date, nil)
        }
        if upper.contains("INT") { return (isKey ? .int64 : .int, nil) }
        if upper.contains("CHAR") || upper.contains("CLOB") || upper.contains("TEXT") { return (.string, nil) }
        if upper.contains("BLOB") { return (.data, nil) }
        if upper.contains("REAL") || upper.contains("FLOA") || upper.contains("DOUB") { return (.double, nil) }
        if ["NUMERIC", "DECIMAL", "NUMBER", "MONEY"].contains(where: { upper.contains($0) }) { return (.decimal, nil) }
        return (.string, "declared type \(declared) is not a known type: mapped to String")
    }

    /// The type for a column whose values `type` cannot all read, with a note; nil when `type`
    /// reads them (or nothing was observed). The next type that reads every value, from a
    /// short list per type: an `Int` holding `1.5` becomes `Double`, a `Date` holding text
    /// that is no date `String`, a `String` holding BLOBs `Data`. When none does, `type` stays,
    /// with a note naming the values.
    static func fitting(_ type: SwiftType, observed: ObservedValues?, declared: String) -> (type: SwiftType, note: String)? {
        guard let observed, observed.hasValues, !observed.accepts(type) else { return nil }
        let fallbacks: [SwiftType]
        switch type {
        case .int, .int64: fallbacks = [.double, .decimal, .string, .data]
        case .bool: fallbacks = [.int, .double, .string]
        case .double: fallbacks = [.decimal, .string]
        case .decimal: fallbacks = [.string]
        case .date: fallbacks = [.string]
        case .uuid: fallbacks = [.string, .data]
        case .string: fallbacks = [.data]
        case .data: fallbacks = [.string]
        }
        let what = declared.isEmpty ? "no declared type" : "declared \(declared)"
        guard let fit = fallbacks.first(where: observed.accepts) else {
            return (type, "\(what), and no Swift type reads all its \(observed.kinds): "
                    + "rows whose value \(type.rawValue) cannot read will not load")
        }
        return (fit, "\(what), but it holds \(observed.kinds) that \(type.rawValue) cannot all read: mapped to \(fit.rawValue)")
    }

    /// Whether values of a column of this declared type are kept as text: no declared type, or
    /// one containing CHAR, CLOB or TEXT (and not INT). Such a column can hold the dates of a
    /// `Date` property (the library writes dates as text by default).
    static func hasTextAffinity(declared: String) -> Bool {
        let upper = declared.uppercased()
        if upper.trimmingCharacters(in: .whitespaces).isEmpty { return true }
        return !upper.contains("INT") && (upper.contains("CHAR") || upper.contains("CLOB") || upper.contains("TEXT"))
    }

}

/// A column default from `PRAGMA table_info`, parsed as an SQL literal.
enum SQLDefault: Equatable {
    case null
    case integer(Int64)
    /// A real number, with its text as written (for exact `Decimal`s).
    case real(Double, text: String)
    case text(String)
    case blob([UInt8])
    case bool(Bool)
    /// Anything else (`CURRENT_TIMESTAMP`, `(datetime('now'))`): not a literal.
    case expression(String)

    /// Parses the `dflt_value` text of `PRAGMA table_info`.
    init(sql: String) {
        var text = sql.trimmingCharacters(in: .whitespacesAndNewlines)
        // `DEFAULT (0)` is stored with its parentheses.
        while text.hasPrefix("("), text.hasSuffix(")"), Self.isBalanced(text.dropFirst().dropLast()) {
            text = String(text.dropFirst().dropLast()).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let upper = text.uppercased()
        if upper == "NULL" { self = .null; return }
        if upper == "TRUE" || upper == "FALSE" { self = .bool(upper == "TRUE"); return }
        if let string = Self.quoted(text, quote: "'") { self = .text(string); return }
        if (upper.hasPrefix("X'") && upper.hasSuffix("'")), let bytes = Self.hexBytes(String(text.dropFirst(2).dropLast())) {
            self = .blob(bytes); return
        }
        if let number = Self.number(text) { self = number; return }
        self = .expression(sql)
    }

    private static func isBalanced(_ text: Substring) -> Bool {
        var depth = 0
        var inString = false
        for character in text {
            if character == "'" { inString.toggle() }
            if inString { continue }
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1; if depth < 0 { return false } }
        }
        return depth == 0 && !inString
    }

    /// `'it''s'` → `it's`; nil unless the whole text is one quoted string.
    private static func quoted(_ text: String, quote: Character) -> String? {
        guard text.count >= 2, text.first == quote, text.last == quote else { return nil }
        let body = text.dropFirst().dropLast()
        var result = ""
        var iterator = body.makeIterator()
        while let character = iterator.next() {
            if character == quote {
                guard iterator.next() == quote else { return nil }  // a lone quote ends the string early
            }
            result.append(character)
        }
        return result
    }

    private static func hexBytes(_ hex: String) -> [UInt8]? {
        guard hex.count % 2 == 0, hex.allSatisfy(\.isHexDigit) else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// SQLite numeric literals: `42`, `-1`, `0x1F`, `1.5`, `.5`, `1e3`.
    private static func number(_ text: String) -> SQLDefault? {
        var body = Substring(text)
        var negative = false
        if let sign = body.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            body = body.dropFirst()
        }
        if body.lowercased().hasPrefix("0x") {
            guard let bits = UInt64(body.dropFirst(2), radix: 16) else { return nil }
            let value = Int64(bitPattern: bits)
            return .integer(negative ? 0 &- value : value)
        }
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || "eE.+-".contains($0)) }),
              body.first!.isNumber || body.first == "." else { return nil }
        if body.allSatisfy(\.isNumber), let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else { return nil }
        return .real(value, text: text)
    }
}

extension SQLDefault {
    /// The Swift expression for this default in a property of `type`, or nil (with the reason)
    /// when the default has no Swift equivalent.
    func swiftLiteral(for type: SwiftType) -> String? {
        switch (self, type) {
        case (.null, _): return nil
        case (.integer(let value), .int), (.integer(let value), .int64), (.integer(let value), .double),
             (.integer(let value), .decimal):
            return String(value)
        case (.integer(let value), .bool): return value == 0 ? "false" : (value == 1 ? "true" : nil)
        case (.integer(let value), .string): return Self.swiftString(String(value))
        case (.real(let value, _), .int), (.real(let value, _), .int64):
            guard value.rounded() == value, let exact = Int64(exactly: value) else { return nil }
            return String(exact)
        case (.real(let value, _), .double): return String(value)
        case (.real(_, let text), .decimal): return Self.decimal(text)
        case (.real(let value, _), .string): return Self.swiftString(String(value))
        case (.bool(let value), .bool): return String(value)
        case (.bool(let value), .int), (.bool(let value), .int64): return value ? "1" : "0"
        case (.text(let text), .string): return Self.swiftString(text)
        case (.text(let text), .data): return "Data(\(Self.swiftString(text)).utf8)"
        case (.text(let text), .date): return Self.date(text)
        case (.text(let text), .uuid):
            guard let uuid = UUID(uuidString: text) else { return nil }
            return "UUID(uuidString: \(Self.swiftString(uuid.uuidString)))!"
        case (.text(let text), .bool):
            switch text.lowercased() {
            case "1", "true": return "true"
            case "0", "false": return "false"
            default: return nil
            }
        case (.text(let text), _):
            // A numeric column turns numeric text into a number (type affinity).
            let number = SQLDefault(sql: text)
            if case .text = number { return nil }
            if case .expression = number { return nil }
            return number.swiftLiteral(for: type)
        case (.blob(let bytes), .data):
            if bytes.isEmpty { return "Data()" }
            return "Data([" + bytes.map { "0x" + String($0, radix: 16, uppercase: true).leftPadded(2) }.joined(separator: ", ") + "])"
        default: return nil
        }
    }

    /// The expression a `Decimal` property starts with: exact, never through `Double`.
    private static func decimal(_ text: String) -> String {
        if let integer = Int64(text) { return String(integer) }
        return "Decimal(string: \(swiftString(text)))!"
    }

    /// A date default written as text (`'2000-01-01'`, `'2000-01-01 12:00:00'`), as a `Date`.
    private static func date(_ text: String) -> String? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        for format in ["yyyy-MM-dd HH:mm:ss.SSS", "yyyy-MM-dd'T'HH:mm:ss.SSS", "yyyy-MM-dd HH:mm:ss",
                       "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) {
                let seconds = date.timeIntervalSince1970
                let literal = seconds.rounded() == seconds ? String(Int64(seconds)) : String(seconds)
                return "Date(timeIntervalSince1970: \(literal))"
            }
        }
        return nil
    }

    /// A Swift string literal for any text: quotes, backslashes and control characters escaped.
    static func swiftString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
