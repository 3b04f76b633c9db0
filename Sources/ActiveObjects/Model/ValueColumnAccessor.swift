import Foundation

/// The accessor of a `@Column` property: converts through the value's ``ColumnValue``
/// conformance.
final class ValueColumnAccessor<Value: ColumnValue>: ColumnAccessor {
    typealias Wrapper = Column<Value>

    /// An accessor for a `Column<Value>` stored at `offset` in an object; nil when the
    /// runtime does not describe the wrapper's layout.
    init?(offset: Int) {
        // The wrapper is its value alone (same size, the value at offset 0): reading and writing
        // the value at the wrapper's offset needs only `Value`'s metadata.
        guard MemoryLayout<Wrapper>.offset(of: \Wrapper.value) == 0,
              MemoryLayout<Wrapper>.size == MemoryLayout<Value>.size else { return nil }
        super.init(valueOffset: offset, nativeType: NativeType(Value.self))
    }

    override var valueTypeName: String { String(describing: Value.self) }
    override var isNullable: Bool { Value.isNullable }
    override var isDate: Bool { Value.self == Date.self || Value.self == Date?.self }
    override var holdsDecimal: Bool { Value.self == Decimal.self || Value.self == Decimal?.self }
    override var columnType: ColumnType { Value.columnType }

    override func loadSlowly(_ value: DatabaseValue, into pointer: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        guard let decoded = Value.fromDatabaseValue(value, in: context) else { return false }
        pointer.assumingMemoryBound(to: Value.self).pointee = decoded
        return true
    }

    override func canHold(_ value: DatabaseValue, context: ValueContext) -> Bool {
        Value.fromDatabaseValue(value, in: context) != nil
    }

    override func encodeSlowly(from pointer: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        try pointer.assumingMemoryBound(to: Value.self).pointee.databaseValue(in: context)
    }

    override func copyValue(from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) {
        (destination + valueOffset).assumingMemoryBound(to: Value.self).pointee =
            (source + valueOffset).assumingMemoryBound(to: Value.self).pointee
    }

    override func value(from object: UnsafeRawPointer) -> Any {
        (object + valueOffset).assumingMemoryBound(to: Value.self).pointee
    }

    override func encodeOriginal(_ value: Any, context: ValueContext) throws -> DatabaseValue {
        guard let value = value as? Value else { throw ColumnValueError("the original value has another type") }
        return try value.databaseValue(in: context)
    }
}
