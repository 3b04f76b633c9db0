/// Brings a model's table to the model: computes the ``SchemaPlan`` and executes exactly its
/// statements, in one transaction (a savepoint inside the caller's), together with the checks
/// a rebuild needs — which only read. What `createTable()` and `migrate(rebuildingTable:)` do.
enum SchemaChange {
    /// The plan of `schema`'s table in `database`, not run (``ActiveRecord/schemaPlan()``).
    /// - Throws: what ``SchemaPlanner/plan()`` throws; ``ActiveObjectError/databaseClosed``.
    static func plan(of schema: ModelSchema, in database: Database, rebuildingTable: Bool) throws -> SchemaPlan {
        if schema.modelType.isSynchronized { _ = try SyncCapture.keyColumn(of: schema) }
        let context = schema.context(in: database)
        return try database.withAccess(.writerRead) { access in
            try SchemaPlanner(schema: schema, connection: access.connection, context: context,
                              rebuildingTable: rebuildingTable).plan()
        }
    }

    /// Plans and executes, in one transaction: nothing changes when it throws.
    /// - Throws: what ``SchemaPlanner/plan()`` throws;
    ///   ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` for a row a
    ///   rebuild cannot copy as the model reads it; ``ActiveObjectError/invalidModel(model:reason:)``
    ///   when a rebuild would break a view; ``DatabaseError`` from SQLite (`constraint` for a
    ///   failing `foreign_key_check`).
    static func apply(_ schema: ModelSchema, in database: Database, rebuildingTable: Bool) throws {
        if schema.modelType.isSynchronized { _ = try SyncCapture.keyColumn(of: schema) }
        let context = schema.context(in: database)
        var rebuilt = false
        try database.transaction {
            try database.withAccess(.write) { access in
                let connection = access.connection
                let planner = SchemaPlanner(schema: schema, connection: connection, context: context,
                                            rebuildingTable: rebuildingTable)
                let plan = try planner.plan()
                if let rebuild = plan.rebuild {
                    try execute(plan, rebuild: rebuild, schema: schema, context: context, connection: connection)
                    rebuilt = true
                } else {
                    for step in plan.steps {
                        do {
                            try connection.execute(step.sql)
                        } catch let error as DatabaseError where error.message.contains("REFERENCES column with non-NULL default") {
                            let column = schema.columns.first {
                                $0.options.references != nil && step.sql.contains("ADD COLUMN \($0.quotedName) ")
                            }
                            throw planner.foreignKeyColumnError(column?.name ?? "?", detail: error.message)
                        }
                    }
                }
                if schema.modelType.isSynchronized { try SyncCapture.applyParked(schema, on: connection) }
            }
        }
        // The table may have gained or lost its rowid: models that did not declare its layout
        // learn it again.
        if rebuilt { database.forgetTableLayouts() }
    }

    /// Executes a rebuild's plan with foreign-key enforcement off (so that dropping the old
    /// table deletes no child row, also inside the caller's transaction), around it the checks:
    /// every row read through the model first; the copy's row count; the views that mention the
    /// table and worked before still work, and so do its triggers (statements that fire them
    /// are prepared, not run); `foreign_key_check` of the table and its children.
    private static func execute(_ plan: SchemaPlan, rebuild: SchemaPlan.Rebuild, schema: ModelSchema,
                                context: ValueContext, connection: Connection) throws {
        let views = try workingViews(mentioning: rebuild.table, on: connection)
        let triggerEvents = try compilingTriggerEvents(of: rebuild.table, on: connection)
        try validate(rebuild.validationSQL, schema: schema, context: context, connection: connection)
        try connection.withoutForeignKeyEnforcement {
            for step in plan.steps {
                switch step.kind {
                case .statement:
                    try connection.execute(step.sql)
                case .copy:
                    try connection.execute(step.sql)
                    let table = SQLIdentifier.quote(rebuild.table)
                    let copy = SQLIdentifier.quote(rebuild.temporaryTable)
                    let old = try connection.scalarValue("SELECT count(*) FROM \(table)")
                    let new = try connection.scalarValue("SELECT count(*) FROM \(copy)")
                    guard old == new else {
                        throw DatabaseError(
                            extendedResultCode: .internal,
                            message: "the rebuild of \(rebuild.table) copied \(new?.description ?? "no") rows of \(old?.description ?? "?"): nothing was changed")
                    }
                    if let sql = rebuild.copiedValidationSQL {
                        try validate(sql, schema: schema, context: context, connection: connection)
                    }
                case .renameTable:
                    try connection.withLegacyAlterTable { try connection.execute(step.sql) }
                }
            }
            for view in views {
                do {
                    _ = try connection.rows("SELECT * FROM \(SQLIdentifier.quote(view)) LIMIT 0")
                } catch let error as DatabaseError {
                    throw ActiveObjectError.invalidModel(
                        model: schema.modelName,
                        reason: "rebuilding \(rebuild.table) would break the view \(view) (\(error.message)); nothing was changed: "
                            + "drop or change the view first (in a migration step), or keep the columns it uses")
                }
            }
            try checkTriggers(of: rebuild.table, events: triggerEvents, schema: schema, on: connection)
            try ForeignKeys.check(connection, tables: rebuild.checkedTables)
        }
    }

