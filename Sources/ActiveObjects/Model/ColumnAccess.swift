@_spi(Reflection) import Swift
import Foundation

// The one place where ActiveObjects reaches into an object's memory.
//
// Column values live in the `@Column` wrappers, inside the object, like any stored property:
// user code reads and writes them at full speed. To fill a fetched object (and to read values
// for INSERT/UPDATE) without walking `Mirror` per object, the schema learns once per class
// where each wrapper lies in the object (the runtime's field offsets, via the stdlib's
// `_forEachField`), checks that against `Mirror` on a prototype, and then reads and writes the
// wrappers through typed pointers. If the runtime cannot give the offsets, or they disagree
// with Mirror, the class is refused with a clear `invalidModel` error instead of guessing.

/// Adopted by the property wrappers that declare columns.
protocol ColumnWrapper {
    /// The declaration (present in the prototype only).
    var descriptor: ColumnDescriptor? { get }
    /// Encodes the wrapper's current value (used to validate the layout against Mirror).
    func encodedValue(in context: ValueContext) throws -> DatabaseValue
    /// An accessor for a wrapper of this type stored at `offset` in an object, or nil when
    /// the runtime does not describe the wrapper's own layout.
    static func makeAccessor(offset: Int) -> ColumnAccessor?
}

/// Typed access to one column's wrapper inside objects of one class.
///
/// Reading rows goes through `Statement.store` for the common types (``NativeType``), and
/// through `load` otherwise. `encode` runs concrete code for the native types (a switch, no
/// dynamic dispatch, no generic metadata) and the subclass's generic `encodeSlowly` for the rest.
class ColumnAccessor {
    /// Byte offset of the current value.
    let valueOffset: Int
    /// Byte offset of the wrapper's ``ColumnState`` (whether the property changed).
    let stateOffset: Int
    /// The property's type, when the statement can write it directly.
    let nativeType: NativeType

    init(valueOffset: Int, stateOffset: Int, nativeType: NativeType) {
        self.valueOffset = valueOffset
        self.stateOffset = stateOffset
        self.nativeType = nativeType
    }

    /// The Swift type of the property, for error messages (`Int8`, `Optional<Date>`).
    var valueTypeName: String { fatalError("abstract") }
    /// Whether the column accepts NULL.
    var isNullable: Bool { fatalError("abstract") }
    /// Whether the property is a `Date` or `Date?` (its SQL type follows the date strategy).
    var isDate: Bool { false }
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
    /// The generic conversion of the value at `pointer`.
    func encodeSlowly(from pointer: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        fatalError("abstract")
    }
    /// The wrapper's bookkeeping state.
    final func state(in object: UnsafeRawPointer) -> ColumnState {
        (object + stateOffset).assumingMemoryBound(to: ColumnState.self).pointee
    }

    /// Replaces the wrapper's bookkeeping state (of an ordinary object, never the prototype).
    @inline(__always)
    final func setState(_ state: ColumnState, in object: UnsafeMutableRawPointer) {
        (object + stateOffset).assumingMemoryBound(to: ColumnState.self).pointee = state
    }



    /// Whether the property holds something else than what was last loaded or saved: it was
    /// assigned since, with a value that encodes differently.
    final func isChanged(in object: UnsafeRawPointer, current: DatabaseValue, context: ValueContext) -> Bool {
        guard case .changed(let original) = state(in: object) else { return false }
        guard let before = try? encodeOriginal(original.value, context: context) else { return true }
        return !DatabaseValue.sameStoredValue(before, current)
    }

    /// Stores a value the way an assignment to the property does (see ``ColumnState``).
    final func assign(_ value: DatabaseValue, into object: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        if case .clean = state(in: object) {
            setState(.changed(OriginalValue(self.value(from: object))), in: object)
        }
        return load(value, into: object, context: context)
    }

    /// Encodes a value kept by an ``OriginalValue``.
    func encodeOriginal(_ value: Any, context: ValueContext) throws -> DatabaseValue { fatalError("abstract") }

    /// The property's current value, boxed (for `description`).
    func value(from object: UnsafeRawPointer) -> Any { fatalError("abstract") }

}

final class ValueColumnAccessor<Value: ColumnValue>: ColumnAccessor {
    typealias Wrapper = Column<Value>

    init?(offset: Int) {
        // Reading and writing the wrapped value through its own offset needs only `Value`'s
        // metadata, not a runtime lookup of `Column<Value>`'s on every call.
        guard let valueOffset = MemoryLayout<Wrapper>.offset(of: \Wrapper.value),
              let stateOffset = MemoryLayout<Wrapper>.offset(of: \Wrapper.state) else { return nil }
        super.init(valueOffset: offset + valueOffset, stateOffset: offset + stateOffset,
                   nativeType: NativeType(Value.self))
    }

    override var valueTypeName: String { String(describing: Value.self) }
    override var isNullable: Bool { Value.isNullable }
    override var isDate: Bool { Value.self == Date.self || Value.self == Date?.self }
    override var columnType: ColumnType { Value.columnType }

    override func loadSlowly(_ value: DatabaseValue, into pointer: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        guard let decoded = Value.fromDatabaseValue(value, in: context) else { return false }
        pointer.assumingMemoryBound(to: Value.self).pointee = decoded
        return true
    }

    override func encodeSlowly(from pointer: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        try pointer.assumingMemoryBound(to: Value.self).pointee.databaseValue(in: context)
    }







    override func value(from object: UnsafeRawPointer) -> Any {
        (object + valueOffset).assumingMemoryBound(to: Value.self).pointee
    }

    override func encodeOriginal(_ value: Any, context: ValueContext) throws -> DatabaseValue {
        guard let value = value as? Value else { throw ColumnValueError("the original value has another type") }
        return try value.databaseValue(in: context)
    }
}

