/// The full-text indexes that ActiveObjects makes for a model's `searchableColumns`
/// (`<table>_search`, an external-content FTS5 table over some of the table's columns, kept in
/// step by the triggers `<table>_search_insert`, `_delete` and `_update`), recognized in a
/// schema so that the table's model gets the `searchableColumns` that made it.
struct SearchIndexMapping: Equatable {
    /// The indexed table, as the index's `content=` option names it.
    var table: String
    /// The indexed columns, in the index's order.
    var columns: [String]

    /// The index `virtual` describes, when it is one the library makes: named `<table>_search`,
    /// `USING fts5`, with `content='<table>'` and the rowid as `content_rowid` (the default).
    init?(_ virtual: TableInfo) {
        guard virtual.kind == "virtual", virtual.virtualModule?.lowercased() == "fts5",
              let arguments = Self.arguments(of: virtual.sql) else { return nil }
        var columns: [String] = []
        var content: String?
        for argument in arguments {
            var tokens = SQLTokens(argument)
            guard let first = tokens.identifier() else { return nil }
            if tokens.symbol("=") {
                let value = Self.unquoted(String(tokens.remainder).trimmingCharacters(in: .whitespacesAndNewlines))
                switch first.lowercased() {
                case "content": content = value
                case "content_rowid": if value.lowercased() != "rowid" { return nil }
                default: break
                }
            } else {
                columns.append(first)
            }
        }
        guard let content, !content.isEmpty, !columns.isEmpty,
              virtual.name.lowercased() == content.lowercased() + "_search" else { return nil }
        table = content
        self.columns = columns
    }

    /// The arguments between the parentheses of `USING fts5(…)`, split at the commas outside
    /// quotes and parentheses; nil when the statement has no such list.
    static func arguments(of sql: String) -> [String]? {
        guard let using = sql.range(of: "USING", options: .caseInsensitive),
              let open = sql[using.upperBound...].firstIndex(of: "("),
              let close = sql.lastIndex(of: ")"), open < close else { return nil }
        var arguments: [String] = []
        var current = ""
        var depth = 0
        var quote: Character?
        for character in sql[sql.index(after: open)..<close] {
            if let open = quote {
                if character == open || (open == "[" && character == "]") { quote = nil }
                current.append(character)
                continue
            }
            switch character {
            case "'", "\"", "`", "[": quote = character
            case "(": depth += 1
            case ")": depth -= 1
            case "," where depth == 0:
                arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                current = ""
                continue
            default: break
            }
            current.append(character)
        }
        arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
        return arguments.filter { !$0.isEmpty }
    }

    /// `'products'` → `products` (quotes doubled inside undone); other text as it is.
    private static func unquoted(_ text: String) -> String {
        guard let first = text.first, first == "'" || first == "\"", text.count >= 2, text.last == first else { return text }
        return String(text.dropFirst().dropLast()).replacingOccurrences(of: "\(first)\(first)", with: "\(first)")
    }
}

extension ModelPlan {
    /// Gives the model of every table with the library's own full-text index its
    /// `searchableColumns` (the property names of the indexed columns), and says in the
    /// skipped list what the index is. An index over a column the model has no property
    /// for, or over a table without a rowid, is left as any other virtual table.
    mutating func addSearchableColumns(from tables: [TableInfo]) {
        for virtual in tables {
            guard let index = SearchIndexMapping(virtual),
                  let classIndex = classes.firstIndex(where: { $0.table.lowercased() == index.table.lowercased() }),
                  !classes[classIndex].isReadOnly, !classes[classIndex].withoutRowID else { continue }
            let model = classes[classIndex]
            let properties = index.columns.map { column in
                model.properties.first(where: { $0.column == column })
                    ?? model.properties.first(where: { $0.column.lowercased() == column.lowercased() })
            }
            guard properties.allSatisfy({ $0 != nil }) else { continue }
            classes[classIndex].searchableColumns = properties.map { $0!.name }
            for skippedIndex in skipped.indices where skipped[skippedIndex].name == virtual.name {
                skipped[skippedIndex].reason = "the full-text index of \(model.table), which `\(model.className).searchableColumns` "
                    + "describes (ActiveObjects keeps it in step; `\(model.className).search(_:)` queries it)"
            }
        }
    }
}