    /// Statements that fire every trigger of `table` — an `INSERT`, an `UPDATE` of every
    /// column (so that every `UPDATE OF` trigger is coded), a `DELETE`, each matching no row —
    /// written for the table's columns as they are now. SQLite codes a statement's trigger
    /// programs when it prepares the statement, so a trigger naming a column the table lacks
    /// fails the prepare ("no such column"); they are only prepared, never run.
    private static func triggerProbes(of table: String, on connection: Connection) throws -> [(event: String, sql: String)] {
        let quoted = SQLIdentifier.quote(table)
        let columns = try connection.rows("PRAGMA table_info(\(quoted))").map { SQLIdentifier.quote(try $0["name"] as String) }
        guard !columns.isEmpty else { return [] }
        let list = columns.joined(separator: ", ")
        return [
            ("INSERT", "INSERT INTO \(quoted) (\(list)) SELECT \(list) FROM \(quoted) WHERE 0"),
            ("UPDATE", "UPDATE \(quoted) SET \(columns.map { "\($0) = \($0)" }.joined(separator: ", ")) WHERE 0"),
            ("DELETE", "DELETE FROM \(quoted) WHERE 0"),
        ]
    }

    /// The events (`INSERT`, `UPDATE`, `DELETE`) whose triggers on `table` compile now: a
    /// trigger broken already is not the rebuild's doing.
    private static func compilingTriggerEvents(of table: String, on connection: Connection) throws -> Set<String> {
        Set(try triggerProbes(of: table, on: connection).filter { (try? connection.prepare($0.sql).finalize()) != nil }.map(\.event))
    }

    /// Throws ``ActiveObjectError/invalidModel(model:reason:)`` naming the trigger when the
    /// triggers of an event in `events` no longer compile on the rebuilt table.
    private static func checkTriggers(of table: String, events: Set<String>, schema: ModelSchema,
                                      on connection: Connection) throws {
        let triggers = try connection.rows(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE AND sql IS NOT NULL",
            [.text(table)]).map { (name: try $0["name"] as String, sql: try $0["sql"] as String) }
        guard !triggers.isEmpty else { return }
        for probe in try triggerProbes(of: table, on: connection) where events.contains(probe.event) {
            do {
                try connection.prepare(probe.sql).finalize()
            } catch let error as DatabaseError {
                let named = triggers.filter { firesOn(probe.event, triggerSQL: $0.sql) }.map(\.name)
                let culprits = (named.isEmpty ? triggers.map(\.name) : named).joined(separator: ", ")
                throw ActiveObjectError.invalidModel(
                    model: schema.modelName,
                    reason: "rebuilding \(table) would break the trigger \(culprits) (\(error.message)); nothing was changed: "
                        + "drop or change the trigger first (in a migration step), or keep the columns it uses")
            }
        }
    }

    /// Whether a trigger's SQL names `event` (`DELETE`, `INSERT`, `UPDATE`) before `ON`: a
    /// reading good enough to name the trigger in an error.
    private static func firesOn(_ event: String, triggerSQL: String) -> Bool {
        var words: [String] = []
        var word = ""
        for character in triggerSQL.uppercased() {
            if character.isLetter || character.isNumber || character == "_" {
                word.append(character)
            } else if !word.isEmpty {
                if word == "ON" { break }
                words.append(word)
                word = ""
            }
        }
        return words.contains(event)
    }

    /// Reads every row `sql` selects through the model, writing nothing: throws
    /// ``ActiveObjectError/typeMismatch(table:column:rowID:expected:found:)`` for the first value
    /// the model cannot read. The objects are filled only (no `didLoad()`), then dropped.
    private static func validate(_ sql: String, schema: ModelSchema, context: ValueContext, connection: Connection) throws {
        try connection.withStatement(sql, []) { statement in
            let loader = ObjectLoader(schema: schema, statement: statement, context: context)
            while try statement.step() {
                try loader.fill(schema.newObject(), from: statement)
            }
        }
    }

    /// The views whose SQL mentions `table` and that can be read now.
    private static func workingViews(mentioning table: String, on connection: Connection) throws -> [String] {
        let folded = table.lowercased()
        return try connection.rows("SELECT name, sql FROM sqlite_master WHERE type = 'view'").compactMap { row in
            let name: String = try row["name"]
            let sql: String? = try row["sql"]
            guard sql?.lowercased().contains(folded) == true else { return nil }
            do {
                _ = try connection.rows("SELECT * FROM \(SQLIdentifier.quote(name)) LIMIT 0")
                return name
            } catch is DatabaseError {
                return nil   // broken already: not the rebuild's doing
            }
        }
    }
}
