import ActiveObjects

/// Turns SQL identifiers into Swift names: `people` → `Person`, `first_name` → `firstName`,
/// `order` → `` `order` ``.
enum SwiftNames {
    /// Splits an identifier into words at `_`, spaces, punctuation and camel-case humps,
    /// keeping acronyms together: `first_name` → [first, name], `artistID` → [artist, ID],
    /// `URLValue` → [URL, Value].
    static func words(_ identifier: String) -> [String] {
        var words: [String] = []
        for chunk in identifier.split(whereSeparator: { !isIdentifierCharacter($0) || $0 == "_" }) {
            // The library's own snake_case splitting (so that the names round-trip through
            // `ColumnNaming`), then the original spelling of each piece: it only inserts `_`.
            var rest = Substring(chunk)
            for word in ColumnNaming.snakeCase.columnName(for: String(chunk)).split(separator: "_") {
                words.append(String(rest.prefix(word.count)))
                rest = rest.dropFirst(word.count)
            }
        }
        return words
    }

    /// ASCII letters and digits: what a generated identifier may contain.
    static func isIdentifierCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "_")
    }

    /// `first_name` → `firstName`, `ARTIST_ID` → `artistId`, `groupId` → `groupId`,
    /// `URLValue` → `urlValue`. Nil when nothing usable is left (`€`, `_`).
    static func lowerCamel(_ identifier: String) -> String? {
        // Already lowerCamelCase (`name`, `artistID`): keep it exactly.
        if let first = identifier.first, first.isASCII, first.isLowercase,
           identifier.allSatisfy({ isIdentifierCharacter($0) && $0 != "_" }) {
            return identifier
        }
        let parts = words(identifier)
        guard let first = parts.first else { return nil }
        var name = first.lowercased()
        for word in parts.dropFirst() { name += capitalized(word) }
        return name
    }

    /// `blog_posts` → `BlogPosts`, `PEOPLE` → `People`. Nil when nothing usable is left.
    static func upperCamel(_ identifier: String) -> String? {
        let parts = words(identifier)
        guard !parts.isEmpty else { return nil }
        return parts.map(capitalized).joined()
    }

    /// `name` → `Name`, `ID` → `Id`, `iPhone` → `IPhone`.
    static func capitalized(_ word: String) -> String {
        let isAllUppercase = word.allSatisfy { !$0.isLetter || $0.isUppercase }
        let body = isAllUppercase ? word.lowercased() : word
        return body.prefix(1).uppercased() + body.dropFirst()
    }

    /// The model class name for a table: the last word singular, UpperCamelCase.
    /// `people` → `Person`, `blog_posts` → `BlogPost`, `categories` → `Category`.
    static func className(forTable table: String) -> String? {
        var parts = words(table)
        guard let last = parts.popLast() else { return nil }
        parts.append(Inflection.singular(last))
        return parts.map(capitalized).joined()
    }

    /// A name usable in Swift source: keywords in backticks (`` `default` ``).
    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// Swift keywords that cannot be a property name without backticks
    /// (<https://docs.swift.org/swift-book/documentation/the-swift-programming-language/lexicalstructure/#Keywords-and-Punctuation>).
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension",
        "fileprivate", "func", "import", "init", "inout", "internal", "let", "nonisolated",
        "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
        "static", "struct", "subscript", "typealias", "var",
        "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough",
        "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while",
        "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true",
        "try", "_",
    ]

    /// Names that even backticks do not make usable as a model property: they mean something
    /// else after a dot (`person.self`, `Person.init`).
    static let unusableNames: Set<String> = ["self", "Self", "super", "init", "deinit", "subscript", "Type", "Protocol", "_"]

    /// Instance members of `ActiveObject` that a generated property must not redeclare.
    static let activeObjectMembers: Set<String> = [
        "id", "description", "hasChanges", "changedColumns", "save", "insert", "update", "upsert",
        "delete", "restore", "reload", "validate", "willSave", "didSave", "willDelete", "didDelete",
        "belongsTo", "hasMany", "hasOne", "didLoad",
    ]

    /// Type names a generated class must not take (it gets `Record` appended): the generated
    /// file uses them, or a class of that name in the user's module would shadow the type for
    /// all of the module's code (`final class Sendable` breaks every `Sendable` conformance,
    /// `final class Row` every use of `ActiveObjects.Row`). Compared exactly: Swift names are
    /// case-sensitive, and class names come out UpperCamelCase (`url` → `Url`, no clash).
    static let reservedTypeNames: Set<String> = libraryTypeNames.union(standardTypeNames)

    /// The public types of ActiveObjects (and the module names), kept in step with the
    /// library's sources by `NameMappingTests`.
    static let libraryTypeNames: Set<String> = [
        "ActiveObjects", "Foundation", "Swift", "Dispatch",
        "ActiveObject", "ActiveObjectError", "ActiveRecord", "BelongsTo", "Column", "ColumnNaming", "ColumnRole",
        "ColumnOperator", "ColumnReference", "ColumnType", "ColumnValue", "ColumnValueError", "Cursor",
        "Database", "DatabaseError", "DatabaseValue", "DateStrategy", "ForeignKeyAction", "GroupedQuery",
        "HasMany", "HasManyThrough", "HasOne", "JSONColumn", "LiveChange", "LiveChanges", "LiveResults", "LiveValues", "Migrator", "Query",
        "QueryPredicate", "ResultCode", "Row", "RowID", "SortDirection", "ValidationError", "ValueContext",
        "SyncEngine", "SyncHub", "SyncReport", "SyncTransport", "HTTPSyncTransport",
    ]

    /// Common types of the standard library, Swift concurrency and Foundation, and the
    /// capitalized keywords (`Any`, `Self`, `Type`, `Protocol`).
    static let standardTypeNames: Set<String> = [
        // keywords and special types
        "Any", "AnyObject", "AnyClass", "AnyHashable", "Self", "Type", "Protocol", "Never", "Void",
        // numbers and text
        "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64",
        "Float", "Float16", "Float80", "Double", "Decimal", "Character", "String", "Substring",
        "StaticString", "Unicode",
        // collections and other generic types
        "Array", "ArraySlice", "ContiguousArray", "Dictionary", "Set", "Optional", "Result", "Range",
        "ClosedRange", "Slice", "KeyPath", "WritableKeyPath", "Mirror", "ObjectIdentifier",
        // protocols
        "Codable", "Encodable", "Decodable", "Encoder", "Decoder", "Equatable", "Hashable", "Hasher",
        "Identifiable", "Comparable", "Collection", "Sequence", "IteratorProtocol", "Numeric",
        "BinaryInteger", "FloatingPoint", "StringProtocol", "Error", "CustomStringConvertible",
        "RawRepresentable",
        // concurrency
        "Sendable", "Task", "TaskGroup", "Actor", "MainActor", "AsyncSequence", "AsyncStream",
        "Duration", "Clock",
        // Foundation
        "Data", "Date", "URL", "UUID", "Locale", "Calendar", "TimeZone", "DateComponents",
        "DateFormatter", "DateInterval", "Notification", "NotificationCenter", "Operation",
        "OperationQueue", "Thread", "Timer", "Bundle", "Process", "ProcessInfo", "FileManager",
        "NSObject", "NSError", "NSNumber", "NSString", "NSNull", "IndexPath", "IndexSet",
        "CharacterSet", "JSONEncoder", "JSONDecoder", "URLRequest", "URLSession", "UserDefaults",
        "DispatchQueue",
    ]
}

