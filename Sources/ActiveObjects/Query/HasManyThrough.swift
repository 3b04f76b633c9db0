extension ActiveRecord where Self: ActiveObject {
    /// A many-to-many relation through a join model: its column pointing at this model
    /// (`ownerKey`) and its column pointing at the target (`targetKey`).
    ///
    /// ```swift
    /// final class Playlist: ActiveObject {
    ///     @Column var name = ""
    ///     var tracks: HasManyThrough<Track> { hasMany(through: \PlaylistTrack.$playlistId, \PlaylistTrack.$trackId) }
    /// }
    /// ```
    public func hasMany<Join: ActiveObject, OwnerKey: ColumnValue, TargetKey: ColumnValue, Target: ActiveObject>(
        through ownerKey: KeyPath<Join, ColumnReference<OwnerKey>>,
        _ targetKey: KeyPath<Join, ColumnReference<TargetKey>>
    ) -> HasManyThrough<Target> {
        HasManyThrough(owner: self, joinType: Join.self, ownerKey: ownerKey, targetKey: targetKey)
    }
}

/// The objects of another model related to an object through a join model (many-to-many):
/// playlists and tracks through `playlist_track`.
///
/// ```swift
/// try playlist.tracks.all(); try playlist.tracks.count()
/// try playlist.tracks.where(\.$seconds > 300).all()
/// try playlist.tracks.add(track)        // inserts the join row (saving either side first if new)
/// try playlist.tracks.remove(track)     // deletes the join row, not the track
/// let lists = try Playlist.all.including(\.tracks).all()   // 2 extra queries for any N
/// ```
///
/// Soft delete: targets soft-deleted (a `Target` with a `@Column(role: .deletedAt)`) are not
/// related, unless the relation says ``withDeleted()``; and when the join model has a
/// `@Column(role: .deletedAt)`, a soft-deleted join row relates nothing, whatever the
/// relation's scope (it is a link removed: `remove(_:)` soft-deletes it, `add(_:)` restores
/// it). Join rows removed so are read through the join model itself,
/// `PlaylistTrack.all.withDeleted()`.
public struct HasManyThrough<Target: ActiveObject> {
    let owner: ActiveObject
    let joinType: ActiveObject.Type
    let ownerKey: AnyKeyPath
    let targetKey: AnyKeyPath
    /// Which target rows it reads (see ``withDeleted()``).
    var scope = SoftDeleteScope.visible

    /// The relation's columns, resolved against the three schemas.
    struct Resolved {
        let join: ModelSchema
        let ownerSlot: Int
        let targetSlot: Int
        let target: ModelSchema
        let targetKey: (slot: Int, name: String)
        /// The relation's scope (of the targets).
        let scope: SoftDeleteScope
        var preloadKey: PreloadKey {
            PreloadKey(kind: .through, relatedType: ObjectIdentifier(join.modelType), slot: ownerSlot, secondSlot: targetSlot,
                       scope: scope)
        }
        /// ` AND "deletedAt" IS NULL` when the join model soft-deletes (its column qualified by
        /// `alias` if given), else empty: a soft-deleted join row relates nothing.
        func liveJoinRows(qualifiedBy alias: String? = nil) throws -> String {
            try join.softDeleteCondition(.visible, qualifier: alias).map { " AND " + $0 } ?? ""
        }
    }

    func resolve() throws -> Resolved {
        let join = try ModelSchema.of(joinType)
        let target = try ModelSchema.of(Target.self)
        return Resolved(join: join, ownerSlot: try join.columnSlot(for: ownerKey), targetSlot: try join.columnSlot(for: targetKey),
                        target: target, targetKey: try target.requireReferencedKey(for: "a many-to-many relation to \(Target.self)"),
                        scope: scope)
    }

    /// The relation with the soft-deleted targets too: `try playlist.tracks.withDeleted().all()`.
    /// (Soft-deleted join rows still relate nothing.) Declared so in the model, it also applies
    /// to `including(_:)` and `joining(_:where:)`. For a `Target` without a
    /// `@Column(role: .deletedAt)`, it changes nothing.
    public func withDeleted() -> HasManyThrough {
        var copy = self
        copy.scope = .withDeleted
        return copy
    }

    /// The relation with only the soft-deleted targets (still related by a join row that is not
    /// soft-deleted). Its reads throw ``ActiveObjectError/invalidArgument(_:)`` for a `Target`
    /// without a `@Column(role: .deletedAt)`.
    public func onlyDeleted() -> HasManyThrough {
        var copy = self
        copy.scope = .onlyDeleted
        return copy
    }

