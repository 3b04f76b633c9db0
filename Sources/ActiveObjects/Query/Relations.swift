// Relations: belongs-to, has-many and has-one over keys of any type (an `id`, a TEXT or UUID
// natural key, optional or not), declared as computed properties of models.

extension ActiveRecord where Self: ActiveObject {
    /// A belongs-to relation through this model's foreign-key column, of any key type:
    /// `var group: BelongsTo<Group> { belongsTo(\.$groupId) }`,
    /// `var customer: BelongsTo<Customer> { belongsTo(\.$customerId) }` (a `String?` key).
    public func belongsTo<Parent: ActiveObject, Key: ColumnValue>(
        _ foreignKey: KeyPath<Self, ColumnReference<Key>>
    ) -> BelongsTo<Parent> {
        BelongsTo(child: self, childType: Self.self, foreignKey: foreignKey)
    }

    /// A has-many relation through the children's foreign-key column, of any key type:
    /// `var people: HasMany<Person> { hasMany(\.$groupId) }`.
    public func hasMany<Child: ActiveObject, Key: ColumnValue>(
        _ foreignKey: KeyPath<Child, ColumnReference<Key>>
    ) -> HasMany<Child> {
        HasMany(parent: self, foreignKey: foreignKey)
    }

    /// A has-one relation through the child's foreign-key column, of any key type:
    /// `var profile: HasOne<Profile> { hasOne(\.$userId) }`.
    public func hasOne<Child: ActiveObject, Key: ColumnValue>(
        _ foreignKey: KeyPath<Child, ColumnReference<Key>>
    ) -> HasOne<Child> {
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
/// let group = try person.group.get()      // one SELECT by key; nil when the key is NULL
/// ```
/// The foreign key holds the parent's key: its `id`, or its natural key (one column).
///
/// A parent soft-deleted (a `Parent` with a `@Column(role: .deletedAt)`) is not there: `get()`
/// gives nil, unless the relation says ``withDeleted()``.
public struct BelongsTo<Parent: ActiveObject> {
    let child: ActiveObject
    let childType: ActiveObject.Type
    let foreignKey: AnyKeyPath
    /// Which parent rows it reads (see ``withDeleted()``).
    var scope = SoftDeleteScope.visible

    func key(_ schema: ModelSchema) throws -> PreloadKey {
        PreloadKey(kind: .belongsTo, relatedType: ObjectIdentifier(Parent.self), slot: try schema.columnSlot(for: foreignKey),
                   scope: scope)
    }

    /// The relation reading the parent even when it is soft-deleted:
    /// `try comment.post.withDeleted().get()`. Declared so in the model
    /// (`var anyPost: BelongsTo<Post> { belongsTo(\.$postId).withDeleted() }`), it also applies
    /// to `including(\.anyPost)` and `joining(\.anyPost)`. For a `Parent` without a
    /// `@Column(role: .deletedAt)`, it changes nothing.
    public func withDeleted() -> BelongsTo {
        var copy = self
        copy.scope = .withDeleted
        return copy
    }

    /// The relation reading the parent only when it is soft-deleted (`get()` is nil otherwise).
    /// `get()` throws ``ActiveObjectError/invalidArgument(_:)`` for a `Parent` without a
    /// `@Column(role: .deletedAt)`.
    public func onlyDeleted() -> BelongsTo {
        var copy = self
        copy.scope = .onlyDeleted
        return copy
    }

    /// The parent object, or nil when the foreign key is NULL or points to no row (or to a
    /// soft-deleted row, unless ``withDeleted()``).
    /// Issues no SQL when the relation was preloaded with `including(_:)`.
    /// - Throws: ``ActiveObjectError/invalidModel(model:reason:)`` when the parent's key is not
    ///   one column; the errors of a fetch (``DatabaseError``, `typeMismatch`…).
    public func get() throws -> Parent? {
        let schema = try ModelSchema.of(childType)
        let key = try key(schema)
        let value = try child.columnValue(atSlot: key.slot, schema: schema)
        // A preloaded parent counts only while the key still points at it.
        if let preloaded = child.observedPreloadedRelations?[key] as? PreloadedParent, preloaded.key == value {
            return preloaded.parent as? Parent
        }
        return try Self.parent(for: value, scope: scope)
    }

    /// The parent whose key is `value` (nil for NULL), among the rows of `scope`.
    static func parent(for value: DatabaseValue, scope: SoftDeleteScope) throws -> Parent? {
        guard !value.isNull else { return nil }
        let parentKey = try ModelSchema.of(Parent.self).requireReferencedKey(for: "a belongs-to relation to \(Parent.self)")
        if parentKey.slot < 0, case .integer(let id) = value { return try Parent.loadByID(id, scope: scope) }
        return try Query<Parent>().where([parentKey.name: value]).scoped(scope).limit(1).all().first
    }

    /// Points the foreign key at `parent` (nil clears it); call `save()` on the object to persist.
    /// - Throws: ``ActiveObjectError/recordNotFound(table:id:)`` when `parent` has no key yet
    ///   (never saved); ``ActiveObjectError/invalidValue(table:column:reason:)`` when the
    ///   column cannot hold it (nil into a non-optional key).
    public func set(_ parent: Parent?) throws {
        let schema = try ModelSchema.of(childType)
        let key = try key(schema)
        var value = DatabaseValue.null
        if let parent {
            let parentSchema = try ModelSchema.of(Parent.self)
            guard let parentKey = try parent.referencedKeyValue(schema: parentSchema) else {
                throw ActiveObjectError.recordNotFound(table: Parent.tableName, id: nil)
            }
            value = parentKey
        }
        try child.assignColumnValue(value, atSlot: key.slot, schema: schema)
        child.forgetPreloadedRelation(key)
    }

    /// Async form of ``get()``: the key is read on the caller's actor; a parent preloaded with
    /// `including(_:)` is returned at once, with no SQL, exactly like the synchronous form;
    /// otherwise the parent is fetched on a reader thread.
    /// - Throws: as ``get()``.
    nonisolated(nonsending) public func get() async throws -> Parent? {
        let schema = try ModelSchema.of(childType)
        let key = try key(schema)
        let value = try child.columnValue(atSlot: key.slot, schema: schema)
        if let preloaded = child.observedPreloadedRelations?[key] as? PreloadedParent, preloaded.key == value {
            return preloaded.parent as? Parent
        }
        guard !value.isNull else { return nil }
        let scope = self.scope
        return try await Parent.requireDatabase().perform(.reading) { try Self.parent(for: value, scope: scope) }
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
/// A parent without a key yet (never saved) has no children: `all()` is empty and runs no SQL.
///
/// Children soft-deleted (a `Child` with a `@Column(role: .deletedAt)`) are not among them,
/// unless the relation says ``withDeleted()``. A parent soft-deleted itself — loaded with
/// `Post.all.withDeleted()` — still has its children.
public struct HasMany<Child: ActiveObject> {
    let parent: ActiveObject
    let foreignKey: AnyKeyPath
    /// Which child rows it reads (see ``withDeleted()``).
    var scope = SoftDeleteScope.visible

    func key() throws -> (PreloadKey, ModelSchema) {
        let schema = try ModelSchema.of(Child.self)
        let key = PreloadKey(kind: .hasMany, relatedType: ObjectIdentifier(Swift.type(of: parent)),
                             slot: try schema.columnSlot(for: foreignKey), scope: scope)
        return (key, schema)
    }

    /// The relation with the soft-deleted children too: `try post.comments.withDeleted().all()`,
    /// `post.comments.withDeleted().where(\.$flagged == true)`. Declared so in the model
    /// (`var allComments: HasMany<Comment> { hasMany(\.$postId).withDeleted() }`), it also
    /// applies to `including(\.allComments)` and `joining(\.allComments)`. For a `Child`
    /// without a `@Column(role: .deletedAt)`, it changes nothing.
    public func withDeleted() -> HasMany {
        var copy = self
        copy.scope = .withDeleted
        return copy
    }

    /// The relation with only the soft-deleted children: `try post.comments.onlyDeleted().all()`.
    /// Its reads throw ``ActiveObjectError/invalidArgument(_:)`` for a `Child` without a
    /// `@Column(role: .deletedAt)`.
    public func onlyDeleted() -> HasMany {
        var copy = self
        copy.scope = .onlyDeleted
        return copy
    }

    /// The children as a query, to refine: `group.people.query.order(by: \.$name)`.
    /// For a parent without a key it matches nothing. It reads the relation's rows: not the
    /// soft-deleted ones, unless ``withDeleted()``.
    public var query: Query<Child> {
        Query<Child>().adding(childrenFilter(of: parent, through: foreignKey, in: Child.self)).scoped(scope)
    }

    /// All children (in primary-key order). No SQL when preloaded with `including(_:)` or when
    /// the parent has no key.
    /// - Throws: the errors of a fetch.
    public func all() throws -> [Child] {
        let (key, _) = try key()
        if let preloaded = parent.observedPreloadedRelations?[key] as? [Child] { return preloaded }
        guard try parentKeyValue(parent) != nil else { return [] }
        return try query.orderedByKeyIfUnordered.all()
    }

    /// The number of children (no SQL when preloaded).
    /// - Throws: the errors of a query.
    public func count() throws -> Int {
        let (key, _) = try key()
        if let preloaded = parent.observedPreloadedRelations?[key] as? [Child] { return preloaded.count }
        guard try parentKeyValue(parent) != nil else { return 0 }
        return try query.count()
    }

    /// Async form of ``all()``: children preloaded with `including(_:)` are returned at once,
    /// with no SQL, exactly like the synchronous form; otherwise they are fetched on a reader
    /// thread.
    /// - Throws: as ``all()``.
    nonisolated(nonsending) public func all() async throws -> [Child] {
        let (key, _) = try key()
        if let preloaded = parent.observedPreloadedRelations?[key] as? [Child] { return preloaded }
        guard try parentKeyValue(parent) != nil else { return [] }
        let query = self.query.orderedByKeyIfUnordered
        return try await query.all()
    }

    /// Async form of ``count()`` (no SQL when preloaded).
    /// - Throws: as ``count()``.
    nonisolated(nonsending) public func count() async throws -> Int {
        let (key, _) = try key()
        if let preloaded = parent.observedPreloadedRelations?[key] as? [Child] { return preloaded.count }
        guard try parentKeyValue(parent) != nil else { return 0 }
        let query = self.query
        return try await query.count()
    }

    /// The children matching a predicate, as a query.
    public func `where`(_ predicate: QueryPredicate<Child>) -> Query<Child> { query.where(predicate) }
    /// The children matching a criteria dictionary, as a query.
    public func `where`(_ criteria: [String: Any?]) -> Query<Child> { query.where(criteria) }
    /// The children matching an SQL fragment, as a query.
    public func `where`(_ sql: String, _ arguments: (any ColumnValue)?...) -> Query<Child> {
        query.where(sql, arguments: arguments)
    }
    /// The children matching an SQL fragment with an array of arguments, as a query:
    /// `group.people.where("age > ?", arguments: [30])`.
    public func `where`(_ sql: String, arguments: [(any ColumnValue)?]) -> Query<Child> {
        query.where(sql, arguments: arguments)
    }
    /// The children matching a typed comparison, as a query.
    public func `where`<V>(_ column: KeyPath<Child, ColumnReference<V>>, _ comparison: ColumnOperator<V>) -> Query<Child> {
        query.where(column, comparison)
    }

    /// Makes `child` one of the children: sets its foreign key and saves it. A parent that was
    /// never saved is saved first; both writes happen in one transaction. When anything throws,
    /// nothing is written and both objects keep their previous state (a new parent stays new).
    /// - Throws: the errors of `save()`; ``ActiveObjectError/noDatabase(model:)``.
    public func add(_ child: Child) throws {
        let (key, schema) = try key()
        try attach(child, to: parent, slot: key.slot, schema: schema)
        parent.forgetPreloadedRelation(key)
    }
}

/// The single child of an object, through the child's foreign-key column (ormapper's has_one).
///
/// ```swift
/// var profile: HasOne<Profile> { hasOne(\.$userId) }
/// let profile = try user.profile.get()
/// ```
/// A child soft-deleted (a `Child` with a `@Column(role: .deletedAt)`) is not there, unless
/// the relation says ``withDeleted()``.
public struct HasOne<Child: ActiveObject> {
    let parent: ActiveObject
    let foreignKey: AnyKeyPath
    /// Which child rows it reads (see ``withDeleted()``).
    var scope = SoftDeleteScope.visible

    func key(_ schema: ModelSchema) throws -> PreloadKey {
        PreloadKey(kind: .hasOne, relatedType: ObjectIdentifier(Swift.type(of: parent)), slot: try schema.columnSlot(for: foreignKey),
                   scope: scope)
    }

    /// The relation reading the child even when it is soft-deleted:
    /// `try user.profile.withDeleted().get()`. Declared so in the model, it also applies to
    /// `including(_:)` and `joining(_:where:)`. For a `Child` without a
    /// `@Column(role: .deletedAt)`, it changes nothing.
    public func withDeleted() -> HasOne {
        var copy = self
        copy.scope = .withDeleted
        return copy
    }

    /// The relation reading only a soft-deleted child. `get()` throws
    /// ``ActiveObjectError/invalidArgument(_:)`` for a `Child` without a `@Column(role: .deletedAt)`.
    public func onlyDeleted() -> HasOne {
        var copy = self
        copy.scope = .onlyDeleted
        return copy
    }

    /// The children of the parent as a query, in the relation's soft-delete scope.
    var query: Query<Child> {
        Query<Child>().adding(childrenFilter(of: parent, through: foreignKey, in: Child.self)).scoped(scope)
    }

    /// The child with the lowest primary key pointing at the parent (not soft-deleted, unless
    /// ``withDeleted()``), or nil. No SQL when preloaded or when the parent has no key.
    /// - Throws: the errors of a fetch.
    public func get() throws -> Child? {
        let key = try key(ModelSchema.of(Child.self))
        if let preloaded = parent.observedPreloadedRelations?[key] { return preloaded as? Child }
        guard try parentKeyValue(parent) != nil else { return nil }
        return try query.orderedByKeyIfUnordered.limit(1).all().first
    }

    /// Async form of ``get()``: a child preloaded with `including(_:)` is returned at once,
    /// with no SQL, exactly like the synchronous form.
    /// - Throws: as ``get()``.
    nonisolated(nonsending) public func get() async throws -> Child? {
        let key = try key(ModelSchema.of(Child.self))
        if let preloaded = parent.observedPreloadedRelations?[key] { return preloaded as? Child }
        guard try parentKeyValue(parent) != nil else { return nil }
        let query = self.query.orderedByKeyIfUnordered.limit(1)
        return try await query.all().first
    }
}

/// The key value children's foreign keys hold for `parent` (nil: it has none yet).
func parentKeyValue(_ parent: ActiveObject) throws -> DatabaseValue? {
    let schema = try ModelSchema.of(Swift.type(of: parent))
    _ = try schema.requireReferencedKey(for: "a has-many or has-one relation of \(schema.modelName)")
    return try parent.referencedKeyValue(schema: schema)
}

/// `foreignKey = <parent's key>`, or a filter matching nothing for a parent without a key
/// (and for a key path that names no column: the query then throws when it runs).
func childrenFilter<Child: ActiveObject>(of parent: ActiveObject, through foreignKey: AnyKeyPath,
                                         in _: Child.Type) -> PredicateNode {
    do {
        let childSchema = try ModelSchema.of(Child.self)
        let slot = try childSchema.columnSlot(for: foreignKey)
        guard let value = try parentKeyValue(parent) else { return .sql("0", []) }
        return .compare(.name(childSchema.columns[slot].name), "=", value)
    } catch {
        return .failure(error)
    }
}

/// Sets `child`'s foreign key (at `slot`) to `parent`'s key and saves it, saving a new parent
/// first, in one transaction; on failure both objects get back their state.
func attach(_ child: ActiveObject, to parent: ActiveObject, slot: Int, schema: ModelSchema) throws {
    let parentType = Swift.type(of: parent)
    guard let database = parentType.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: "\(parentType)") }
    let parentSnapshot = parent.stateSnapshot()
    let childSnapshot = child.stateSnapshot()
    let previous = try child.columnValue(atSlot: slot, schema: schema)
    do {
        try database.transaction {
            if try parentKeyValue(parent) == nil || parent.recordState == .new { try parent.save() }
            guard let key = try parentKeyValue(parent) else {
                throw ActiveObjectError.recordNotFound(table: parentType.tableName, id: nil)
            }
            try child.assignColumnValue(key, atSlot: slot, schema: schema)
            try child.save()
        }
    } catch {
        // The transaction was rolled back: so is what the saves recorded in the objects.
        parent.restoreState(parentSnapshot)
        child.restoreState(childSnapshot)
        try? child.assignColumnValue(previous, atSlot: slot, schema: schema)
        throw error
    }
}

extension ActiveObject {
    /// The bookkeeping a failed relation write restores.
    struct StateSnapshot {
        let id: Int64?
        let state: RecordState
        let rowID: Int64?
    }

    func stateSnapshot() -> StateSnapshot { StateSnapshot(id: id, state: recordState, rowID: persistedRowID) }

    func restoreState(_ snapshot: StateSnapshot) {
        id = snapshot.id
        recordState = snapshot.state
        persistedRowID = snapshot.rowID
    }
}

extension ActiveRecord where Self: ActiveObject {
    /// The object with this rowid among the rows of `scope` (used by relations).
    static func loadByID(_ id: Int64, scope: SoftDeleteScope) throws -> Self? { try find(id: id, scope: scope) }
}