final class JSONColumnAccessor<Value: Codable>: ColumnAccessor {
    typealias Wrapper = JSONColumn<Value>

    init?(offset: Int) {
        guard let valueOffset = MemoryLayout<Wrapper>.offset(of: \Wrapper.value),
              let stateOffset = MemoryLayout<Wrapper>.offset(of: \Wrapper.state) else { return nil }
        super.init(valueOffset: offset + valueOffset, stateOffset: offset + stateOffset,
                   nativeType: .none)
    }

    override var valueTypeName: String { "JSON \(Value.self)" }
    override var isNullable: Bool { Value.self is any OptionalValue.Type }
    override var columnType: ColumnType { .text }

    override func loadSlowly(_ value: DatabaseValue, into pointer: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        guard let decoded = JSONCoding.decode(Value.self, from: value) else { return false }
        pointer.assumingMemoryBound(to: Value.self).pointee = decoded
        return true
    }

    override func encodeSlowly(from pointer: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        try JSONCoding.encode(pointer.assumingMemoryBound(to: Value.self).pointee)
    }







    override func value(from object: UnsafeRawPointer) -> Any {
        (object + valueOffset).assumingMemoryBound(to: Value.self).pointee
    }

    override func encodeOriginal(_ value: Any, context: ValueContext) throws -> DatabaseValue {
        guard let value = value as? Value else { throw ColumnValueError("the original value has another type") }
        return try JSONCoding.encode(value)
    }
}

extension Column: ColumnWrapper {
    var descriptor: ColumnDescriptor? { state.descriptor }
    func encodedValue(in context: ValueContext) throws -> DatabaseValue {
        try wrappedValue.databaseValue(in: context)
    }
    static func makeAccessor(offset: Int) -> ColumnAccessor? { ValueColumnAccessor<Value>(offset: offset) }
}

extension JSONColumn: ColumnWrapper {
    var descriptor: ColumnDescriptor? { state.descriptor }
    func encodedValue(in context: ValueContext) throws -> DatabaseValue { try JSONCoding.encode(wrappedValue) }
    static func makeAccessor(offset: Int) -> ColumnAccessor? { JSONColumnAccessor<Value>(offset: offset) }
}

/// A `@Column` property found in a class: its property name, declaration and accessor.
struct DiscoveredColumn {
    let propertyName: String
    let descriptor: ColumnDescriptor
    let accessor: ColumnAccessor
}

enum ColumnDiscovery {
    /// Finds the column wrappers of `prototype`'s class, superclass columns first, and checks
    /// the runtime's field offsets against `Mirror` before trusting them.
    static func columns(of prototype: ActiveObject) throws -> [DiscoveredColumn] {
        let type = Swift.type(of: prototype)
        let modelName = String(describing: type)

        // 1. Mirror: the supported, safe view of the stored properties. Walk from the root
        //    class down so that inherited columns come first, in declaration order.
        var mirrors: [Mirror] = []
        var current: Mirror? = Mirror(reflecting: prototype)
        while let mirror = current {
            mirrors.append(mirror)
            current = mirror.superclassMirror
        }
        var mirrored: [(label: String, wrapper: any ColumnWrapper)] = []
        for mirror in mirrors.reversed() {
            for child in mirror.children {
                if let wrapper = child.value as? any ColumnWrapper, let label = child.label {
                    mirrored.append((label, wrapper))
                }
            }
        }

        // 2. The runtime's field layout, with offsets.
        var fields: [(label: String, offset: Int, type: any ColumnWrapper.Type)] = []
        var walked = false
        if #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) {
            // `_EachFieldOptions.classType` is a `static var` (not concurrency-safe to read);
            // build the same option from its documented raw value.
            walked = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { name, offset, fieldType, _ in
                if let wrapperType = fieldType as? any ColumnWrapper.Type {
                    fields.append((String(cString: name), offset, wrapperType))
                }
                return true
            }
        }
        guard walked else {
            throw ActiveObjectError.invalidModel(
                model: modelName, reason: "the Swift runtime did not describe its stored properties")
        }

        // 3. Both views must agree: same properties, same order, same wrapper types.
        guard fields.count == mirrored.count,
              zip(fields, mirrored).allSatisfy({ $0.label == $1.label && $0.type == Swift.type(of: $1.wrapper) })
        else {
            throw ActiveObjectError.invalidModel(
                model: modelName,
                reason: "its field layout (\(fields.map(\.label))) disagrees with Mirror (\(mirrored.map(\.label)))")
        }

        // 4. Reading through each offset must give what Mirror gives.
        let context = ValueContext()
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
        return try withExtendedLifetime(prototype) {
            try zip(fields, mirrored).map { field, mirror in
                guard let accessor = field.type.makeAccessor(offset: field.offset) else {
                    throw ActiveObjectError.invalidModel(
                        model: modelName, reason: "the Swift runtime did not describe the layout of \(field.label)")
                }
                let viaOffset = try? accessor.encode(from: base, context: context)
                let viaMirror = try? mirror.wrapper.encodedValue(in: context)
                guard viaOffset.map({ v in viaMirror.map { DatabaseValue.sameStoredValue(v, $0) } ?? false })
                        ?? (viaMirror == nil) else {
                    throw ActiveObjectError.invalidModel(
                        model: modelName, reason: "property \(field.label) cannot be read reliably")
                }
                let name = field.label.hasPrefix("_") ? String(field.label.dropFirst()) : field.label
                guard let descriptor = mirror.wrapper.descriptor else {
                    throw ActiveObjectError.invalidModel(
                        model: modelName, reason: "property \(name) was not initialized by the class's init()")
                }
                return DiscoveredColumn(propertyName: name, descriptor: descriptor, accessor: accessor)
            }
        }
    }
}
