import Foundation

// The one place where ActiveObjects reaches into an object's memory.
//
// Column values live in the `@Column` wrappers, inside the object, like any stored property (a
// wrapper is its value and nothing else): user code reads and writes them at full speed. To
// fill a fetched object (and to read values for INSERT/UPDATE) without walking `Mirror` per
// object, the schema learns once per class where each wrapper lies in the object
// (``ColumnDiscovery``), and then reads and writes the values through typed pointers, through
// the accessors below.

/// Typed access to one column's wrapper inside objects of one class.
///
/// Reading rows goes through `Statement.store` for the common types (``NativeType``), and
/// through `load` otherwise. `encode` runs concrete code for the native types (a switch, no
/// dynamic dispatch, no generic metadata) and the subclass's generic `encodeSlowly` for the
/// rest. The subclasses are ``ValueColumnAccessor`` (`@Column`) and ``JSONColumnAccessor``
/// (`@JSONColumn`).
class ColumnAccessor {
    /// Byte offset of the value (of the wrapper: the wrapper is its value) in the object; also
    /// the property's identity for change tracking and observation.
    let valueOffset: Int
    /// The property's type, when the statement can write it directly.
    let nativeType: NativeType

    init(valueOffset: Int, nativeType: NativeType) {
        self.valueOffset = valueOffset
        self.nativeType = nativeType
    }

    /// The Swift type of the property, for error messages (`Int8`, `Optional<Date>`).
    var valueTypeName: String { fatalError("abstract") }
    /// Whether the column accepts NULL.
    var isNullable: Bool { fatalError("abstract") }
    /// Whether the property is a `Date` or `Date?` (its SQL type follows the date strategy).
    var isDate: Bool { false }
    /// Whether the property is a `Decimal` or `Decimal?` (stored as exact text: aggregated in Swift).
    var holdsDecimal: Bool { false }
    /// The declared SQL type of the column.
    var columnType: ColumnType { fatalError("abstract") }

    /// Stores a database value into the property; false when it does not fit the type. (The
    /// per-row fast path is `Statement.store`; this is the general conversion.)
    final func load(_ value: DatabaseValue, into object: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        loadSlowly(value, into: object + valueOffset, context: context)
    }

    /// Reads the property as a database value.
    @inline(__always)
    final func encode(from object: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        let pointer = object + valueOffset
        switch nativeType {
        case .int: return .integer(Int64(pointer.assumingMemoryBound(to: Int.self).pointee))
        case .int64: return .integer(pointer.assumingMemoryBound(to: Int64.self).pointee)
        case .string: return .text(pointer.assumingMemoryBound(to: String.self).pointee)
        case .bool: return .integer(pointer.assumingMemoryBound(to: Bool.self).pointee ? 1 : 0)
        case .data: return .blob(pointer.assumingMemoryBound(to: Data.self).pointee)
        case .double:
            let real = pointer.assumingMemoryBound(to: Double.self).pointee
            if !real.isNaN { return .real(real) }
        case .optionalInt:
            return pointer.assumingMemoryBound(to: Int?.self).pointee.map { .integer(Int64($0)) } ?? .null
        case .optionalInt64:
            return pointer.assumingMemoryBound(to: Int64?.self).pointee.map { .integer($0) } ?? .null
        case .optionalString:
            return pointer.assumingMemoryBound(to: String?.self).pointee.map { .text($0) } ?? .null
        case .optionalBool:
            return pointer.assumingMemoryBound(to: Bool?.self).pointee.map { .integer($0 ? 1 : 0) } ?? .null
        case .optionalData:
            return pointer.assumingMemoryBound(to: Data?.self).pointee.map { .blob($0) } ?? .null
        case .optionalDouble:
            guard let real = pointer.assumingMemoryBound(to: Double?.self).pointee else { return .null }
            if !real.isNaN { return .real(real) }
        case .none, .date, .optionalDate, .decimal, .optionalDecimal:
            break
        }
        return try encodeSlowly(from: pointer, context: context)
    }

    /// The generic conversion into the value at `pointer`; false when it does not fit.
    func loadSlowly(_ value: DatabaseValue, into pointer: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        fatalError("abstract")
    }
    /// Whether the property can hold `value` (what ``load(_:into:context:)`` would store).
    func canHold(_ value: DatabaseValue, context: ValueContext) -> Bool {
        fatalError("abstract")
    }
    /// The generic conversion of the value at `pointer`.
    func encodeSlowly(from pointer: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        fatalError("abstract")
    }

    /// Whether the property holds something else than what was last loaded or saved: it was
    /// assigned since (its value before is in `edits`), with a value that encodes differently.
    final func isChanged(in object: UnsafeRawPointer, edits: ObjectEdits?, current: DatabaseValue,
                         context: ValueContext) -> Bool {
        guard let original = edits?.original(atOffset: valueOffset) else { return false }
        guard let before = try? encodeOriginal(original, context: context) else { return true }
        return !DatabaseValue.sameStoredValue(before, current)
    }

    /// Whether the property holds, in `object` and in `other` (of the same class), values that
    /// the database would store alike.
    final func holdsSameValue(in object: UnsafeRawPointer, as other: UnsafeRawPointer) -> Bool {
        guard let mine = try? encode(from: object, context: Self.plainContext),
              let theirs = try? encode(from: other, context: Self.plainContext) else { return false }
        return DatabaseValue.sameStoredValue(mine, theirs)
    }

    /// Whether the property holds nil (an optional's NULL).
    final func isNull(in object: UnsafeRawPointer) -> Bool {
        isNullable && (try? encode(from: object, context: Self.plainContext))?.isNull == true
    }

    /// Sets an optional INTEGER property (an auto-numbered key) to `number`, or to nil,
    /// leaving its change tracking as it is.
    final func setInteger(_ number: Int64?, in object: UnsafeMutableRawPointer) {
        _ = load(number.map(DatabaseValue.integer) ?? .null, into: object, context: Self.plainContext)
    }

    /// A context for values no date strategy applies to (nil, integers).
    private static let plainContext = ValueContext(dateStrategy: .iso8601Text)

    /// Stores a database value into the property of `object` the way an assignment does:
    /// remembering the value before (change tracking) and notifying observers when it differs.
    /// False, and nothing stored, when the value does not fit the property.
    final func assign(_ value: DatabaseValue, to object: ActiveObject, context: ValueContext) -> Bool {
        // Checked first: nothing is remembered, and no observer told, for a value refused.
        guard canHold(value, context: context) else { return false }
        return object.withUnsafeObjectPointer { base in
            if object.assignmentBookkeeping & AssignmentBookkeeping.tracksEdits != 0 {
                object.noteFirstAssignment(atOffset: valueOffset, before: self.value(from: base))
            }
            let differs = (try? encode(from: base, context: context)).map { !DatabaseValue.sameStoredValue($0, value) } ?? true
            var stored = false
            object.notifyingObservers(ofOffsets: differs ? [valueOffset] : [], id: false) {
                stored = load(value, into: base, context: context)
            }
            return stored
        }
    }

    /// Copies the property's value from `source` into `destination` (objects of the same
    /// class). Observers are not notified: see ``ActiveObject/takeRow(of:schema:)``.
    func copyValue(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) { fatalError("abstract") }

    /// Encodes a value kept by ``ObjectEdits`` (a value before).
    func encodeOriginal(_ value: Any, context: ValueContext) throws -> DatabaseValue { fatalError("abstract") }

    /// The property's current value, boxed (for `description`).
    func value(from object: UnsafeRawPointer) -> Any { fatalError("abstract") }
}
