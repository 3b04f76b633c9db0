import Foundation

extension ActiveObject {
    /// Makes this object hold what `loaded` (a fresh object of the same class, read from the
    /// row this one holds) holds, in place, property by property: observers of a property are
    /// told only when its value changes (§16). Used by live results (§17), on the isolation
    /// that consumes them.
    ///
    /// A column the user assigned and has not saved keeps the user's value; the value it is
    /// compared with (what the row holds) becomes the new row's, so the object still
    /// `hasChanges` — unless the row now holds what the user typed. With `relations`, the
    /// relations `loaded` preloaded (`including`) replace this object's, and whoever read them
    /// in a tracking scope is told.
    ///
    /// With optimistic locking (a `.lockVersion` column), an object with unsaved edits keeps
    /// the version it was loaded with: its edits were made on the older row, so saving them
    /// must throw ``ActiveObjectError/staleObject(table:key:)`` rather than silently overwrite
    /// the newer one.
    ///
    /// - Returns: whether any value of the row changed (a column, or the row behind an edit).
    final func absorbRow(of loaded: ActiveObject, schema: ModelSchema, relations: Bool) -> Bool {
        var changedOffsets: [Int] = []
        var originalsChanged = false
        var edits = self.edits
        let keptVersion = edits?.isEmpty == false ? schema.roles.lockVersion.map { schema.accessors[$0].valueOffset } : nil
        withUnsafeObjectPointer { base in
            loaded.withUnsafeObjectPointer { source in
                for accessor in schema.accessors {
                    let offset = accessor.valueOffset
                    if offset == keptVersion { continue }
                    if var pending = edits, let original = pending.original(atOffset: offset) {
                        // The user's unsaved value stays; the row's new value is what it changes.
                        let rowValue = accessor.value(from: source)
                        if !Self.encodeSame(original, rowValue, accessor: accessor) {
                            pending.setOriginal(rowValue, atOffset: offset)
                            edits = pending
                            originalsChanged = true
                        }
                    } else if !accessor.holdsSameValue(in: base, as: source) {
                        changedOffsets.append(offset)
                    }
                }
            }
        }
        notifyingObservers(ofOffsets: changedOffsets, id: false, changes: originalsChanged) {
            if !changedOffsets.isEmpty {
                withUnsafeObjectPointer { base in
                    loaded.withUnsafeObjectPointer { source in
                        for accessor in schema.accessors where changedOffsets.contains(accessor.valueOffset) {
                            accessor.copyValue(from: source, to: base)
                        }
                    }
                }
            }
            if originalsChanged { self.edits = edits }
        }
        if relations {
            if isObserved, let registrar = observationRegistrar {
                registrar.willSet(self, keyPath: ObservedProperty.relations)
                preloadedRelations = loaded.preloadedRelations
                registrar.didSet(self, keyPath: ObservedProperty.relations)
            } else {
                preloadedRelations = loaded.preloadedRelations
            }
        }
        return !changedOffsets.isEmpty || originalsChanged
    }

    /// Whether two values of a column encode alike (the comparison change tracking uses).
    private static func encodeSame(_ left: Any, _ right: Any, accessor: ColumnAccessor) -> Bool {
        let context = ValueContext(dateStrategy: .iso8601Text)
        guard let a = try? accessor.encodeOriginal(left, context: context),
              let b = try? accessor.encodeOriginal(right, context: context) else { return false }
        return a == b
    }
}
