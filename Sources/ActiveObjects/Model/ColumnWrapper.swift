/// Adopted by the property wrappers that declare columns (`@Column`, `@JSONColumn`).
///
/// Schema discovery (``ColumnDiscovery``) recognises a class's columns as the stored
/// properties whose type conforms to this protocol.
protocol ColumnWrapper {
    /// Encodes the wrapper's current value (used to validate the layout against Mirror).
    func encodedValue(in context: ValueContext) throws -> DatabaseValue
    /// An accessor for a wrapper of this type stored at `offset` in an object, or nil when
    /// the runtime does not describe the wrapper's own layout.
    static func makeAccessor(offset: Int) -> ColumnAccessor?
}

extension Column: ColumnWrapper {
    func encodedValue(in context: ValueContext) throws -> DatabaseValue {
        try value.databaseValue(in: context)
    }
    static func makeAccessor(offset: Int) -> ColumnAccessor? { ValueColumnAccessor<Value>(offset: offset) }
}

extension JSONColumn: ColumnWrapper {
    func encodedValue(in context: ValueContext) throws -> DatabaseValue {
        try JSONCoding.encode(value, in: context)
    }
    static func makeAccessor(offset: Int) -> ColumnAccessor? { JSONColumnAccessor<Value>(offset: offset) }
}
