/// The accessor of a `@JSONColumn` property: converts through ``JSONCoding``, with the
/// model's date strategy for the dates inside the JSON.
final class JSONColumnAccessor<Value: Codable>: ColumnAccessor {
    typealias Wrapper = JSONColumn<Value>

    /// An accessor for a `JSONColumn<Value>` stored at `offset` in an object; nil when the
    /// runtime does not describe the wrapper's layout.
    init?(offset: Int) {
        // The wrapper is its value alone: same size, the value at offset 0.
        guard MemoryLayout<Wrapper>.offset(of: \Wrapper.value) == 0,
              MemoryLayout<Wrapper>.size == MemoryLayout<Value>.size else { return nil }
        super.init(valueOffset: offset, nativeType: .none)
    }

    override var valueTypeName: String { "JSON \(Value.self)" }
    override var isNullable: Bool { Value.self is any OptionalValue.Type }
    override var columnType: ColumnType { .text }

    override func loadSlowly(_ value: DatabaseValue, into pointer: UnsafeMutableRawPointer, context: ValueContext) -> Bool {
        guard let decoded = JSONCoding.decode(Value.self, from: value, in: context) else { return false }
        pointer.assumingMemoryBound(to: Value.self).pointee = decoded
        return true
    }

    override func canHold(_ value: DatabaseValue, context: ValueContext) -> Bool {
        JSONCoding.decode(Value.self, from: value, in: context) != nil
    }

    override func encodeSlowly(from pointer: UnsafeRawPointer, context: ValueContext) throws -> DatabaseValue {
        try JSONCoding.encode(pointer.assumingMemoryBound(to: Value.self).pointee, in: context)
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
        return try JSONCoding.encode(value, in: context)
    }
}
