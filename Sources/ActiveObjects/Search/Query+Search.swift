import Foundation

extension ActiveRecord where Self: ActiveObject {
    /// The rows whose ``ActiveObject/searchableColumns`` contain every word of `text`, best
    /// match first: a ``Query`` to refine and run.
    ///
    /// ```swift
    /// let hits = try Article.search("sqlite swi").limit(20).all()          // best match first
    /// let recent = try Article.search("sqlite").where(\.$year >= 2024).count()
    /// let newest = try Article.search("swift").order(by: \.$published, .descending).first()
    /// ```
    /// - A row matches when each word of the text is in one of its searchable columns, case
    ///   and diacritics ignored (`"creme"` finds "Crème"); the last word also matches as a
    ///   prefix (`"swi"` finds "Swift"), so that results follow the user's typing.
    /// - The text is words, never FTS5 syntax: quotes, `*`, `-`, `:`, `^`, parentheses
    ///   separate words, and `AND`, `OR`, `NOT`, `NEAR` are words like any other. Text without
    ///   a word (empty, only punctuation) matches no row. Words after the 32nd are ignored.
    /// - Results are ranked by SQLite's bm25 (rarer words, and shorter columns that hold them,
    ///   rank higher). `order(by:)` replaces the ranking.
    /// - It chains like any query: `where`, `order(by:)`, `limit`, `offset`, `page`,
    ///   `including`, `count`, `exists`, `pluck`, `each`, `values()`, `liveResults()`,
    ///   `delete()` and `updateAll(_:)` (the matching rows).
    ///
    /// Building the query runs nothing and throws nothing; when it runs, a model without
    /// searchable columns throws ``ActiveObjectError/misuse(_:)``, and a file whose index was
    /// never created (call ``createTable()``) SQLite's error naming the missing `<table>_search`.
    /// No search text makes it throw.
    public static func search(_ text: String) -> Query<Self> { Query<Self>().search(text) }
}

extension Query {
    /// This query limited to the rows matching `text` in the model's full-text index, best
    /// match first unless the query is ordered otherwise: see ``ActiveRecord/search(_:)``.
    /// A second `search` replaces the first.
    public func search(_ text: String) -> Query {
        var copy = self
        copy.searchPattern = SearchPattern(text)
        return copy
    }

    /// The column of a search's source holding each row's bm25 rank (lower is better).
    static var rankColumn: String { "\"activeobjects_rank\"" }

    /// What a search reads from, in place of the table: the table's rows that match, each with
    /// its rank, under the table's own name — so that every column name, the rowid and the
    /// table's name in the rest of the query mean what they mean without a search.
    ///
    /// `(SELECT "t".rowid AS "rowid", "t".*, "m"."rank" AS "activeobjects_rank" FROM "t" JOIN
    /// (SELECT rowid AS "r", rank FROM "t_search" WHERE "t_search" MATCH '"sqlite" "swi" *')
    /// AS "m" ON "t".rowid = "m"."r") AS "t"` — SQLite flattens it into a join driven by the
    /// index, which also returns the rows in rank order when the query asks for that order.
    /// The match expression is a literal (it holds words only, quoted): a bound parameter
    /// placed before the query's own would renumber the `?NNN` of raw fragments.
    /// - Throws: ``ActiveObjectError/misuse(_:)`` for a model without searchable columns.
    static func searchSource(_ pattern: SearchPattern, schema: ModelSchema) throws -> String {
        guard !schema.searchSlots.isEmpty else {
            throw ActiveObjectError.misuse(
                "\(schema.modelName) has no searchableColumns, so it has no full-text index to search: override searchableColumns and call createTable()")
        }
        let table = schema.quotedTable
        let rows = "SELECT \(table).rowid AS \"rowid\", \(table).*"
        guard let expression = pattern.matchExpression else {
            // No word: no row.
            return "(\(rows), NULL AS \(rankColumn) FROM \(table) WHERE 0) AS \(table)"
        }
        let index = SQLIdentifier.quote(SearchIndex.indexName(of: schema.tableName))
        let match = try SQLLiteral.render(.text(expression))
        return "(\(rows), \"m\".\"rank\" AS \(rankColumn) FROM \(table) JOIN "
            + "(SELECT rowid AS \"r\", rank FROM \(index) WHERE \(index) MATCH \(match)) AS \"m\" "
            + "ON \(table).rowid = \"m\".\"r\") AS \(table)"
    }
}
