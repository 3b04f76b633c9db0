/// The statements that bring a model's table to the model, worked out from the model and
/// from the table as the file has it now (PRAGMA and `sqlite_master` reads only), before any
/// of them runs. `createTable()` and `migrate(rebuildingTable:)` compute a plan and execute
/// exactly its statements (``SchemaChange``); ``ActiveRecord/schemaPlan()`` returns them.
///
/// Every statement is literal SQL — values are rendered by ``SQLLiteral``, nothing is bound —
/// so that the plan can be shown as it will run.
struct SchemaPlan {
    /// One statement of the plan.
    struct Step {
        enum Kind {
            /// Run as it is.
            case statement
            /// A rebuild's copy of every row into the new table: afterwards the executor checks
            /// that the new table holds as many rows as the old one.
            case copy
            /// A rebuild's `ALTER TABLE <new> RENAME TO <table>`, run with `legacy_alter_table`
            /// on, so that the views and triggers naming the table are left as they are.
            case renameTable
        }
        let sql: String
        let kind: Kind
    }

    /// What the executor checks around a rebuild — reads only, not part of the plan.
    struct Rebuild {
        /// The model's table, unquoted.
        let table: String
        /// The new table the rows are copied into, unquoted.
        let temporaryTable: String
        /// Reads every row of the old table as the copy will write it, under the model's
        /// column names: each row is read through the model before anything is written, so
        /// that a value the model cannot read throws `typeMismatch` naming the row. (A column
        /// whose type changes is only checked for NULL here: see `copiedValidationSQL`.)
        let validationSQL: String
        /// Reads the columns whose declared type changes from the new table, once the rows are
        /// copied (each value now has the new column's affinity); nil when no type changes.
        let copiedValidationSQL: String?
        /// The tables whose foreign keys `PRAGMA foreign_key_check` checks before the commit:
        /// the table and every table that references it.
        let checkedTables: [String]
    }

    private(set) var steps: [Step] = []
    /// Set when the plan rebuilds the table.
    fileprivate(set) var rebuild: Rebuild?
    /// Whether the plan creates the table (it did not exist).
    fileprivate(set) var createsTable = false

    /// The SQL of the steps, in order.
    var statements: [String] { steps.map(\.sql) }

    fileprivate mutating func append(_ sql: String, _ kind: Step.Kind = .statement) {
        steps.append(Step(sql: sql, kind: kind))
    }

    fileprivate mutating func append(contentsOf statements: [String]) {
        for sql in statements { append(sql) }
    }
}

/// Works out the ``SchemaPlan`` of a model on a connection. Reads only.
struct SchemaPlanner {
    let schema: ModelSchema
    let connection: Connection
    let context: ValueContext
    /// `migrate(rebuildingTable: true)`: rebuild the table when `ALTER TABLE` cannot bring it
    /// to the model. Otherwise (`createTable()`) only a column `ALTER TABLE` cannot add at all
    /// — `NOT NULL` with a default computed at run time — makes the plan a rebuild.
    let rebuildingTable: Bool

    /// The plan: empty when the table is up to date.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` when the class cannot be
    ///   mapped, when a synchronized model has no single UUID or String key, when a
    ///   non-optional foreign-key column cannot be added to the rows the table holds, or when
    ///   `createTable()` would have to rebuild a table holding columns the model no longer
    ///   declares; ``ActiveObjectError/invalidValue(table:column:reason:)`` for a default that
    ///   cannot be written; ``DatabaseError`` from SQLite.
    func plan() throws -> SchemaPlan {
        // A read-only model (a view, or a table the app must not write) changes nothing.
        if schema.isReadOnly { return SchemaPlan() }
        var plan = try tablePlan()
        plan.append(contentsOf: try SearchIndex.installSteps(
            for: schema, on: connection, tableIsNew: plan.createsTable, tableRebuilt: plan.rebuild != nil))
        return plan
    }

