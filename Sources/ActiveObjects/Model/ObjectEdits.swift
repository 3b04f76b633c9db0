import Observation

/// Change tracking, per object: the values the `@Column` properties assigned since the last
/// load or save had before their first such assignment.
///
/// An object that holds what its row holds (loaded, or saved) keeps one of these from its first
/// assignment on (``ActiveObject/edits``); a new object, or an object nobody edited, has none,
/// so a fetched object carries no bookkeeping at all. A property counts as changed when its
/// value now encodes differently from the value kept here: assigning an equal value, or
/// assigning the old value back, is no change.
///
/// Properties are identified by their byte offset in the object (what the setter knows, and
/// what the schema's accessors hold).
struct ObjectEdits {
    /// The value before, by property offset.
    private(set) var originals: [Int: Any] = [:]

    /// The value the property at `offset` had before its first assignment, or nil when it was
    /// not assigned.
    func original(atOffset offset: Int) -> Any? { originals[offset] }

    /// Remembers `value` as the value before, unless the property already has one.
    mutating func noteFirstAssignment(atOffset offset: Int, before value: @autoclosure () -> Any) {
        if originals[offset] == nil { originals[offset] = value() }
    }

    /// Forgets the value before of the property at `offset`: it holds what the row holds.
    mutating func forget(atOffset offset: Int) { originals[offset] = nil }

    /// Sets the value before of the property at `offset` (async writes: the value written).
    mutating func setOriginal(_ value: Any, atOffset offset: Int) { originals[offset] = value }

    /// Takes the values before of `older`, kept when an earlier write was planned, over this
    /// record's (a rollback: the row holds again what it held before that write); keeps this
    /// record's values before of the properties `older` has none for (assigned after it).
    mutating func adoptOriginals(of older: ObjectEdits) {
        originals.merge(older.originals) { _, olderValue in olderValue }
    }

    var isEmpty: Bool { originals.isEmpty }
}

/// What only some objects need, boxed (see ``ActiveObject/extras``).
final class ObjectExtras {
    @exclusivity(unchecked) var preloadedRelations: [PreloadKey: Any]?
    @exclusivity(unchecked) var edits: ObjectEdits?
    @exclusivity(unchecked) var registrar: ObservationRegistrar?
}

/// The bits of ``ActiveObject/assignmentBookkeeping``.
@usableFromInline
enum AssignmentBookkeeping {
    /// The object holds what a row holds: the first assignment of a property remembers the
    /// value before (``ObjectEdits``).
    static let tracksEdits: UInt8 = 1 << 0
    /// The object has observers (an observation registrar): an assignment of a different value
    /// notifies them.
    static let observed: UInt8 = 1 << 1
}
