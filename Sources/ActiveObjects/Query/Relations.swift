// Relations: belongs-to, has-many and has-one, declared as computed properties of models,
// and their eager loading with `Query.including(_:)`.

/// Identifies a preloaded relation on an object: the foreign-key column and the kind.
struct PreloadKey: Hashable {
    let foreignKeySlot: Int
    let relatedType: ObjectIdentifier
    let kind: Kind
    enum Kind { case belongsTo, hasMany, hasOne }
}

/// A parent loaded by `including(_:)`, with the foreign key it was loaded for: when the key
/// changes afterwards, `get()` loads the new parent instead.
struct PreloadedParent {
    let key: Int64?
    let parent: ActiveObject?
}

/// Loads related objects for a list of parents in one query (see `Query.including`).
struct Preloader<Model: ActiveObject>: Sendable {
    let load: @Sendable ([Model]) throws -> Void
}

extension ActiveObject {
    /// The integer value of the column at `slot` (nil for NULL).
    func integerValue(atSlot slot: Int, schema: ModelSchema) throws -> Int64? {
        let value = try withUnsafeObjectPointer { base in
            try schema.columns[slot].accessor.encode(from: base, context: ValueContext())
        }
        switch value {
        case .integer(let int): return int
        case .null: return nil
        default:
            throw ActiveObjectError.typeMismatch(table: schema.tableName, column: schema.columns[slot].name,
                                                 rowID: id, expected: "Int64", found: value.description)
        }
    }

    /// Stores an integer (or NULL) into the column at `slot`.
    func setIntegerValue(_ value: Int64?, atSlot slot: Int, schema: ModelSchema) throws {
        let stored: DatabaseValue = value.map { .integer($0) } ?? .null
        let loaded = withUnsafeObjectPointer { base in
            schema.columns[slot].accessor.assign(stored, into: base, context: ValueContext())
        }
        guard loaded else {
            throw ActiveObjectError.invalidValue(table: schema.tableName, column: schema.columns[slot].name,
                                                 reason: "cannot hold \(stored)")
        }
    }
}

extension ActiveRecord where Self: ActiveObject {
    /// A belongs-to relation through this model's foreign-key column:
    /// `var group: BelongsTo<Group> { belongsTo(\.$groupId) }`.
    public func belongsTo<Parent: ActiveObject>(_ foreignKey: KeyPath<Self, ColumnReference<Int64?>>) -> BelongsTo<Parent> {
        BelongsTo(child: self, childType: Self.self, foreignKey: foreignKey)
    }

    /// A belongs-to relation through a non-optional foreign-key column.
    public func belongsTo<Parent: ActiveObject>(_ foreignKey: KeyPath<Self, ColumnReference<Int64>>) -> BelongsTo<Parent> {
        BelongsTo(child: self, childType: Self.self, foreignKey: foreignKey)
    }

    /// A has-many relation through the children's foreign-key column:
    /// `var people: HasMany<Person> { hasMany(\.$groupId) }`.
    public func hasMany<Child: ActiveObject>(_ foreignKey: KeyPath<Child, ColumnReference<Int64?>>) -> HasMany<Child> {
        HasMany(parent: self, foreignKey: foreignKey)
    }

    /// A has-many relation through a non-optional foreign-key column of the children.
    public func hasMany<Child: ActiveObject>(_ foreignKey: KeyPath<Child, ColumnReference<Int64>>) -> HasMany<Child> {
        HasMany(parent: self, foreignKey: foreignKey)
    }

    /// A has-one relation through the child's foreign-key column:
    /// `var profile: HasOne<Profile> { hasOne(\.$userId) }`.
    public func hasOne<Child: ActiveObject>(_ foreignKey: KeyPath<Child, ColumnReference<Int64?>>) -> HasOne<Child> {
        HasOne(parent: self, foreignKey: foreignKey)
    }

    /// A has-one relation through a non-optional foreign-key column of the child.
    public func hasOne<Child: ActiveObject>(_ foreignKey: KeyPath<Child, ColumnReference<Int64>>) -> HasOne<Child> {
        HasOne(parent: self, foreignKey: foreignKey)
    }
}

