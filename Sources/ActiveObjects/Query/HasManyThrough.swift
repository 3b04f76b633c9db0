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
public struct HasManyThrough<Target: ActiveObject> {
    let owner: ActiveObject
    let joinType: ActiveObject.Type
    let ownerKey: AnyKeyPath
    let targetKey: AnyKeyPath

    /// The relation's columns, resolved against the three schemas.
    struct Resolved {
        let join: ModelSchema
        let ownerSlot: Int
        let targetSlot: Int
        let target: ModelSchema
        let targetKey: (slot: Int, name: String)
        var preloadKey: PreloadKey {
            PreloadKey(kind: .through, relatedType: ObjectIdentifier(join.modelType), slot: ownerSlot, secondSlot: targetSlot)
        }
    }

    func resolve() throws -> Resolved {
        let join = try ModelSchema.of(joinType)
        let target = try ModelSchema.of(Target.self)
        return Resolved(join: join, ownerSlot: try join.columnSlot(for: ownerKey), targetSlot: try join.columnSlot(for: targetKey),
                        target: target, targetKey: try target.requireReferencedKey(for: "a many-to-many relation to \(Target.self)"))
    }

    /// The related objects as a query, to refine:
    /// `Target WHERE key IN (SELECT targetKey FROM join WHERE ownerKey = ?)`. For an owner
    /// without a key it matches nothing.
    public var query: Query<Target> {
        do {
            let resolved = try resolve()
            guard let ownerValue = try parentKeyValue(owner) else { return Query<Target>().adding(.sql("0", [])) }
            let join = resolved.join
            let sql = "\(resolved.target.quotedColumn(slot: resolved.targetKey.slot)) IN (SELECT "
                + "\(join.columns[resolved.targetSlot].quotedName) FROM \(join.quotedTable) WHERE "
                + "\(join.columns[resolved.ownerSlot].quotedName) = ?)"
            return Query<Target>().adding(.sql(sql, [ownerValue]))
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
                let exists: Int? = try database.scalar(
                    "SELECT 1 FROM \(join.quotedTable) WHERE \(join.columns[resolved.ownerSlot].quotedName) = ? AND \(join.columns[resolved.targetSlot].quotedName) = ?",
                    [ownerValue, targetValue])
                guard exists == nil else { return }
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
        owner.preloadedRelations?[resolved.preloadKey] = nil
    }

    /// Unrelates `target`: deletes the join row(s) between the owner and it, never the target.
    /// - Returns: true when a join row was deleted.
    /// - Throws: ``DatabaseError``; ``ActiveObjectError/misuse(_:)`` inside `db.read`.
    @discardableResult
    public func remove(_ target: Target) throws -> Bool {
        let resolved = try resolve()
        guard let ownerValue = try parentKeyValue(owner),
              let targetValue = try target.referencedKeyValue(schema: resolved.target),
              let database = joinType.resolvedDatabase else { return false }
        let join = resolved.join
        let removed = try database.withAccess(.write) { access -> Int in
            let connection = access.connection
            try connection.execute(
                "DELETE FROM \(join.quotedTable) WHERE \(join.columns[resolved.ownerSlot].quotedName) = ? AND \(join.columns[resolved.targetSlot].quotedName) = ?",
                [ownerValue, targetValue])
            return connection.lastChanges
        }
        owner.preloadedRelations?[resolved.preloadKey] = nil
        return removed > 0
    }
}
