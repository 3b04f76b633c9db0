extension ActiveObject: Hashable {
    /// Whether two objects stand for the same saved row: they are of the same class and hold
    /// the row with the same primary key, as it was last loaded or saved (the rowid, or the
    /// natural or composite key before any unsaved change to it). An object that holds no row
    /// (new, deleted, or loaded without its key) equals only itself.
    ///
    /// So a row fetched twice gives two equal objects, `Set<Note>` and `List(selection:)` work,
    /// and a new object is distinct from every other until it is saved. As with Rails' records
    /// and SwiftData's models, saving a new object changes its identity (and hash): do not keep a
    /// new object in a `Set` or as a dictionary key across its first `save()`.
    public static func == (lhs: ActiveObject, rhs: ActiveObject) -> Bool {
        if lhs === rhs { return true }
        guard Swift.type(of: lhs) == Swift.type(of: rhs), let left = lhs.savedRowIdentity,
              let right = rhs.savedRowIdentity else { return false }
        return left == right
    }

    /// Hashes the class and the saved key (see ``==(_:_:)``), or the object's identity when it
    /// holds no row.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(Swift.type(of: self)))
        if let identity = savedRowIdentity {
            hasher.combine(identity)
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }

    /// The key of the row the object holds, as the row holds it; nil when it holds none.
    private var savedRowIdentity: [DatabaseValue]? {
        guard recordState == .persisted, let schema = try? ModelSchema.of(Swift.type(of: self)) else { return nil }
        switch schema.key {
        case .rowID:
            return persistedRowID.map { [.integer($0)] }
        case .columns:
            let context = ValueContext(dateStrategy: schema.dateStrategy ?? .iso8601Text)
            return try? persistedKeyValues(schema: schema, context: context)
        }
    }
}