/// The parent of an object, through the object's foreign-key column (ormapper's belongs_to).
///
/// ```swift
/// final class Person: ActiveObject {
///     @Column(references: Group.self, onDelete: .setNull) var groupId: Int64? = nil
///     var group: BelongsTo<Group> { belongsTo(\.$groupId) }
/// }
/// let group = try person.group.get()      // one SELECT by primary key; nil when the key is NULL
/// ```
public struct BelongsTo<Parent: ActiveObject> {
    let child: ActiveObject
    let childType: ActiveObject.Type
    let foreignKey: AnyKeyPath

    func key(_ schema: ModelSchema) throws -> PreloadKey {
        PreloadKey(foreignKeySlot: try schema.slot(for: foreignKey), relatedType: ObjectIdentifier(Parent.self), kind: .belongsTo)
    }

    /// The parent object, or nil when the foreign key is NULL or points to no row.
    /// Issues no SQL when the relation was preloaded with `including(_:)`.
    public func get() throws -> Parent? {
        let schema = try ModelSchema.of(childType)
        let key = try key(schema)
        let parentID = try child.integerValue(atSlot: key.foreignKeySlot, schema: schema)
        // A preloaded parent counts only while the key still points at it.
        if let preloaded = child.preloadedRelations?[key] as? PreloadedParent, preloaded.key == parentID {
            return preloaded.parent as? Parent
        }
        guard let parentID else { return nil }
        return try Parent.loadByID(parentID)
    }

    /// Points the foreign key at `parent` (nil clears it); call `save()` on the object to persist.
    /// - Throws: ``ActiveObjectError/recordNotFound(table:id:)`` when `parent` was never saved.
    public func set(_ parent: Parent?) throws {
        let schema = try ModelSchema.of(childType)
        let key = try key(schema)
        if let parent, parent.id == nil {
            throw ActiveObjectError.recordNotFound(table: Parent.tableName, id: nil)
        }
        try child.setIntegerValue(parent?.id, atSlot: key.foreignKeySlot, schema: schema)
        child.preloadedRelations?[key] = nil
    }
}

/// The children of an object, through the children's foreign-key column (ormapper's has_many).
///
/// ```swift
/// final class Group: ActiveObject {
///     @Column var name = ""
///     var people: HasMany<Person> { hasMany(\.$groupId) }
/// }
/// try group.people.all()                          // SELECT … WHERE "groupId" = ?
/// try group.people.where(\.$age > 30).count()     // any query feature applies
/// try group.people.add(person)                    // sets person.groupId, saves person
/// ```
/// A parent that was never saved has no children: `all()` is empty and runs no SQL.
public struct HasMany<Child: ActiveObject> {
    let parent: ActiveObject
    let foreignKey: AnyKeyPath

    func key() throws -> (PreloadKey, ModelSchema) {
        let schema = try ModelSchema.of(Child.self)
        let key = PreloadKey(foreignKeySlot: try schema.slot(for: foreignKey),
                             relatedType: ObjectIdentifier(Swift.type(of: parent)), kind: .hasMany)
        return (key, schema)
    }

    /// The children as a query, to refine: `group.people.query.order(by: \.$name)`.
    /// For a parent without `id` it matches nothing.
    public var query: Query<Child> {
        var query = Query<Child>()
        if let (key, _) = try? key() {
            let column = ColumnKey.name(Self.columnName(slot: key.foreignKeySlot))
            query.filters.append(parent.id.map { .compare(column, "=", $0) } ?? .sql("0", []))
        } else {
            query.filters.append(.sql("0", []))
        }
        return query
    }

    private static func columnName(slot: Int) -> String {
        (try? ModelSchema.of(Child.self).columns[slot].name) ?? ""
    }

    /// All children (in primary-key order). No SQL when preloaded with `including(_:)` or when
    /// the parent has no `id`.
    public func all() throws -> [Child] {
        let (key, schema) = try key()
        if let preloaded = parent.preloadedRelations?[key] as? [Child] { return preloaded }
        guard parent.id != nil else { return [] }
        return try query.order(by: schema.primaryKey).all()
    }

