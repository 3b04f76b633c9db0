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
    var options: ColumnOptions { get }
    /// Encodes the wrapper's current value (used to validate the layout against Mirror).
    func encodedValue(in context: ValueContext) throws -> DatabaseValue
    /// An accessor for a wrapper of this type stored at `offset` in an object.
    static func makeAccessor(offset: Int) -> ColumnAccessor
}

/// Typed access to one column's wrapper inside objects of one class.
class ColumnAccessor {
    /// Byte offset of the wrapper from the start of the object.
    let offset: Int

    init(offset: Int) { self.offset = offset }

    /// The Swift type of the property, for error messages (`Int8`, `Optional<Date>`).
    var valueTypeName: String { fatalError("abstract") }
    /// Whether the column accepts NULL.
    var isNullable: Bool { fatalError("abstract") }
    /// Whether the property is a `Date` or `Date?` (its SQL type follows the date strategy).
    var isDate: Bool { false }
    /// The declared SQL type of the column.
    var columnType: ColumnType { fatalError("abstract") }

    /// Stores a database value into the wrapper; false when it does not fit the type.
    func load(_ value: DatabaseValue, into object: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        fatalError("abstract")
    }
    /// Reads the wrapper's value as a database value.
    func encode(from object: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        fatalError("abstract")
    }
    /// Converts a database value to the property's type, boxed; nil when it does not fit.
    func decodeValue(_ value: DatabaseValue, context: ValueContext) -> Any? { fatalError("abstract") }
    /// Records the column's slot in the wrapper (on the prototype only).
    func setSlot(_ slot: Int, in object: UnsafeMutableRawPointer) { fatalError("abstract") }
    /// The property's current value, boxed (for `description`).
    func value(from object: UnsafeRawPointer) -> Any { fatalError("abstract") }

    /// What this column would write for a stored value: decoded to the Swift type and
    /// encoded again (`"2014-09-23 10:11:12"` → `"2014-09-23 10:11:12.000"`); nil when it
    /// does not decode. Dirty tracking uses it so that a legacy format is not a change.
    func normalized(_ value: DatabaseValue, context: ValueContext) -> DatabaseValue? { fatalError("abstract") }
}

final class ValueColumnAccessor<Value: ColumnValue>: ColumnAccessor {
    typealias Wrapper = Column<Value>

    override var valueTypeName: String { String(describing: Value.self) }
    override var isNullable: Bool { Value.isNullable }
    override var isDate: Bool { Value.self == Date.self || Value.self == Date?.self }
    override var columnType: ColumnType { Value.columnType }

    @inline(__always)
    override func load(_ value: DatabaseValue, into object: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        guard let decoded = Value.fromDatabaseValue(value, in: context) else { return false }
        (object + offset).assumingMemoryBound(to: Wrapper.self).pointee.wrappedValue = decoded
        return true
    }

    override func encode(from object: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        try (object + offset).assumingMemoryBound(to: Wrapper.self).pointee.wrappedValue
            .databaseValue(in: context)
    }

    override func decodeValue(_ value: DatabaseValue, context: ValueContext) -> Any? {
        Value.fromDatabaseValue(value, in: context)
    }

    override func normalized(_ value: DatabaseValue, context: ValueContext) -> DatabaseValue? {
        Value.fromDatabaseValue(value, in: context).flatMap { try? $0.databaseValue(in: context) }
    }

    override func setSlot(_ slot: Int, in object: UnsafeMutableRawPointer) {
        (object + offset).assumingMemoryBound(to: Wrapper.self).pointee.slot = slot
    }

    override func value(from object: UnsafeRawPointer) -> Any {
        (object + offset).assumingMemoryBound(to: Wrapper.self).pointee.wrappedValue
    }
}

final class JSONColumnAccessor<Value: Codable>: ColumnAccessor {
    typealias Wrapper = JSONColumn<Value>

    override var valueTypeName: String { "JSON \(Value.self)" }
    override var isNullable: Bool { Value.self is any OptionalValue.Type }
    override var columnType: ColumnType { .text }

    override func load(_ value: DatabaseValue, into object: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        guard let decoded = JSONCoding.decode(Value.self, from: value) else { return false }
        (object + offset).assumingMemoryBound(to: Wrapper.self).pointee.wrappedValue = decoded
        return true
    }

    override func encode(from object: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        try JSONCoding.encode((object + offset).assumingMemoryBound(to: Wrapper.self).pointee.wrappedValue)
    }

    override func decodeValue(_ value: DatabaseValue, context: ValueContext) -> Any? {
        JSONCoding.decode(Value.self, from: value)
    }

    override func normalized(_ value: DatabaseValue, context: ValueContext) -> DatabaseValue? {
        JSONCoding.decode(Value.self, from: value).flatMap { try? JSONCoding.encode($0) }
    }

    override func setSlot(_ slot: Int, in object: UnsafeMutableRawPointer) {
        (object + offset).assumingMemoryBound(to: Wrapper.self).pointee.slot = slot
    }

    override func value(from object: UnsafeRawPointer) -> Any {
        (object + offset).assumingMemoryBound(to: Wrapper.self).pointee.wrappedValue
    }
}

extension Column: ColumnWrapper {
    func encodedValue(in context: ValueContext) throws -> DatabaseValue {
        try wrappedValue.databaseValue(in: context)
    }
    static func makeAccessor(offset: Int) -> ColumnAccessor { ValueColumnAccessor<Value>(offset: offset) }
}

extension JSONColumn: ColumnWrapper {
    func encodedValue(in context: ValueContext) throws -> DatabaseValue { try JSONCoding.encode(wrappedValue) }
    static func makeAccessor(offset: Int) -> ColumnAccessor { JSONColumnAccessor<Value>(offset: offset) }
}

/// A `@Column` property found in a class: its property name, wrapper options and accessor.
struct DiscoveredColumn {
    let propertyName: String
    let options: ColumnOptions
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
                let accessor = field.type.makeAccessor(offset: field.offset)
                let viaOffset = try? accessor.encode(from: base, context: context)
                let viaMirror = try? mirror.wrapper.encodedValue(in: context)
                guard viaOffset.map({ v in viaMirror.map { DatabaseValue.sameStoredValue(v, $0) } ?? false })
                        ?? (viaMirror == nil) else {
                    throw ActiveObjectError.invalidModel(
                        model: modelName, reason: "property \(field.label) cannot be read reliably")
                }
                let name = field.label.hasPrefix("_") ? String(field.label.dropFirst()) : field.label
                return DiscoveredColumn(propertyName: name, options: mirror.wrapper.options, accessor: accessor)
            }
        }
    }
}