/// English singulars and plurals, good enough for table names.
enum Inflection {
    private static let irregular: [(singular: String, plural: String)] = [
        ("person", "people"), ("man", "men"), ("woman", "women"), ("child", "children"),
        ("mouse", "mice"), ("goose", "geese"), ("foot", "feet"), ("tooth", "teeth"),
        ("ox", "oxen"), ("movie", "movies"), ("cookie", "cookies"), ("index", "indices"),
        ("quiz", "quizzes"), ("status", "statuses"), ("bus", "buses"), ("virus", "viruses"),
        ("campus", "campuses"), ("alias", "aliases"),
    ]
    /// Words whose singular and plural are the same (or that read as singular already).
    private static let invariable: Set<String> = [
        "data", "metadata", "news", "series", "species", "sheep", "fish", "deer", "information",
        "equipment", "settings", "media", "analysis",
    ]

    /// `people` → `person`, `categories` → `category`, `addresses` → `address`,
    /// `groups` → `group`; the casing of the input is kept where the word is unchanged.
    static func singular(_ word: String) -> String {
        let lower = word.lowercased()
        if invariable.contains(lower) { return word }
        if let match = irregular.first(where: { $0.plural == lower }) { return match.singular }
        if irregular.contains(where: { $0.singular == lower }) { return word }
        func drop(_ count: Int, adding suffix: String = "") -> String {
            String(word.dropLast(count)) + (word.last?.isUppercase == true ? suffix.uppercased() : suffix)
        }
        if lower.hasSuffix("ies") && lower.count > 4 { return drop(3, adding: "y") }
        for suffix in ["sses", "xes", "ches", "shes", "zzes"] where lower.hasSuffix(suffix) {
            return drop(2)
        }
        if lower.hasSuffix("ss") || lower.hasSuffix("us") || lower.hasSuffix("is") { return word }
        if lower.hasSuffix("s") && lower.count > 1 { return drop(1) }
        return word
    }

    /// `person` → `people`, `category` → `categories`, `address` → `addresses`, `group` → `groups`.
    static func plural(_ word: String) -> String {
        let lower = word.lowercased()
        if invariable.contains(lower) { return word }
        if let match = irregular.first(where: { $0.singular == lower }) {
            return String(word.prefix(1)) + String(match.plural.dropFirst())
        }
        let vowels: Set<Character> = ["a", "e", "i", "o", "u"]
        if lower.hasSuffix("y"), lower.count > 1, !vowels.contains(lower.dropLast().last!) {
            return String(word.dropLast()) + "ies"
        }
        for suffix in ["s", "x", "z", "ch", "sh"] where lower.hasSuffix(suffix) { return word + "es" }
        return word + "s"
    }
}
