// Queries across relations: `joining(_:where:)` keeps the objects that have a related row
// matching a predicate on the related model. It is a filter like the others — a correlated
// `EXISTS (SELECT 1 FROM <related> …)` — so each object is returned once, and it combines
// with `where`, `order`, `limit`, `including`, `count`, `exists` and `delete`.
//
// Soft delete: a related row soft-deleted does not make an object match (unless the relation is
// declared `withDeleted()`), nor does a soft-deleted join row of a many-to-many relation. The
// scope of the outer query (`withDeleted()` on it) is the outer rows' only.

extension Query {
    /// The objects whose parent (belongs-to) matches `predicate`:
    /// `Order.all.joining(\.customer, where: \.$country == "France")`. Without a predicate,
    /// the objects whose parent exists. A soft-deleted parent matches nothing, unless the
    /// relation is declared `withDeleted()` (`var anyCustomer: BelongsTo<Customer> {
    /// belongsTo(\.$customerId).withDeleted() }`).
    public func joining<Parent>(_ relation: KeyPath<Model, BelongsTo<Parent>>,
                                where predicate: QueryPredicate<Parent>? = nil) -> Query {
        adding(Self.relatedFilter(relation, predicate?.node) { relation, outer, renderer in
            let schema = try ModelSchema.of(Parent.self)
            let foreignKey = try outer.columnSlot(for: relation.foreignKey)
            let key = try schema.requireReferencedKey(for: "joining(\\.\(Parent.self))")
            return (schema, { alias in
                "\(Self.qualified(alias, schema.quotedColumn(slot: key.slot))) = \(Self.qualified(outer.tableName, outer.quotedColumn(slot: foreignKey)))"
            })
        })
    }

    /// The objects with at least one child (has-many) matching `predicate`, each once:
    /// `Customer.all.joining(\.orders, where: \.$freight > 500)`. Soft-deleted children do not
    /// count, unless the relation is declared `withDeleted()`.
    public func joining<Child>(_ relation: KeyPath<Model, HasMany<Child>>,
                               where predicate: QueryPredicate<Child>? = nil) -> Query {
        adding(Self.relatedFilter(relation, predicate?.node) { relation, outer, _ in
            try Self.childCorrelation(Child.self, foreignKey: relation.foreignKey, outer: outer)
        })
    }

    /// The objects whose has-one child matches `predicate` (a soft-deleted child does not
    /// count, unless the relation is declared `withDeleted()`).
    public func joining<Child>(_ relation: KeyPath<Model, HasOne<Child>>,
                               where predicate: QueryPredicate<Child>? = nil) -> Query {
        adding(Self.relatedFilter(relation, predicate?.node) { relation, outer, _ in
            try Self.childCorrelation(Child.self, foreignKey: relation.foreignKey, outer: outer)
        })
    }

    /// The objects related (many-to-many) to at least one target matching `predicate`, each
    /// once: `Playlist.all.joining(\.tracks, where: \.$genre == "Jazz")`. Soft-deleted targets
    /// do not count unless the relation is declared `withDeleted()`; soft-deleted join rows
    /// never do.
    public func joining<Target>(_ relation: KeyPath<Model, HasManyThrough<Target>>,
                                where predicate: QueryPredicate<Target>? = nil) -> Query {
        let box = SendableKeyPath(keyPath: relation)
        let node = predicate?.node
        return adding(.related(RelatedFilter { renderer in
            let outer = renderer.schema
            let through = outer.valueOnPrototype(at: box.keyPath) as! HasManyThrough<Target>
            let resolved = try through.resolve()
            let ownerKey = try outer.requireReferencedKey(for: "joining(\\.\(Target.self))")
            let joinAlias = renderer.newAlias(), targetAlias = renderer.newAlias()
            let join = resolved.join, target = resolved.target
            var sql = "EXISTS (SELECT 1 FROM \(join.quotedTable) AS \(SQLIdentifier.quote(joinAlias))"
                + " JOIN \(target.quotedTable) AS \(SQLIdentifier.quote(targetAlias))"
                + " ON \(Self.qualified(targetAlias, target.quotedColumn(slot: resolved.targetKey.slot)))"
                + " = \(Self.qualified(joinAlias, join.columns[resolved.targetSlot].quotedName))"
                + " WHERE \(Self.qualified(joinAlias, join.columns[resolved.ownerSlot].quotedName))"
                + " = \(Self.qualified(outer.tableName, outer.quotedColumn(slot: ownerKey.slot)))"
                + (try resolved.liveJoinRows(qualifiedBy: joinAlias))
            if let scope = try target.softDeleteCondition(resolved.scope, qualifier: targetAlias) { sql += " AND \(scope)" }
            try Self.requireSameDatabase(outer, target)
            if let node { sql += " AND \(try renderer.render(node, of: target, as: targetAlias))" }
            return sql + ")"
        }))
    }

