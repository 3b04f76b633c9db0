import Foundation
import Observation

// Models are observable property by property, with the standard library's Observation
// framework, and nothing asked of the model's author (no macro).
//
// - A read of a `@Column`/`@JSONColumn` property or `id` registers with the object's
//   `ObservationRegistrar` when the thread is inside a tracking scope (``TrackingProbe`` tells
//   in a few instructions when it is not). The registrar is created by the first such read:
//   objects nobody observes have none.
// - An assignment of a different value to a property of an object that has a registrar
//   notifies it around the store (``ColumnAssignment``); so do the library's own changes
//   (``ActiveObject/notifyingObservers(ofOffsets:id:_:)``).
// - The registrar files each property under a key path of its own
//   (``ObservedProperty``): `\ActiveObject.[observedProperty: offset]`, where `offset` is where
//   the property lies in the object. Reads and writes made through any static type (`Note`, a
//   subclass, `ActiveObject`) and the library's writes (which know offsets, not key paths) all
//   name a property the same way.

extension ActiveObject: Observable {}

extension ActiveObject {
    /// A property of the object as its observation registrar names it: only used to form the
    /// key paths of ``ObservedProperty``.
    final subscript(observedProperty position: Int) -> Int { position }

    /// Registers a read of the column property stored at `address` with the object's observers
    /// (the getter's slow path, taken only inside a tracking scope, or while ``TrackingProbe``
    /// cannot tell).
    @usableFromInline @inline(never)
    final func observeRead(at address: Int) {
        guard TrackingProbe.isTrackingAfterSettling else { return }
        let offset = address - Int(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        registrarForReads().access(self, keyPath: ObservedProperty.atOffset(offset))
    }

    /// Registers a read of `id`.
    /// The relations preloaded by `including`, read by a relation: inside a tracking scope, the
    /// read is registered, so that a live result replacing them (§17) tells whoever showed them.
    final var observedPreloadedRelations: [PreloadKey: Any]? {
        guard let relations = preloadedRelations else { return nil }
        if TrackingProbe.mayBeTracking, TrackingProbe.isTrackingAfterSettling {
            registrarForReads().access(self, keyPath: ObservedProperty.relations)
        }
        return relations
    }

    final func observeReadOfID() {
        guard TrackingProbe.isTrackingAfterSettling else { return }
        registrarForReads().access(self, keyPath: ObservedProperty.id)
    }

    /// Registers a read of everything a whole-row answer depends on (`hasChanges`,
    /// `changedColumns`, `description`): every column, `id`, and the change tracking.
    final func observeReadOfWholeRow(schema: ModelSchema) {
        guard TrackingProbe.mayBeTracking, TrackingProbe.isTrackingAfterSettling else { return }
        let registrar = registrarForReads()
        registrar.access(self, keyPath: ObservedProperty.id)
        registrar.access(self, keyPath: ObservedProperty.changes)
        for accessor in schema.accessors {
            registrar.access(self, keyPath: ObservedProperty.atOffset(accessor.valueOffset))
        }
    }

    /// The object's registrar, created on first use; marks the object as observed, so that its
    /// setters notify.
    private func registrarForReads() -> ObservationRegistrar {
        if let registrar = observationRegistrar { return registrar }
        let registrar = ObservationRegistrar()
        observationRegistrar = registrar
        assignmentBookkeeping |= AssignmentBookkeeping.observed
        return registrar
    }

    /// Whether the object has observers (a registrar): one bit, read on the hot paths of saves
    /// and fetches before anything touches the registrar. (`ObservationRegistrar` is a
    /// resilient type: code that holds one, even an optional nil one, pays for its layout
    /// being looked up at run time, so that code stays out of line, behind this test.)
    @inline(__always)
    final var isObserved: Bool { assignmentBookkeeping & AssignmentBookkeeping.observed != 0 }

    /// Sets `id`, notifying its observers when the value differs.
    final func assignID(_ newValue: Int64?) {
        guard isObserved, rowID != newValue else {
            rowID = newValue
            return
        }
        notifyingRegistrar(ofOffsets: [], id: true) { rowID = newValue }
    }

    /// Runs `change`, which stores new values into the properties at `offsets` (and into `id`
    /// when `id` is true), between the notifications of their observers. Without observers,
    /// just runs it.
    @inline(__always)
    final func notifyingObservers(ofOffsets offsets: [Int], id: Bool, changes: Bool = false,
                                  _ change: () throws -> Void) rethrows {
        guard isObserved, id || changes || !offsets.isEmpty else { return try change() }
        try notifyingRegistrar(ofOffsets: offsets, id: id, changes: changes, change)
    }

    /// ``notifyingObservers(ofOffsets:id:_:)`` for an observed object; also tells the
    /// observers of ``ObservedProperty/changes`` when `changes` is true.
    @inline(never)
    final func notifyingRegistrar(ofOffsets offsets: [Int], id: Bool, changes: Bool = false,
                                  _ change: () throws -> Void) rethrows {
        guard let registrar = observationRegistrar else { return try change() }
        let keys = offsets.map(ObservedProperty.atOffset) + (id ? [ObservedProperty.id] : [])
            + (changes ? [ObservedProperty.changes] : [])
        for key in keys { registrar.willSet(self, keyPath: key) }
        defer { for key in keys { registrar.didSet(self, keyPath: key) } }
        try change()
    }

    /// Copies every column and the row state of `loaded`, an object of the same class just
    /// filled from the row this object stands for, into this object, notifying the observers
    /// of each property whose value changes (`reload()`).
    final func takeRow(of loaded: ActiveObject, schema: ModelSchema) {
        let changed = !isObserved ? [] : schema.accessors.filter { accessor in
            !withUnsafeObjectPointer { base in loaded.withUnsafeObjectPointer { accessor.holdsSameValue(in: base, as: $0) } }
        }.map(\.valueOffset)
        notifyingObservers(ofOffsets: changed, id: isObserved && id != loaded.id) {
            withUnsafeObjectPointer { base in
                loaded.withUnsafeObjectPointer { source in
                    for accessor in schema.accessors { accessor.copyValue(from: source, to: base) }
                }
            }
            markLoaded(rowID: loaded.rowID, state: loaded.recordState)
            isPartiallyLoaded = loaded.isPartiallyLoaded
        }
    }
}

/// The key paths an object's registrar files its properties under (see the top of this file).
enum ObservedProperty {
    /// The key of `id`. (Key paths are immutable.)
    nonisolated(unsafe) static let id: KeyPath<ActiveObject, Int> = \ActiveObject.[observedProperty: -1]