    /// The related objects as a query, to refine:
    /// `Target WHERE key IN (SELECT targetKey FROM join WHERE ownerKey = ?)`, in the relation's
    /// soft-delete scope (and without soft-deleted join rows). For an owner without a key it
    /// matches nothing.
    public var query: Query<Target> {
        do {
            let resolved = try resolve()
            guard let ownerValue = try parentKeyValue(owner) else { return Query<Target>().adding(.sql("0", [])).scoped(scope) }
            let join = resolved.join
            let sql = "\(resolved.target.quotedColumn(slot: resolved.targetKey.slot)) IN (SELECT "
                + "\(join.columns[resolved.targetSlot].quotedName) FROM \(join.quotedTable) WHERE "
                + "\(join.columns[resolved.ownerSlot].quotedName) = ?\(try resolved.liveJoinRows()))"
            return Query<Target>().adding(.sql(sql, [ownerValue])).scoped(scope)
        } catch {
            return Query<Target>().adding(.failure(error))
        }
    }

    /// All related objects (in primary-key order). No SQL when preloaded with `including(_:)`
    /// or when the owner has no key.
    /// - Throws: the errors of a fetch.
    public func all() throws -> [Target] {
        if let preloaded = owner.observedPreloadedRelations?[try resolve().preloadKey] as? [Target] { return preloaded }
        guard try parentKeyValue(owner) != nil else { return [] }
        return try query.orderedByKeyIfUnordered.all()
    }

    /// The number of related objects (no SQL when preloaded).
    /// - Throws: the errors of a query.
    public func count() throws -> Int {
        if let preloaded = owner.observedPreloadedRelations?[try resolve().preloadKey] as? [Target] { return preloaded.count }
        guard try parentKeyValue(owner) != nil else { return 0 }
        return try query.count()
    }

    /// Async form of ``all()``: related objects preloaded with `including(_:)` are returned
    /// at once, with no SQL, exactly like the synchronous form.
    /// - Throws: as ``all()``.
    nonisolated(nonsending) public func all() async throws -> [Target] {
        if let preloaded = owner.observedPreloadedRelations?[try resolve().preloadKey] as? [Target] { return preloaded }
        guard try parentKeyValue(owner) != nil else { return [] }
        let query = self.query.orderedByKeyIfUnordered
        return try await query.all()
    }

    /// Async form of ``count()`` (no SQL when preloaded).
    /// - Throws: as ``count()``.
    nonisolated(nonsending) public func count() async throws -> Int {
        if let preloaded = owner.observedPreloadedRelations?[try resolve().preloadKey] as? [Target] { return preloaded.count }
        guard try parentKeyValue(owner) != nil else { return 0 }
        let query = self.query
        return try await query.count()
    }

    /// The related objects matching a predicate, as a query.
    public func `where`(_ predicate: QueryPredicate<Target>) -> Query<Target> { query.where(predicate) }
    /// The related objects matching a criteria dictionary, as a query.
    public func `where`(_ criteria: [String: Any?]) -> Query<Target> { query.where(criteria) }
    /// The related objects matching an SQL fragment, as a query.
    public func `where`(_ sql: String, _ arguments: (any ColumnValue)?...) -> Query<Target> {
        query.where(sql, arguments: arguments)
    }
    /// The related objects matching an SQL fragment with an array of arguments, as a query.
    public func `where`(_ sql: String, arguments: [(any ColumnValue)?]) -> Query<Target> {
        query.where(sql, arguments: arguments)
    }
    /// The related objects matching a typed comparison, as a query.
    public func `where`<V>(_ column: KeyPath<Target, ColumnReference<V>>, _ comparison: ColumnOperator<V>) -> Query<Target> {
        query.where(column, comparison)
    }

