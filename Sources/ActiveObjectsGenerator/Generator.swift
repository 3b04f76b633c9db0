import ActiveObjects

/// Generates `ActiveObject` model classes from an existing schema: the engine of
/// `activeobjects-gen`.
///
/// ```swift
/// var options = Generator.Options()
/// options.naming = .snake
/// let output = try Generator.generate(schemaAt: "people.sqlite", options: options)
/// print(output.source)               // import ActiveObjects … final class Person: ActiveObject { … }
/// output.warnings                    // ["skipping virtual table docs: a virtual table (USING fts5)…"]
/// ```
public enum Generator {
    /// What to generate.
    public struct Options: Sendable, Equatable {
        /// The tables and views to generate (all of them when empty); matched case-insensitively.
        public var tables: [String] = []
        /// How the generated models map property names to column names.
        public var naming: NamingConvention = .asIs
        /// Whether a nullable date column named `deleted_at`, `deleted_on` or `discarded_at` (in
        /// any naming convention) becomes `@Column(role: .deletedAt)`: `delete()` then sets it
        /// instead of deleting the row, and every query leaves the rows where it is set out.
        /// Off by default (`--soft-delete` turns it on): the role changes what the table's
        /// existing rows look like to the app, so it is asked for, never guessed.
        public var softDelete = false

        /// Creates the default options: every table, `as-is` naming.
        public init() {}
    }

    /// The generated source and what was left out.
    public struct Output: Sendable, Equatable {
        /// The Swift file: a header, the imports, one class per table, then one per view.
        public var source: String
        /// One line per table or view without a model (virtual tables, views SQLite cannot
        /// read…), with the reason.
        public var warnings: [String]
    }

    /// Generates models for the schema at `path`: an SQLite database (opened read-only, never
    /// written) or a `.sql` script of CREATE statements (run into an in-memory database). The
    /// rows of every table and view are read once, to learn the kinds of values each column
    /// holds (see the CodeGeneration article).
    ///
    /// - Throws: ``GeneratorError`` — missing file, not a database, a failing statement of the
    ///   script (with its line), no tables, an unknown `--table`.
    public static func generate(schemaAt path: String, options: Options = Options()) throws -> Output {
        let opened = try SchemaSource.open(path)
        defer { try? opened.database.close() }
        let tables = try SchemaReader.tables(in: opened.database, adding: opened.virtualTables)
        return try generate(tables: tables, sourceName: SchemaSource.fileName(path), options: options)
    }

    /// Generates models for the tables of an open database; `sourceName` is what the header names.
    /// - Throws: ``GeneratorError``, or ``DatabaseError`` when the schema cannot be read.
    public static func generate(database: Database, sourceName: String, options: Options = Options()) throws -> Output {
        try generate(tables: try SchemaReader.tables(in: database), sourceName: sourceName, options: options)
    }

    private static func generate(tables: [TableInfo], sourceName: String, options: Options) throws -> Output {
        let plan = try ModelPlan(tables: tables, selected: options.tables, naming: options.naming,
                                 softDelete: options.softDelete, sourceName: sourceName)
        return Output(source: SwiftWriter.source(for: plan),
                      warnings: plan.skipped.map { "skipping \($0.kind) \($0.name): \($0.reason)" })
    }
}
