// What the relations share: how an object's column is read and written as a database value
// (keys of any type), and how preloaded relations are stored in the objects.

/// Identifies a preloaded relation on an object.
struct PreloadKey: Hashable {
    enum Kind { case belongsTo, hasMany, hasOne, through }
    let kind: Kind
    /// The other model of the relation.
    let relatedType: ObjectIdentifier
    /// The foreign-key column's slot (in the child, or in the join model).
    let slot: Int
    /// For many-to-many: the join model's column pointing at the target.
    let secondSlot: Int
    /// The relation's soft-delete scope: a relation declared `withDeleted()` is loaded apart.
    let scope: SoftDeleteScope
    init(kind: Kind, relatedType: ObjectIdentifier, slot: Int, secondSlot: Int = 0, scope: SoftDeleteScope = .visible) {
        (self.kind, self.relatedType, self.slot, self.secondSlot, self.scope) = (kind, relatedType, slot, secondSlot, scope)
    }

    /// This relation in every soft-delete scope (what a write through it makes stale).
    var inEveryScope: [PreloadKey] {
        SoftDeleteScope.allCases.map {
            PreloadKey(kind: kind, relatedType: relatedType, slot: slot, secondSlot: secondSlot, scope: $0)
        }
    }
}

/// A parent loaded by `including(_:)`, with the foreign key it was loaded for: when the key
/// changes afterwards, `get()` loads the new parent instead.
struct PreloadedParent {
    let key: DatabaseValue
    let parent: ActiveObject?
}

/// Loads related objects for a list of parents in a fixed number of queries (see
/// `Query.including`), with the access the parents were read with (one snapshot for both).
struct Preloader<Model: ActiveObject>: Sendable {
    let load: @Sendable ([Model], Access) throws -> Void
}

extension ActiveObject {
    /// The value of the column at `slot` as the database stores it (`.null` for nil), in the
    /// model's value context. Slot `-1` is `id`.
    func columnValue(atSlot slot: Int, schema: ModelSchema) throws -> DatabaseValue {
        if slot < 0 { return id.map { .integer($0) } ?? .null }
        return try withUnsafeObjectPointer { base in
            do {
                return try schema.accessors[slot].encode(from: base, context: schema.keyContext)
            } catch {
                throw ActiveObjectError.invalidValue(table: schema.tableName, column: schema.columns[slot].name,
                                                     reason: "\(error)")
            }
        }
    }

    /// Stores a value into the column at `slot` the way an assignment to the property does
    /// (so that the next `save()` writes it, and Observation's observers are notified).
    /// Property observers (`didSet`) do not run.
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` when the property
    ///   cannot hold it (NULL into a non-optional key, text into an integer key).
    func assignColumnValue(_ value: DatabaseValue, atSlot slot: Int, schema: ModelSchema) throws {
        if slot < 0 {
            guard case .integer(let id) = value else {
                throw ActiveObjectError.invalidValue(table: schema.tableName, column: schema.primaryKey,
                                                     reason: "the id cannot hold \(value)")
            }
            self.id = id
            return
        }
        let stored = schema.accessors[slot].assign(value, to: self, context: schema.keyContext)
        guard stored else {
            throw ActiveObjectError.invalidValue(table: schema.tableName, column: schema.columns[slot].name,
                                                 reason: "cannot hold \(value)")
        }
    }

    /// Stores a preloaded relation value (`PreloadedParent`, `[Child]`, or an optional child).
    func preloadRelation(_ value: Any, for key: PreloadKey) {
        if preloadedRelations == nil { preloadedRelations = [:] }
        preloadedRelations?[key] = value
    }

    /// Forgets what `including` loaded for the relation of `key`, in every soft-delete scope
    /// (a write through the relation changed it).
    func forgetPreloadedRelation(_ key: PreloadKey) {
        guard preloadedRelations != nil else { return }
        for scoped in key.inEveryScope { preloadedRelations?[scoped] = nil }
    }
}

extension ModelSchema {
    /// The value context keys are encoded in (keys are compared as stored values): the
    /// model's, in its database.
    var keyContext: ValueContext {
        modelType.resolvedDatabase.map { context(in: $0) } ?? ValueContext(dateStrategy: dateStrategy ?? .iso8601Text)
    }

    /// The one column foreign keys to this model name, or the error explaining why there is none.
    func requireReferencedKey(for relation: String) throws -> (slot: Int, name: String) {
        guard let key = referencedKey else {
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "\(relation) needs a key of one column, and \(modelName)'s key is \(modelType.primaryKeys)")
        }
        return key
    }
}
