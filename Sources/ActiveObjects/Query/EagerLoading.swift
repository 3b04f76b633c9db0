// Eager loading: `including(_:)` loads a relation for every object of a query in a fixed
// number of extra queries (one per relation; two for many-to-many), whatever the number of
// objects and the type of the keys. Each relation loads in its own soft-delete scope (the one
// its declaration gives: soft-deleted rows left out unless it says `withDeleted()`), whatever
// the scope of the query whose objects own it.

extension Query {
    /// Loads each object's parent along with the query, in one extra SELECT
    /// (`WHERE key IN (…)`) instead of one per object. `person.group.get()` then runs no SQL.
    /// A soft-deleted parent is not loaded (`get()` gives nil) unless the relation is declared
    /// `withDeleted()`.
    ///
    /// ```swift
    /// let people = try Person.where(["active": true]).including(\.group).all()   // 2 SELECTs
    /// ```
    public func including<Parent>(_ relation: KeyPath<Model, BelongsTo<Parent>>) -> Query {
        let box = SendableKeyPath(keyPath: relation)
        return adding(Preloader { objects, access in
            let sample = objects[0][keyPath: box.keyPath as! KeyPath<Model, BelongsTo<Parent>>]
            let schema = try ModelSchema.of(sample.childType)
            let key = try sample.key(schema)
            let values = try objects.map { try $0.columnValue(atSlot: key.slot, schema: schema) }
            let wanted = Array(Set(values.filter { !$0.isNull }))
            let parentSchema = try ModelSchema.of(Parent.self)
            let parentKey = try parentSchema.requireReferencedKey(for: "including(\\.\(Parent.self)")
            let parents = wanted.isEmpty ? []
                : try Query<Parent>().where([parentKey.name: wanted]).scoped(sample.scope).all(reusing: access)
            var byKey: [DatabaseValue: Parent] = [:]
            for parent in parents { byKey[try parent.columnValue(atSlot: parentKey.slot, schema: parentSchema)] = parent }
            for (object, value) in zip(objects, values) {
                object.preloadRelation(PreloadedParent(key: value, parent: byKey[value]), for: key)
            }
        })
    }

    /// Loads each object's children along with the query, in one extra SELECT
    /// (`WHERE foreignKey IN (…)`). `group.people.all()` then runs no SQL. Soft-deleted children
    /// are not loaded unless the relation is declared `withDeleted()`; the children of objects
    /// soft-deleted themselves (a query with `withDeleted()`) are.
    public func including<Child>(_ relation: KeyPath<Model, HasMany<Child>>) -> Query {
        let box = SendableKeyPath(keyPath: relation)
        return adding(Preloader { objects, access in
            let (key, schema) = try objects[0][keyPath: box.keyPath as! KeyPath<Model, HasMany<Child>>].key()
            let (owners, children) = try Self.loadChildren(of: objects, slot: key.slot, schema: schema, as: Child.self,
                                                          scope: key.scope, in: access)
            for (object, value) in owners {
                object.preloadRelation(value.flatMap { children[$0] } ?? [Child](), for: key)
            }
        })
    }

    /// Loads each object's has-one child along with the query, in one extra SELECT. A
    /// soft-deleted child is not loaded unless the relation is declared `withDeleted()`.
    public func including<Child>(_ relation: KeyPath<Model, HasOne<Child>>) -> Query {
        let box = SendableKeyPath(keyPath: relation)
        return adding(Preloader { objects, access in
            let schema = try ModelSchema.of(Child.self)
            let key = try objects[0][keyPath: box.keyPath as! KeyPath<Model, HasOne<Child>>].key(schema)
            let (owners, children) = try Self.loadChildren(of: objects, slot: key.slot, schema: schema, as: Child.self,
                                                          scope: key.scope, in: access)
            for (object, value) in owners {
                // The lowest primary key wins (the children come in key order).
                object.preloadRelation(value.flatMap { children[$0]?.first } as Any, for: key)
            }
        })
    }

    /// Loads each object's related objects of a many-to-many relation along with the query,
    /// in two extra SELECTs (the join rows, then the targets). `playlist.tracks.all()` then
    /// runs no SQL. Soft-deleted join rows relate nothing; soft-deleted targets are not loaded
    /// unless the relation is declared `withDeleted()`.
    public func including<Target>(_ relation: KeyPath<Model, HasManyThrough<Target>>) -> Query {
        let box = SendableKeyPath(keyPath: relation)
        return adding(Preloader { objects, access in
            let resolved = try objects[0][keyPath: box.keyPath as! KeyPath<Model, HasManyThrough<Target>>].resolve()
            let ownerValues = try objects.map { try parentKeyValue($0) }
            let wanted = Array(Set(ownerValues.compactMap { $0 }))
            var targetsByOwner: [DatabaseValue: [DatabaseValue]] = [:]
            var targets: [DatabaseValue: Target] = [:]
            if !wanted.isEmpty {
                let join = resolved.join
                let rows = try join.modelType.objects(where: join.columns[resolved.ownerSlot].name, in: wanted, reusing: access)
                var targetKeys = Set<DatabaseValue>()
                for row in rows {
                    let owner = try row.columnValue(atSlot: resolved.ownerSlot, schema: join)
                    let target = try row.columnValue(atSlot: resolved.targetSlot, schema: join)
                    targetsByOwner[owner, default: []].append(target)
                    targetKeys.insert(target)
                }
                if !targetKeys.isEmpty {
                    let query = Query<Target>().where([resolved.targetKey.name: Array(targetKeys)]).scoped(resolved.scope)
                    for target in try query.all(reusing: access) {
                        targets[try target.columnValue(atSlot: resolved.targetKey.slot, schema: resolved.target)] = target
                    }
                }
            }
            for (object, value) in zip(objects, ownerValues) {
                let keys = value.flatMap { targetsByOwner[$0] } ?? []
                // Each target once, in primary-key order (what `all()` returns).
                var seen = Set<DatabaseValue>()
                let related = keys.filter { seen.insert($0).inserted }.compactMap { targets[$0] }
                object.preloadRelation(try Self.sortedByKey(related, schema: resolved.target), for: resolved.preloadKey)
            }
        })
    }