    /// The number of children (no SQL when preloaded).
    public func count() throws -> Int {
        let (key, _) = try key()
        if let preloaded = parent.preloadedRelations?[key] as? [Child] { return preloaded.count }
        guard parent.id != nil else { return 0 }
        return try query.count()
    }

    /// The children matching a predicate, as a query.
    public func `where`(_ predicate: QueryPredicate<Child>) -> Query<Child> { query.where(predicate) }
    /// The children matching a criteria dictionary, as a query.
    public func `where`(_ criteria: [String: Any?]) -> Query<Child> { query.where(criteria) }
    /// The children matching an SQL fragment, as a query.
    public func `where`(_ sql: String, _ arguments: any ColumnValue...) -> Query<Child> {
        query.where(sql, arguments: arguments)
    }
    /// The children matching a typed comparison, as a query.
    public func `where`<V>(_ column: KeyPath<Child, ColumnReference<V>>, _ comparison: ColumnOperator<V>) -> Query<Child> {
        query.where(column, comparison)
    }

    /// Makes `child` one of the children: sets its foreign key and saves it. A parent that was
    /// never saved is saved first; both writes happen in one transaction. When anything throws,
    /// nothing is written and both objects keep their previous state (a new parent stays new).
    public func add(_ child: Child) throws {
        let (key, schema) = try key()
        let parentType = Swift.type(of: parent)
        guard let database = parentType.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: "\(parentType)") }
        let parentState = (id: parent.id, state: parent.recordState, rowID: parent.persistedRowID)
        let childState = (id: child.id, state: child.recordState, rowID: child.persistedRowID,
                          key: try child.integerValue(atSlot: key.foreignKeySlot, schema: schema))
        do {
            try database.transaction {
                if parent.id == nil { try parent.save() }
                try child.setIntegerValue(parent.id, atSlot: key.foreignKeySlot, schema: schema)
                try child.save()
            }
        } catch {
            // The transaction was rolled back: so is what the saves recorded in the objects.
            parent.id = parentState.id
            parent.recordState = parentState.state
            parent.persistedRowID = parentState.rowID
            child.id = childState.id
            child.recordState = childState.state
            child.persistedRowID = childState.rowID
            try? child.setIntegerValue(childState.key, atSlot: key.foreignKeySlot, schema: schema)
            throw error
        }
        parent.preloadedRelations?[key] = nil
    }
}

/// The single child of an object, through the child's foreign-key column (ormapper's has_one).
///
/// ```swift
/// var profile: HasOne<Profile> { hasOne(\.$userId) }
/// let profile = try user.profile.get()
/// ```
public struct HasOne<Child: ActiveObject> {
    let parent: ActiveObject
    let foreignKey: AnyKeyPath

    /// The child with the lowest primary key pointing at the parent, or nil. No SQL when
    /// preloaded or when the parent has no `id`.
    public func get() throws -> Child? {
        let schema = try ModelSchema.of(Child.self)
        let slot = try schema.slot(for: foreignKey)
        let key = PreloadKey(foreignKeySlot: slot, relatedType: ObjectIdentifier(Swift.type(of: parent)), kind: .hasOne)
        if let preloaded = parent.preloadedRelations?[key] { return preloaded as? Child }
        guard let id = parent.id else { return nil }
        return try Query<Child>().where([schema.columns[slot].name: id]).order(by: schema.primaryKey).first()
    }
}

extension ActiveRecord where Self: ActiveObject {
    /// The object with this primary key (used by relations).
    static func loadByID(_ id: Int64) throws -> Self? { try find(id: id) }
}

// MARK: - Eager loading