    /// The plan of the table itself (without its full-text index).
    private func tablePlan() throws -> SchemaPlan {
        let encoding = try SQLLiteral.TextEncoding(connection)
        let defaults = try schema.defaultValues(context: context)
        let runtime = try RuntimeDefaults.slots(of: schema, prototypeValues: defaults, context: context)
        let shape = try TableShape(connection, table: schema.tableName)
        guard !shape.columns.isEmpty else {
            return try creationPlan(encoding: encoding, runtime: runtime)
        }
        let matched = shape.matches(for: schema)
        let keySlots = Set(schema.keySlots)
        // ADD COLUMN cannot add a NOT NULL column without a DEFAULT, even to an empty table:
        // a rebuild writes the value into the rows already there instead.
        let unaddable = schema.columns.indices.filter { slot in
            matched[slot] == nil && runtime.contains(slot) && !schema.columns[slot].isNullable && !keySlots.contains(slot)
        }
        if rebuildingTable {
            let foreignKeyDefaults = try alterRefusesForeignKeyDefaults() ? defaults : []
            if !unaddable.isEmpty || shape.needsRebuild(for: schema, dateStrategy: context.dateStrategy,
                                                        defaults: foreignKeyDefaults, runtimeDefaults: runtime) {
                return try rebuildPlan(shape: shape, matched: matched, encoding: encoding, runtime: runtime)
            }
        } else if !unaddable.isEmpty {
            // createTable() leaves the columns the model no longer declares alone: a rebuild
            // that drops them is migrate(rebuildingTable: true)'s to make.
            let known = Set(matched.compactMap { $0?.name.lowercased() } + SchemaDDL.tableColumnNames(of: schema).map { $0.lowercased() })
            let extra = shape.columns.map(\.name).filter { !known.contains($0.lowercased()) }
            guard extra.isEmpty else {
                let added = unaddable.map { "\"\(schema.columns[$0].name)\"" }.joined(separator: ", ")
                throw ActiveObjectError.invalidModel(
                    model: schema.modelName,
                    reason: "the column \(added) is NOT NULL and its default is computed at run time, so SQLite cannot add it "
                        + "to \(schema.tableName) with ALTER TABLE; createTable() would rebuild the table, which would drop "
                        + "the columns the model no longer declares (\(extra.map { "\"\($0)\"" }.joined(separator: ", "))): "
                        + "declare the new column optional, declare those columns, or call migrate(rebuildingTable: true), "
                        + "which drops them")
            }
            return try rebuildPlan(shape: shape, matched: matched, encoding: encoding, runtime: runtime)
        }
        return try alterPlan(shape: shape, matched: matched, encoding: encoding, runtime: runtime, defaults: defaults)
    }

    // MARK: - A new table

    private func creationPlan(encoding: SQLLiteral.TextEncoding, runtime: Set<Int>) throws -> SchemaPlan {
        let ddl = try SchemaDDL(schema: schema, context: context, textEncoding: encoding, runtimeDefaults: runtime)
        var plan = SchemaPlan()
        plan.append(ddl.createTableSQL)
        plan.createsTable = true
        var names = try objectNames()
        for index in ddl.indexes where names.insert(index.name.lowercased()).inserted { plan.append(index.sql) }
        if schema.modelType.isSynchronized {
            plan.append(contentsOf: try SyncCapture.installSQL(schema, columns: SchemaDDL.tableColumnNames(of: schema),
                                                               on: connection, tableIsNew: true))
        }
        return plan
    }

    // MARK: - ALTER TABLE: renames, new columns, indexes

    private func alterPlan(shape: TableShape, matched: [TableShape.ColumnInfo?], encoding: SQLLiteral.TextEncoding,
                           runtime: Set<Int>, defaults: [DatabaseValue]) throws -> SchemaPlan {
        let ddl = try SchemaDDL(schema: schema, context: context, textEncoding: encoding, runtimeDefaults: runtime)
        var plan = SchemaPlan()
        var names = try objectNames()
        var renames: [(old: String, new: String)] = []
        var finalColumns = shape.columns.map(\.name)
        for (slot, column) in schema.columns.enumerated() where shape.column(named: column.name) == nil {
            guard let old = matched[slot] else { continue }
            // The index the library made for the old name covers the renamed column: it gives
            // way to the one named after the new name, when the model declares that one.
            for oldIndex in libraryIndexes(of: old.name, replacedBy: column.name, shape: shape, ddl: ddl) {
                plan.append("DROP INDEX \(SQLIdentifier.quote(oldIndex))")
                names.remove(oldIndex.lowercased())
            }
            plan.append("ALTER TABLE \(schema.quotedTable) RENAME COLUMN \(SQLIdentifier.quote(old.name)) TO \(column.quotedName)")
            renames.append((old.name, column.name))
            if let position = finalColumns.firstIndex(where: { $0.lowercased() == old.name.lowercased() }) {
                finalColumns[position] = column.name
            }
        }
        var refusesForeignKeyDefaults: Bool?
        for (slot, column) in schema.columns.enumerated() where matched[slot] == nil {
            // (Only for a table: ALTER TABLE refuses a view's name with its own message.)
            if column.options.references != nil && defaults[slot] != .null && !runtime.contains(slot) && shape.storedName != nil {
                if refusesForeignKeyDefaults == nil { refusesForeignKeyDefaults = try alterRefusesForeignKeyDefaults() }
                if refusesForeignKeyDefaults == true { throw foreignKeyColumnError(column.name, detail: nil) }
            }
            plan.append("ALTER TABLE \(schema.quotedTable) ADD COLUMN \(ddl.columnDefinitions[slot])")
            finalColumns.append(column.name)
        }
        for index in ddl.indexes where names.insert(index.name.lowercased()).inserted { plan.append(index.sql) }
        if schema.modelType.isSynchronized {
            plan.append(contentsOf: try SyncCapture.installSQL(schema, columns: finalColumns, on: connection,
                                                               renamedColumns: renames))
        }
        return plan
    }

    /// The error for a non-optional foreign-key column that `ALTER TABLE ADD COLUMN` refuses.
    func foreignKeyColumnError(_ column: String, detail: String?) -> ActiveObjectError {
        // SQLite refuses a REFERENCES column with a non-NULL default for a populated table
        // while foreign keys are enforced: say what to do.
        ActiveObjectError.invalidModel(
            model: schema.modelName,
            reason: "the foreign-key column \"\(column)\" cannot be added to the existing rows of "
                + "\(schema.tableName) (\(detail ?? "Cannot add a REFERENCES column with non-NULL default value")): "
                + "declare it optional with a nil default, or call migrate(rebuildingTable: true), which rebuilds the table with it")
    }

    /// Whether `ALTER TABLE ADD COLUMN` refuses a foreign-key column with a non-NULL default:
    /// only while foreign keys are enforced and the table holds rows.
    private func alterRefusesForeignKeyDefaults() throws -> Bool {
        guard schema.columns.contains(where: { $0.options.references != nil }) else { return false }
        return try connection.enforcesForeignKeys
            && connection.scalarValue("SELECT EXISTS (SELECT 1 FROM \(schema.quotedTable))") == .integer(1)
    }

    /// The indexes the library named after column `old` (`<table>_<old>_unique`, `_index`)
    /// that cover exactly that column, for which the model declares the counterpart named
    /// after `new`.
    private func libraryIndexes(of old: String, replacedBy new: String, shape: TableShape, ddl: SchemaDDL) -> [String] {
        ["_unique", "_index"].compactMap { suffix in
            let oldName = "\(schema.tableName)_\(old)\(suffix)".lowercased()
            let newName = "\(schema.tableName)_\(new)\(suffix)".lowercased()
            guard ddl.indexes.contains(where: { $0.name.lowercased() == newName }) else { return nil }
            return shape.indexesAndTriggers.first { object in
                object.type == "index" && object.name.lowercased() == oldName
                    && object.columns.map { $0.lowercased() } == [old.lowercased()]
            }?.name
        }
    }

    // MARK: - A rebuild

    /// SQLite's table rebuild (<https://www.sqlite.org/lang_altertable.html#otheralter>): a new
    /// table, one `INSERT … SELECT` copy, the old table dropped and the new one renamed, the old
    /// indexes and triggers recreated, renamed columns renamed, the model's indexes created.
    private func rebuildPlan(shape: TableShape, matched: [TableShape.ColumnInfo?], encoding: SQLLiteral.TextEncoding,
                             runtime: Set<Int>) throws -> SchemaPlan {
        let temporary = "_activeobjects_rebuild_\(schema.tableName)"
        let quotedTemporary = SQLIdentifier.quote(temporary)
        // A renamed column is created under its old name and renamed at the end, so that the
        // indexes and triggers recreated from their SQL still find it (the rename rewrites them).
        var renamed: [Int: String] = [:]
        for (slot, column) in schema.columns.enumerated() where shape.column(named: column.name) == nil {
            if let old = matched[slot] { renamed[slot] = old.name }
        }
        // AUTOINCREMENT (ids of deleted rows never reused) stays, for the rowid column or a
        // declared INTEGER key column that is the rowid's alias (`contactid`).
        var autoIncrement = false
        if shape.isAutoIncrement {
            if case .rowID(_, isHidden: false) = schema.key { autoIncrement = true }
            if SchemaDDL.rowIDAliasSlot(of: schema, dateStrategy: context.dateStrategy) != nil { autoIncrement = true }
        }
        let ddl = try SchemaDDL(schema: schema, context: context, textEncoding: encoding, tableName: temporary,
                                autoIncrement: autoIncrement, runtimeDefaults: runtime, columnNames: renamed,
                                keptDefaults: keptDefaults(matched: matched, runtime: runtime),
                                onUpdate: keptOnUpdateActions(shape: shape, matched: matched))
        var plan = SchemaPlan()
        var names = try objectNames()
        if names.contains(temporary.lowercased()) { plan.append("DROP TABLE \(quotedTemporary)") }
        plan.append(ddl.createTableSQL)

        // The copy, and the validation read of the same values. Rowids are carried over
        // whenever both tables have them. The model's rowid column takes the values of the
        // table's column of that name when that one is a real column, not the rowid's alias
        // (`id INT PRIMARY KEY`, or a WITHOUT ROWID table's `id`): its values are the ids.
        var keepsRowIDs = shape.hasRowID && !schema.declaresWithoutRowID
        let idName = schema.keySlots.isEmpty ? schema.quotedPrimaryKey : "\"rowid\""
        var idSource = "rowid"
        if case .rowID(let name, isHidden: false) = schema.key, !schema.declaresWithoutRowID,
           let stored = shape.column(named: name),
           !(shape.keyIsRowIDAlias && shape.keyColumns.first?.lowercased() == stored.name.lowercased()) {
            idSource = SQLIdentifier.quote(stored.name)
            keepsRowIDs = true
        }
        var targets: [String] = keepsRowIDs ? [idName] : []
        var sources: [String] = keepsRowIDs ? [idSource] : []
        var checks: [String] = shape.hasRowID || idSource != "rowid" ? ["\(idSource) AS \(idName)"] : []
        var retyped: [String] = keepsRowIDs ? ["rowid AS \(idName)"] : []
        for (slot, column) in schema.columns.enumerated() {
            let source = matched[slot].map { SQLIdentifier.quote($0.name) } ?? ddl.fillLiterals[slot]
            let target = renamed[slot].map(SQLIdentifier.quote) ?? column.quotedName
            targets.append(target)
            sources.append(source)
            if let current = matched[slot], current.type != column.columnType(dateStrategy: context.dateStrategy).rawValue {
                // A retyped column's values convert by the new column's affinity (`'5'` into
                // INTEGER is 5): the model reads them from the new table, after the copy. Before
                // it, only a NULL the model cannot take is looked for (read as the fill value
                // otherwise), so that it is reported as the model reads it.
                retyped.append("\(target) AS \(column.quotedName)")
                if !column.isNullable {
                    checks.append("CASE WHEN \(source) IS NULL THEN NULL ELSE \(ddl.fillLiterals[slot]) END AS \(column.quotedName)")
                }
            } else {
                checks.append("\(source) AS \(column.quotedName)")
            }
        }
        plan.append("INSERT INTO \(quotedTemporary) (\(targets.joined(separator: ", "))) SELECT \(sources.joined(separator: ", ")) FROM \(schema.quotedTable)",
                    .copy)
        if autoIncrement, let stored = shape.storedName {
            // AUTOINCREMENT's high-water mark may be above the largest id left: the new table
            // takes the higher of both (DROP TABLE deletes the old one's, RENAME carries the new).
            let old = try SQLLiteral.render(.text(stored))
            let new = try SQLLiteral.render(.text(temporary))
            plan.append("UPDATE sqlite_sequence SET seq = (SELECT max(seq) FROM sqlite_sequence WHERE name IN (\(old), \(new))) WHERE name = \(new)")
            plan.append("INSERT INTO sqlite_sequence (name, seq) SELECT \(new), seq FROM sqlite_sequence WHERE name = \(old) "
                        + "AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = \(new))")
        }
        plan.append("DROP TABLE \(schema.quotedTable)")
        plan.append("ALTER TABLE \(quotedTemporary) RENAME TO \(schema.quotedTable)", .renameTable)

        // The old table's indexes (those whose columns still exist) and triggers, as they
        // were; the capture triggers of a synchronized model are written anew below.
        for object in shape.indexesAndTriggers { names.remove(object.name.lowercased()) }
        names.remove(temporary.lowercased())
        var kept = Set(schema.columns.indices.map { (renamed[$0] ?? schema.columns[$0].name).lowercased() })
        kept.insert(schema.primaryKey.lowercased())
        // The capture triggers of a synchronized model, and the full-text index's, are made anew
        // after the rebuild (SearchIndex.installSteps), not copied.
        var remadeTriggers = schema.modelType.isSynchronized
            ? Set(SyncCapture.triggerSQL(table: schema.tableName, key: "", columns: []).map { $0.name.lowercased() })
            : []
        remadeTriggers.formUnion(SearchIndex.triggerNames(of: schema.tableName).map { $0.lowercased() })
        var replacedIndexes = Set<String>()
        for (slot, old) in renamed {
            for name in libraryIndexes(of: old, replacedBy: schema.columns[slot].name, shape: shape, ddl: ddl) {
                replacedIndexes.insert(name.lowercased())
            }
        }
        for object in shape.indexesAndTriggers {
            let name = object.name.lowercased()
            if object.type == "trigger" {
                if !remadeTriggers.contains(name) { plan.append(object.sql) }
            } else if object.columns.allSatisfy({ kept.contains($0.lowercased()) }) && !replacedIndexes.contains(name)
                        && names.insert(name).inserted {
                plan.append(object.sql)
            }
        }
        // UNIQUE constraints of the old table live on as unique indexes.
        for columns in shape.uniqueConstraints where columns.allSatisfy({ kept.contains($0.lowercased()) }) {
            let name = ([schema.tableName] + columns + ["unique"]).joined(separator: "_")
            guard names.insert(name.lowercased()).inserted else { continue }
            let list = columns.map(SQLIdentifier.quote).joined(separator: ", ")
            plan.append("CREATE UNIQUE INDEX IF NOT EXISTS \(SQLIdentifier.quote(name)) ON \(schema.quotedTable)(\(list))")
        }
        for slot in renamed.keys.sorted() {
            plan.append("ALTER TABLE \(schema.quotedTable) RENAME COLUMN \(SQLIdentifier.quote(renamed[slot] ?? "")) TO \(schema.columns[slot].quotedName)")
        }
        for index in ddl.indexes where names.insert(index.name.lowercased()).inserted { plan.append(index.sql) }
        if schema.modelType.isSynchronized {
            plan.append(contentsOf: try SyncCapture.installSQL(
                schema, columns: SchemaDDL.tableColumnNames(of: schema), on: connection, triggersDropped: true,
                renamedColumns: renamed.keys.sorted().compactMap { slot in renamed[slot].map { ($0, schema.columns[slot].name) } }))
        }

        let referencing = try connection.rows("""
            SELECT DISTINCT m.name FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f
            WHERE m.type = 'table' AND f."table" = ? COLLATE NOCASE AND m.name <> ? COLLATE NOCASE
            """, [.text(schema.tableName), .text(schema.tableName)]).map { try $0[0] as String }
        plan.rebuild = SchemaPlan.Rebuild(
            table: schema.tableName, temporaryTable: temporary,
            validationSQL: "SELECT \(checks.isEmpty ? "1" : checks.joined(separator: ", ")) FROM \(schema.quotedTable)",
            copiedValidationSQL: retyped.count > (keepsRowIDs ? 1 : 0)
                ? "SELECT \(retyped.joined(separator: ", ")) FROM \(quotedTemporary)" : nil,
            checkedTables: [schema.tableName] + referencing)
        return plan
    }

    /// By slot, the `DEFAULT` expressions (`CURRENT_TIMESTAMP`) of the table's columns that a
    /// rebuild keeps: those of columns whose default the model computes at run time, or that
    /// have the role `.createdAt` or `.updatedAt`. SQLite evaluates such a default for each
    /// insert: nothing frozen, and other tools' inserts rely on it.
    private func keptDefaults(matched: [TableShape.ColumnInfo?], runtime: Set<Int>) -> [Int: String] {
        let keySlots = Set(schema.keySlots)
        var kept: [Int: String] = [:]
        for (slot, column) in schema.columns.enumerated() where !keySlots.contains(slot) {
            guard let expression = matched[slot]?.expressionDefault else { continue }
            let role = column.options.role
            if runtime.contains(slot) || role == .createdAt || role == .updatedAt { kept[slot] = expression }
        }
        return kept
    }

    /// By slot, the `ON UPDATE` action (other than `NO ACTION`) of the table's foreign key from
    /// a column the model still declares a foreign key from, to the same parent table: a
    /// rebuild keeps it (the model declares only `ON DELETE`).
    private func keptOnUpdateActions(shape: TableShape, matched: [TableShape.ColumnInfo?]) -> [Int: String] {
        var kept: [Int: String] = [:]
        for (slot, column) in schema.columns.enumerated() {
            guard let parent = column.options.references, let current = matched[slot],
                  let key = shape.foreignKeys.first(where: { $0.from.lowercased() == current.name.lowercased() }),
                  key.table.lowercased() == parent.tableName.lowercased(), key.onUpdate != "NO ACTION" else { continue }
            kept[slot] = key.onUpdate
        }
        return kept
    }

    /// The names of every table, index, view and trigger of the main schema, lowercased.
    private func objectNames() throws -> Set<String> {
        Set(try connection.rows("SELECT name FROM sqlite_master").map { (try $0[0] as String).lowercased() })
    }
}