    /// Relates `target`: inserts the join row, saving the owner and the target first when they
    /// are new — all in one transaction. Adding an object already related changes nothing.
    /// When anything throws, nothing is written and both objects keep their previous state.
    /// - Throws: the errors of `save()` (validation, constraints…); ``ActiveObjectError/noDatabase(model:)``.
    public func add(_ target: Target) throws {
        let resolved = try resolve()
        if resolved.join.isReadOnly { throw resolved.join.readOnlyError("add(_:) of a join row") }
        guard let database = joinType.resolvedDatabase else { throw ActiveObjectError.noDatabase(model: resolved.join.modelName) }
        let ownerSnapshot = owner.stateSnapshot(), targetSnapshot = target.stateSnapshot()
        do {
            try database.transaction {
                if try parentKeyValue(owner) == nil || owner.recordState == .new { try owner.save() }
                if try target.referencedKeyValue(schema: resolved.target) == nil || target.recordState == .new { try target.save() }
                guard let ownerValue = try parentKeyValue(owner),
                      let targetValue = try target.referencedKeyValue(schema: resolved.target) else {
                    throw ActiveObjectError.recordNotFound(table: resolved.join.tableName, id: nil)
                }
                let join = resolved.join
                let pair = "\(join.columns[resolved.ownerSlot].quotedName) = ? AND \(join.columns[resolved.targetSlot].quotedName) = ?"
                let exists: Int? = try database.scalar(
                    "SELECT 1 FROM \(join.quotedTable) WHERE \(pair)\(try resolved.liveJoinRows())", [ownerValue, targetValue])
                guard exists == nil else { return }
                // A join row soft-deleted (removed) is restored rather than inserted again (a
                // composite key or a UNIQUE pair would refuse a second row).
                if try join.modelType.restoreRows(where: [join.columns[resolved.ownerSlot].name: ownerValue,
                                                          join.columns[resolved.targetSlot].name: targetValue]) > 0 {
                    return
                }
                let row = join.newObject()
                try row.assignColumnValue(ownerValue, atSlot: resolved.ownerSlot, schema: join)
                try row.assignColumnValue(targetValue, atSlot: resolved.targetSlot, schema: join)
                try row.save()
            }
        } catch {
            owner.restoreState(ownerSnapshot)
            target.restoreState(targetSnapshot)
            throw error
        }
        owner.forgetPreloadedRelation(resolved.preloadKey)
    }

    /// Unrelates `target`: deletes the join row(s) between the owner and it, never the target.
    /// When the join model has a `@Column(role: .deletedAt)`, the join rows are soft-deleted
    /// (as `JoinModel.delete(where:)` would: `.updatedAt` and `.lockVersion` too), and a later
    /// ``add(_:)`` restores them. No hooks run.
    /// - Returns: true when a join row was deleted.
    /// - Throws: ``DatabaseError``; ``ActiveObjectError/misuse(_:)`` inside `db.read`.
    @discardableResult
    public func remove(_ target: Target) throws -> Bool {
        let resolved = try resolve()
        if resolved.join.isReadOnly { throw resolved.join.readOnlyError("remove(_:) of a join row") }
        guard let ownerValue = try parentKeyValue(owner),
              let targetValue = try target.referencedKeyValue(schema: resolved.target),
              let database = joinType.resolvedDatabase else { return false }
        let join = resolved.join
        let removed: Int
        if join.roles.deletedAt != nil {
            removed = try join.modelType.deleteRows(where: [join.columns[resolved.ownerSlot].name: ownerValue,
                                                            join.columns[resolved.targetSlot].name: targetValue])
        } else {
            removed = try Query<Target>.runWrite(
                "DELETE FROM \(join.quotedTable) WHERE \(join.columns[resolved.ownerSlot].quotedName) = ? AND \(join.columns[resolved.targetSlot].quotedName) = ?",
                [ownerValue, targetValue], on: database)
        }
        owner.forgetPreloadedRelation(resolved.preloadKey)
        return removed > 0
    }
}

extension ActiveObject {
    /// Deletes the rows of this class — the dynamic one — matching `criteria`, as
    /// `Model.delete(where:)` does (soft for a model with a `.deletedAt` column).
    class func deleteRows(where criteria: [String: Any?]) throws -> Int {
        try Query<Self>().where(criteria).delete(permanently: false)
    }

    /// Restores the soft-deleted rows of this class matching `criteria` (`deletedAt` set to
    /// NULL, `.updatedAt` stamped, `.lockVersion` counted, as `updateAll` does); 0 without a
    /// `.deletedAt` column.
    class func restoreRows(where criteria: [String: Any?]) throws -> Int {
        let schema = try ModelSchema.of(self)
        guard let slot = schema.roles.deletedAt else { return 0 }
        return try Query<Self>().where(criteria).onlyDeleted().updateAll([schema.columns[slot].name: nil])
    }
}