    /// `alias."column"`.
    static func qualified(_ table: String, _ quotedColumn: String) -> String {
        "\(SQLIdentifier.quote(table)).\(quotedColumn)"
    }

    /// A filter over the related model `Target` of `relation`: `EXISTS (SELECT 1 FROM
    /// <target> AS _jN WHERE <correlation(_jN)> AND <predicate>)`.
    private static func relatedFilter<Relation, Target: ActiveObject>(
        _ relation: KeyPath<Model, Relation>, _ node: PredicateNode?,
        correlation: @escaping @Sendable (Relation, ModelSchema, inout PredicateRenderer) throws
            -> (ModelSchema, (String) -> String)
    ) -> PredicateNode where Relation: RelationOf<Target> {
        let box = SendableKeyPath(keyPath: relation)
        return .related(RelatedFilter { renderer in
            let outer = renderer.schema
            let value = outer.valueOnPrototype(at: box.keyPath) as! Relation
            let (target, condition) = try correlation(value, outer, &renderer)
            try requireSameDatabase(outer, target)
            let alias = renderer.newAlias()
            var sql = "EXISTS (SELECT 1 FROM \(target.quotedTable) AS \(SQLIdentifier.quote(alias)) WHERE \(condition(alias))"
            if let scope = try target.softDeleteCondition(value.softDeleteScope, qualifier: alias) { sql += " AND \(scope)" }
            if let node { sql += " AND \(try renderer.render(node, of: target, as: alias))" }
            return sql + ")"
        })
    }

    /// The correlation of a has-many or has-one relation: the child's foreign key equals the
    /// outer object's key.
    private static func childCorrelation<Child: ActiveObject>(_: Child.Type, foreignKey: AnyKeyPath, outer: ModelSchema)
        throws -> (ModelSchema, (String) -> String) {
        let schema = try ModelSchema.of(Child.self)
        let slot = try schema.columnSlot(for: foreignKey)
        let key = try outer.requireReferencedKey(for: "joining(\\.\(Child.self))")
        return (schema, { alias in
            "\(qualified(alias, schema.columns[slot].quotedName)) = \(qualified(outer.tableName, outer.quotedColumn(slot: key.slot)))"
        })
    }

    /// A relation joins tables of one database.
    private static func requireSameDatabase(_ outer: ModelSchema, _ target: ModelSchema) throws {
        guard outer.modelType.resolvedDatabase === target.modelType.resolvedDatabase else {
            throw ActiveObjectError.invalidArgument(
                "\(outer.modelName) and \(target.modelName) live in different databases: a query cannot join them")
        }
    }
}

/// The relation structs `joining` accepts, tied to their related model.
protocol RelationOf<Target>: SendableMetatype {
    associatedtype Target: ActiveObject
    /// Which rows of `Target` the relation reads.
    var softDeleteScope: SoftDeleteScope { get }
}

extension BelongsTo: RelationOf {
    typealias Target = Parent
    var softDeleteScope: SoftDeleteScope { scope }
}
extension HasMany: RelationOf {
    typealias Target = Child
    var softDeleteScope: SoftDeleteScope { scope }
}
extension HasOne: RelationOf {
    typealias Target = Child
    var softDeleteScope: SoftDeleteScope { scope }
}
