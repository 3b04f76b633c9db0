// The checks `.ci/check-generated` runs on the models generated from a real schema with its
// data (see README.md here): every model, of a table or a view, loads every row, and every
// relation finds what SQL finds. The module RealSchemaSupport of the check's scratch package;
// list-checks.awk writes, for each schema, the calls that register its models and relations.
import ActiveObjects
import Foundation

/// What went wrong with one model or relation.
public struct CheckFailure: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The checks of one schema, registered by the generated list, run by ``run(databasePath:)``.
public struct SchemaChecks {
    public let name: String
    private var models: [(name: String, isView: Bool, run: (Database) throws -> Int)] = []
    private var relations: [(name: String, run: (Database) throws -> Int)] = []

    public init(name: String) { self.name = name }

    /// A generated model: `findAll()`, `all.all()` and `countAll()` give as many rows as
    /// `SELECT count(*)` of its table or view; a view's model refuses to save.
    public mutating func model<M: ActiveObject>(_ type: M.Type, isView: Bool) {
        models.append(("\(M.self) (\(M.tableName))", isView, { db in
            let expected = try Self.count(db, "SELECT count(*) FROM \(Self.quoted(M.tableName))")
            // For a view without a key column, findAll() orders by nothing (it ordered by the
            // missing `id` before fbbf692, a bug this check found: "no such column: id").
            let loaded = try M.findAll()
            let queried = try M.all.all()
            let counted = try M.countAll()
            guard loaded.count == expected, queried.count == expected, counted == expected else {
                throw CheckFailure("findAll() loaded \(loaded.count), all.all() \(queried.count), countAll() \(counted); SQL counts \(expected)")
            }
            if isView {
                guard M.isReadOnly else { throw CheckFailure("the model of a view is not isReadOnly") }
                do {
                    try M().save()
                    throw CheckFailure("save() of a new object of a view's model did not throw")
                } catch ActiveObjectError.misuse(_) {
                    // refused before any SQL runs
                }
            }
            return loaded.count
        }))
    }

    /// `child.parent` for every child, as ``hasMany(_:_:_:column:)`` does (through `get()`):
    /// the parents found are the rows SQL's join finds.
    public mutating func belongsTo<Child: ActiveObject, Parent: ActiveObject>(
        _ owner: Child.Type, _ name: String, _ relation: KeyPath<Child, BelongsTo<Parent>>, column: String
    ) {
        relations.append(("\(Child.self).\(name): BelongsTo<\(Parent.self)>", { db in
            let expected = try Self.joinCount(db, Child.self, Parent.self, column: column)
            return try Self.compare(Child.self, expected: expected,
                                    preloaded: { try $0[keyPath: relation].get() == nil ? 0 : 1 },
                                    including: { $0.including(relation) },
                                    queried: { [try $0[keyPath: relation].get() == nil ? 0 : 1] })
        }))
    }

    /// `parent.children` for every parent through `including`: as many as SQL's join; and for
    /// the first ``perObjectLimit`` parents, `count()` and `all()` (a query each) find what
    /// `including` loaded for that parent.
    public mutating func hasMany<Parent: ActiveObject, Child: ActiveObject>(
        _ owner: Parent.Type, _ name: String, _ relation: KeyPath<Parent, HasMany<Child>>, column: String
    ) {
        relations.append(("\(Parent.self).\(name): HasMany<\(Child.self)>", { db in
            let expected = try Self.joinCount(db, Child.self, Parent.self, column: column)
            return try Self.compare(Parent.self, expected: expected, preloaded: { try $0[keyPath: relation].all().count },
                                    including: { $0.including(relation) },
                                    queried: { [try $0[keyPath: relation].count(), try $0[keyPath: relation].all().count] })
        }))
    }

    /// `parent.child` for every parent, as ``hasMany(_:_:_:column:)`` does (through `get()`).
    public mutating func hasOne<Parent: ActiveObject, Child: ActiveObject>(
        _ owner: Parent.Type, _ name: String, _ relation: KeyPath<Parent, HasOne<Child>>, column: String
    ) {
        relations.append(("\(Parent.self).\(name): HasOne<\(Child.self)>", { db in
            let expected = try Self.joinCount(db, Child.self, Parent.self, column: column)
            return try Self.compare(Parent.self, expected: expected,
                                    preloaded: { try $0[keyPath: relation].get() == nil ? 0 : 1 },
                                    including: { $0.including(relation) },
                                    queried: { [try $0[keyPath: relation].get() == nil ? 0 : 1] })
        }))
    }