    /// The children of `owners` through the column at `slot` of `Child`, among the rows of
    /// `scope`, grouped by owner key, in the children's key order; with each owner's key.
    static func loadChildren<Child: ActiveObject>(of owners: [Model], slot: Int, schema: ModelSchema, as _: Child.Type,
                                                  scope: SoftDeleteScope, in access: Access)
        throws -> ([(Model, DatabaseValue?)], [DatabaseValue: [Child]]) {
        let values = try owners.map { ($0, try parentKeyValue($0)) }
        let wanted = Array(Set(values.compactMap(\.1)))
        let children = wanted.isEmpty ? []
            : try Query<Child>().where([schema.columns[slot].name: wanted]).scoped(scope).orderedByKeyIfUnordered
                .all(reusing: access)
        var byOwner: [DatabaseValue: [Child]] = [:]
        for child in children {
            byOwner[try child.columnValue(atSlot: slot, schema: schema), default: []].append(child)
        }
        return (values, byOwner)
    }

    /// `objects` in primary-key order (rowid, or the natural key's stored values).
    static func sortedByKey<T: ActiveObject>(_ objects: [T], schema: ModelSchema) throws -> [T] {
        let slots = schema.keySlots.isEmpty ? [-1] : schema.keySlots
        let keyed = try objects.map { object in (object, try slots.map { try object.columnValue(atSlot: $0, schema: schema) }) }
        return keyed.sorted { DatabaseValue.lexicographicallyPrecedes($0.1, $1.1) }.map(\.0)
    }

    func adding(_ preloader: Preloader<Model>) -> Query {
        var copy = self
        copy.preloaders.append(preloader)
        return copy
    }

    /// Loads the relations of `including` for `objects`, with the access they were read with.
    func preload(_ objects: [Model], in access: Access) throws {
        guard !objects.isEmpty else { return }
        for preloader in preloaders { try preloader.load(objects, access) }
    }
}

extension ActiveRecord where Self: ActiveObject {
    /// A query that eager-loads a belongs-to relation: `Person.including(\.group).all()`.
    public static func including<Parent>(_ relation: KeyPath<Self, BelongsTo<Parent>>) -> Query<Self> {
        Query<Self>().including(relation)
    }
    /// A query that eager-loads a has-many relation: `Group.including(\.people).all()`.
    public static func including<Child>(_ relation: KeyPath<Self, HasMany<Child>>) -> Query<Self> {
        Query<Self>().including(relation)
    }
    /// A query that eager-loads a has-one relation.
    public static func including<Child>(_ relation: KeyPath<Self, HasOne<Child>>) -> Query<Self> {
        Query<Self>().including(relation)
    }
    /// A query that eager-loads a many-to-many relation: `Playlist.including(\.tracks).all()`.
    public static func including<Target>(_ relation: KeyPath<Self, HasManyThrough<Target>>) -> Query<Self> {
        Query<Self>().including(relation)
    }
}

extension ActiveObject {
    /// The objects of this class — the dynamic one: a model chosen at run time — whose
    /// `column` is one of `values` (not soft-deleted: join rows of a many-to-many relation).
    /// (A generic function called with an `ActiveObject.Type` value would be specialized for
    /// `ActiveObject` itself.)
    class func objects(where column: String, in values: [DatabaseValue], reusing access: Access) throws -> [ActiveObject] {
        try Query<Self>().where([column: values]).all(reusing: access)
    }
}

extension DatabaseValue {
    /// SQLite's order of stored values (NULL, numbers, text, blob), compared element by element.
    static func lexicographicallyPrecedes(_ lhs: [DatabaseValue], _ rhs: [DatabaseValue]) -> Bool {
        for (left, right) in zip(lhs, rhs) where left != right {
            return left.sortsBefore(right)
        }
        return lhs.count < rhs.count
    }

    private var sortClass: Int {
        switch self {
        case .null: return 0
        case .integer, .real: return 1
        case .text: return 2
        case .blob: return 3
        }
    }

    /// Whether SQLite's `ORDER BY` puts `self` before `other` (BINARY collation for text).
    func sortsBefore(_ other: DatabaseValue) -> Bool {
        switch (self, other) {
        case let (.integer(a), .integer(b)): return a < b
        case let (.real(a), .real(b)): return a < b
        case let (.integer(a), .real(b)): return Double(a) < b
        case let (.real(a), .integer(b)): return a < Double(b)
        case let (.text(a), .text(b)): return Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
        case let (.blob(a), .blob(b)): return a.lexicographicallyPrecedes(b)
        default: return sortClass < other.sortClass
        }
    }
}