extension Query {
    /// Loads each object's parent along with the query, in one extra SELECT
    /// (`WHERE id IN (…)`) instead of one per object. `person.group.get()` then runs no SQL.
    ///
    /// ```swift
    /// let people = try Person.where(["active": true]).including(\.group).all()   // 2 SELECTs
    /// ```
    public func including<Parent>(_ relation: KeyPath<Model, BelongsTo<Parent>>) -> Query {
        let box = SendableKeyPath(keyPath: relation)
        return adding(Preloader { objects in
            let relation = box.keyPath as! KeyPath<Model, BelongsTo<Parent>>
            let sample = objects[0][keyPath: relation]
            let schema = try ModelSchema.of(sample.childType)
            let key = try sample.key(schema)
            var ids: [Int64] = []
            for object in objects {
                if let id = try object.integerValue(atSlot: key.foreignKeySlot, schema: schema) { ids.append(id) }
            }
            let parentSchema = try ModelSchema.of(Parent.self)
            let parents = ids.isEmpty ? [] : try Query<Parent>().where([parentSchema.primaryKey: Array(Set(ids))]).all()
            var byID: [Int64: Parent] = [:]
            for parent in parents { if let id = parent.id { byID[id] = parent } }
            for object in objects {
                let id = try object.integerValue(atSlot: key.foreignKeySlot, schema: schema)
                object.preloadRelation(PreloadedParent(key: id, parent: id.flatMap { byID[$0] }), for: key)
            }
        })
    }

    /// Loads each object's children along with the query, in one extra SELECT
    /// (`WHERE foreignKey IN (…)`). `group.people.all()` then runs no SQL.
    public func including<Child>(_ relation: KeyPath<Model, HasMany<Child>>) -> Query {
        let box = SendableKeyPath(keyPath: relation)
        return adding(Preloader { objects in
            let relation = box.keyPath as! KeyPath<Model, HasMany<Child>>
            let (key, schema) = try objects[0][keyPath: relation].key()
            let column = schema.columns[key.foreignKeySlot]
            let ids = objects.compactMap(\.id)
            let children = ids.isEmpty ? [] : try Query<Child>().where([column.name: ids]).order(by: schema.primaryKey).all()
            var byParent: [Int64: [Child]] = [:]
            for child in children {
                if let parentID = try child.integerValue(atSlot: key.foreignKeySlot, schema: schema) {
                    byParent[parentID, default: []].append(child)
                }
            }
            for object in objects {
                object.preloadRelation(object.id.flatMap { byParent[$0] } ?? [Child](), for: key)
            }
        })
    }

    /// Loads each object's has-one child along with the query, in one extra SELECT.
    public func including<Child>(_ relation: KeyPath<Model, HasOne<Child>>) -> Query {
        let box = SendableKeyPath(keyPath: relation)
        return adding(Preloader { objects in
            let relation = box.keyPath as! KeyPath<Model, HasOne<Child>>
            let sample = objects[0][keyPath: relation]
            let schema = try ModelSchema.of(Child.self)
            let slot = try schema.slot(for: sample.foreignKey)
            let key = PreloadKey(foreignKeySlot: slot, relatedType: ObjectIdentifier(Model.self), kind: .hasOne)
            let ids = objects.compactMap(\.id)
            let children = ids.isEmpty ? [] : try Query<Child>().where([schema.columns[slot].name: ids]).order(by: schema.primaryKey).all()
            var byParent: [Int64: Child] = [:]
            for child in children.reversed() {   // reversed: the lowest primary key wins
                if let parentID = try child.integerValue(atSlot: slot, schema: schema) { byParent[parentID] = child }
            }
            for object in objects {
                object.preloadRelation(object.id.flatMap { byParent[$0] } as Any, for: key)
            }
        })
    }

    private func adding(_ preloader: Preloader<Model>) -> Query {
        var copy = self
        copy.preloaders.append(preloader)
        return copy
    }

    func preload(_ objects: [Model]) throws {
        guard !objects.isEmpty else { return }
        for preloader in preloaders { try preloader.load(objects) }
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
}

extension ActiveObject {
    /// Stores a preloaded relation value (`Optional<Parent>` boxed, or `[Child]`).
    func preloadRelation(_ value: Any, for key: PreloadKey) {
        if preloadedRelations == nil { preloadedRelations = [:] }
        preloadedRelations?[key] = value
    }
}