    /// `owner.targets` through the join model, as ``hasMany(_:_:_:column:)`` does: as many as
    /// SQL's join of the join table with both sides.
    public mutating func hasManyThrough<Owner: ActiveObject, Target: ActiveObject, Join: ActiveObject>(
        _ owner: Owner.Type, _ name: String, _ relation: KeyPath<Owner, HasManyThrough<Target>>,
        join: Join.Type, near: String, far: String
    ) {
        relations.append(("\(Owner.self).\(name): HasManyThrough<\(Target.self)> through \(Join.self)", { db in
            let expected = try Self.count(db, "SELECT count(*) FROM \(Self.quoted(Join.tableName)) j JOIN "
                + "\(Self.quoted(Owner.tableName)) o ON o.\(Self.quoted(Owner.primaryKey)) = j.\(Self.quoted(near)) JOIN "
                + "\(Self.quoted(Target.tableName)) t ON t.\(Self.quoted(Target.primaryKey)) = j.\(Self.quoted(far))")
            return try Self.compare(Owner.self, expected: expected, preloaded: { try $0[keyPath: relation].all().count },
                                    including: { $0.including(relation) },
                                    queried: { [try $0[keyPath: relation].count(), try $0[keyPath: relation].all().count] })
        }))
    }

    /// How many owners a relation is also followed for one query at a time (every owner is
    /// followed through `including`).
    static let perObjectLimit = 1_000

    /// Loads every owner with the relation (`including`), compares the total with SQL's, then
    /// for the first ``perObjectLimit`` owners (by key) compares what a query per owner finds
    /// with what `including` loaded for it (matched by `id`, the rowid). Returns the total.
    static func compare<Owner: ActiveObject>(
        _ owner: Owner.Type, expected: Int, preloaded: (Owner) throws -> Int,
        including: (Query<Owner>) -> Query<Owner>, queried: (Owner) throws -> [Int]
    ) throws -> Int {
        var total = 0
        var byID: [Int64: Int] = [:]
        for object in try including(Owner.all).all() {
            let count = try preloaded(object)
            total += count
            if let id = object.id { byID[id] = count }
        }
        guard total == expected else { throw CheckFailure("including found \(total); SQL's join \(expected)") }
        for object in try Owner.findAll().prefix(perObjectLimit) {
            guard let id = object.id, let loaded = byID[id] else { continue }
            let counts = try queried(object)
            guard counts.allSatisfy({ $0 == loaded }) else {
                throw CheckFailure("for \(Owner.self) id \(id), including loaded \(loaded), a query per object found \(counts)")
            }
        }
        return total
    }

    /// What one schema's run found.
    public struct Summary {
        public var tables = 0, views = 0, rows = 0, relations = 0, related = 0
        public var failures: [String] = []
    }

    /// Opens the database read-only as every model's database, runs every check (all of them,
    /// whatever fails), prints a line per failure and a summary, and returns the summary.
    public func run(databasePath: String) -> Summary {
        var summary = Summary()
        let start = Date()
        var options = Database.Options()
        options.readOnly = true
        let db: Database
        do {
            db = try Database(path: databasePath, options: options)
        } catch {
            summary.failures.append("\(name): cannot open \(databasePath): \(error)")
            print("FAIL \(summary.failures[0])")
            return summary
        }
        ActiveObject.defaultDatabase = db
        defer {
            ActiveObject.defaultDatabase = nil
            try? db.close()
        }
        for model in models {
            if model.isView { summary.views += 1 } else { summary.tables += 1 }
            do {
                summary.rows += try model.run(db)
            } catch {
                summary.failures.append("\(name): model \(model.name): \(error)")
            }
        }
        for relation in relations {
            summary.relations += 1
            do {
                summary.related += try relation.run(db)
            } catch {
                summary.failures.append("\(name): relation \(relation.name): \(error)")
            }
        }
        for failure in summary.failures { print("FAIL \(failure)") }
        let seconds = String(format: "%.1f", Date().timeIntervalSince(start))
        print("\(name): \(summary.tables) tables and \(summary.views) views, \(summary.rows) rows loaded; "
              + "\(summary.relations) relations followed, \(summary.related) related objects; "
              + "\(summary.failures.count) failures; \(seconds) s")
        return summary
    }

    /// How many rows of `Child` have a `Parent` through `column`: SQL's join.
    static func joinCount<Child: ActiveObject, Parent: ActiveObject>(
        _ db: Database, _ child: Child.Type, _ parent: Parent.Type, column: String
    ) throws -> Int {
        try count(db, "SELECT count(*) FROM \(quoted(Child.tableName)) c JOIN "
            + "\(quoted(Parent.tableName)) p ON p.\(quoted(Parent.primaryKey)) = c.\(quoted(column))")
    }

    static func count(_ db: Database, _ sql: String) throws -> Int {
        guard let count: Int = try db.scalar(sql) else { throw CheckFailure("no count from \(sql)") }
        return count
    }

    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
