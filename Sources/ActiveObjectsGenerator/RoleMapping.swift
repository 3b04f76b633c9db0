/// The `@Column(role:)` a generated column gets: the jobs the library does for timestamp,
/// soft-delete and version columns (API.md §19).
enum GeneratedRole: String, Sendable, Equatable, CaseIterable {
    case createdAt
    case updatedAt
    case deletedAt
    case lockVersion
}

/// Which columns get a role, decided from their default, their name and their type.
///
/// - A date column (or a TEXT or untyped one) whose default is the moment of the insert —
///   `CURRENT_TIMESTAMP`, `CURRENT_DATE`, `datetime('now')`, `date('now')`,
///   `strftime('…', 'now')`, with or without parentheses, in any case — is `.updatedAt` when its
///   name says so (`updated_at`, `UpdatedAt`, `last_update`, `modified`, `changed_at`…) and
///   `.createdAt` otherwise. A copy of such a default would be the wrong date (the table's
///   creation, 1970): the library stamps the insert instead.
/// - A date column with no default named like Rails' timestamps (`created_at`/`created_on`,
///   `updated_at`/`updated_on`, in any naming convention) gets the same roles: that is what
///   the names mean.
/// - `lock_version` (any naming convention), a NOT NULL integer: `.lockVersion`, Rails' name
///   for its optimistic-locking counter.
/// - `deleted_at`, `deleted_on`, `discarded_at`, a nullable date: `.deletedAt` only with
///   `--soft-delete` (``Generator/Options/softDelete``), since the role changes what `delete()`
///   does and hides rows; otherwise a comment points at the flag.
///
/// A model has at most one column of each role: the first column in table order gets it, the
/// others are mapped plainly (with a comment).
enum RoleMapping {
    /// The role a column named `name` with default `defaultSQL` would take, before the type and
    /// uniqueness checks of ``ClassPlan``; nil for none.
    static func candidate(name: String, defaultSQL: String?, softDelete: Bool) -> GeneratedRole? {
        let parsed = defaultSQL.map(SQLDefault.init(sql:))
        if parsed?.isCurrentTime == true { return saysUpdated(name) ? .updatedAt : .createdAt }
        let letters = Self.letters(name)
        let noDefault = parsed == nil || parsed == .null
        if noDefault, ["createdat", "createdon"].contains(letters) { return .createdAt }
        if noDefault, ["updatedat", "updatedon"].contains(letters) { return .updatedAt }
        if noDefault, softDelete, isSoftDeleteName(name) { return .deletedAt }
        if letters == "lockversion" { return .lockVersion }
        return nil
    }

    /// `deleted_at`, `DeletedAt`, `deleted_on`, `discarded_at`: the names of soft-delete columns.
    static func isSoftDeleteName(_ name: String) -> Bool {
        ["deletedat", "deletedon", "discardedat"].contains(letters(name))
    }

    /// Whether a column's name says it holds the date of the last change: `updated_at`,
    /// `UpdatedAt`, `last_update`, `LASTMODIFIED`, `modified`, `changed_at`, `edited`.
    static func saysUpdated(_ name: String) -> Bool {
        SwiftNames.words(name).map { $0.lowercased() }.contains { word in
            word.contains("updat") || word.contains("modif")
                || ["changed", "change", "edited", "touched", "mtime"].contains(word)
                || word.hasPrefix("lastchange") || word.hasPrefix("lastedit")
        }
    }

    /// The letters and digits of a name, lowercased: `created_at`, `CreatedAt` and `CREATED_AT`
    /// are all `createdat`.
    static func letters(_ name: String) -> String {
        String(name.lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber) })
    }
}

extension SQLDefault {
    /// True when the default is the moment of the insert: `CURRENT_TIMESTAMP`, `CURRENT_DATE`,
    /// `datetime('now')`, `date('now')`, `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')` (also without a
    /// time value, which means now, and with the `'utc'`, `'subsec'` modifiers), in any case,
    /// with or without parentheses. Not `CURRENT_TIME` (a time of day), nor a date computed
    /// from now (`date('now', '+7 days')`, `'localtime'`), nor `julianday`/`unixepoch` (numbers,
    /// not the dates a `Date` column stores).
    var isCurrentTime: Bool {
        guard case .expression(let sql) = self else { return false }
        return Self.isCurrentTime(sql)
    }

    static func isCurrentTime(_ sql: String) -> Bool {
        // Lowercase, without the blanks outside quotes, without enclosing parentheses.
        var text = ""
        var quote: Character?
        for character in sql {
            if let open = quote {
                text.append(character)
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
                text.append(character)
            } else if !character.isWhitespace {
                text += character.lowercased()
            }
        }
        while text.hasPrefix("("), text.hasSuffix(")"), parenthesesBalance(text.dropFirst().dropLast()) {
            text = String(text.dropFirst().dropLast())
        }
        if text == "current_timestamp" || text == "current_date" { return true }
        guard let open = text.firstIndex(of: "("), text.hasSuffix(")") else { return false }
        let function = text[..<open]
        var arguments = splitArguments(text[text.index(after: open)..<text.index(before: text.endIndex)])
        switch function {
        case "datetime", "date":
            break
        case "strftime":
            guard let format = arguments.first, isQuoted(format) else { return false }
            arguments.removeFirst()
        default:
            return false
        }
        guard let timeValue = arguments.first else { return true }  // no time value: now
        guard unquoted(timeValue)?.lowercased() == "now" else { return false }
        return arguments.dropFirst().allSatisfy { ["utc", "subsec", "subsecond"].contains(unquoted($0)?.lowercased() ?? "") }
    }

    private static func parenthesesBalance(_ text: Substring) -> Bool {
        var depth = 0
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            if character == "'" || character == "\"" { quote = character; continue }
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1; if depth < 0 { return false } }
        }
        return depth == 0 && quote == nil
    }

    /// The arguments of a call, split at the commas outside quotes and parentheses.
    private static func splitArguments(_ text: Substring) -> [Substring] {
        guard !text.isEmpty else { return [] }
        var arguments: [Substring] = []
        var depth = 0
        var quote: Character?
        var start = text.startIndex
        for index in text.indices {
            let character = text[index]
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            switch character {
            case "'", "\"": quote = character
            case "(": depth += 1
            case ")": depth -= 1
            case "," where depth == 0:
                arguments.append(text[start..<index])
                start = text.index(after: index)
            default: break
            }
        }
        arguments.append(text[start...])
        return arguments
    }

    private static func isQuoted(_ text: Substring) -> Bool { unquoted(text) != nil }

    /// `'now'` or `"now"` → `now`; nil when the text is not one quoted string.
    private static func unquoted(_ text: Substring) -> Substring? {
        guard text.count >= 2, let first = text.first, first == "'" || first == "\"", text.last == first else { return nil }
        let body = text.dropFirst().dropLast()
        return body.contains(first) ? nil : body
    }
}