    /// The key of the object's change tracking (the values before its edits), which
    /// `hasChanges` and `changedColumns` read besides the columns: it changes without any
    /// column changing when a load or save makes the values the row's, or a rollback makes
    /// them pending again.
    nonisolated(unsafe) static let changes: KeyPath<ActiveObject, Int> = \ActiveObject.[observedProperty: -2]

    /// The key of the relations preloaded by `including`, which a live result replaces.
    nonisolated(unsafe) static let relations: KeyPath<ActiveObject, Int> = \ActiveObject.[observedProperty: -3]

    /// The key of the property at byte offset `offset`; made once per offset.
    static func atOffset(_ offset: Int) -> KeyPath<ActiveObject, Int> {
        if let key = keys.withLock({ $0.byOffset[offset] }) { return key }
        let key = \ActiveObject.[observedProperty: offset]
        return keys.withLock { keys in
            if let existing = keys.byOffset[offset] { return existing }
            keys.byOffset[offset] = key
            return key
        }
    }

    private struct Keys: @unchecked Sendable {
        // Safety of @unchecked Sendable: key paths are immutable once made; the dictionary is
        // only touched under the lock of `keys`.
        var byOffset: [Int: KeyPath<ActiveObject, Int>] = [:]
    }

    private static let keys = LockedValue(Keys())
}

/// What an assignment to a `@Column` or `@JSONColumn` property does besides storing the value,
/// for objects that track changes or have observers (the setters store new, unobserved
/// objects' values themselves).
@usableFromInline
enum ColumnAssignment {
    /// Stores `newValue` into the `@Column` property at `address` in `object`.
    @usableFromInline @inline(never)
    static func assign<Value: ColumnValue>(_ newValue: Value, at address: Int, in object: ActiveObject) {
        store(newValue, at: address, in: object) { old in
            if let same = ValueEquality.same(old, newValue) { return !same }
            let context = ValueContext(dateStrategy: .iso8601Text)
            guard let before = try? old.databaseValue(in: context), let after = try? newValue.databaseValue(in: context) else {
                return true
            }
            return !DatabaseValue.sameStoredValue(before, after)
        }
    }

    /// Stores `newValue` into the `@JSONColumn` property at `address` in `object`.
    @usableFromInline @inline(never)
    static func assign<Value: Codable>(_ newValue: Value, at address: Int, in object: ActiveObject) {
        store(newValue, at: address, in: object) { old in
            if let same = ValueEquality.same(old, newValue) { return !same }
            let context = ValueContext(dateStrategy: .iso8601Text)
            guard let before = try? JSONCoding.encode(old, in: context), let after = try? JSONCoding.encode(newValue, in: context) else {
                return true
            }
            return !DatabaseValue.sameStoredValue(before, after)
        }
    }

    /// Remembers the value before (change tracking), then stores, notifying observers around
    /// the store when `differs` says the old value differs from the new one.
    private static func store<Value>(_ newValue: Value, at address: Int, in object: ActiveObject,
                                     differs: (Value) -> Bool) {
        let pointer = UnsafeMutablePointer<Value>(bitPattern: address)!
        let offset = address - Int(bitPattern: Unmanaged.passUnretained(object).toOpaque())
        let bookkeeping = object.assignmentBookkeeping
        if bookkeeping & AssignmentBookkeeping.tracksEdits != 0 {
            object.noteFirstAssignment(atOffset: offset, before: pointer.pointee)
        }
        if bookkeeping & AssignmentBookkeeping.observed != 0, let registrar = object.observationRegistrar,
           differs(pointer.pointee) {
            let key = ObservedProperty.atOffset(offset)
            registrar.willSet(object, keyPath: key)
            pointer.pointee = newValue
            registrar.didSet(object, keyPath: key)
        } else {
            pointer.pointee = newValue
        }
    }
}

/// Equality of two values of a type known only to be generic: `==` when the type is
/// `Equatable` (nil when it is not).
enum ValueEquality {
    static func same<Value>(_ first: Value, _ second: Value) -> Bool? {
        guard let first = first as? any Equatable else { return nil }
        return first.isEqual(toValue: second)
    }
}

private extension Equatable {
    func isEqual(toValue other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
