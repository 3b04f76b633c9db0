/// The property wrapper behind ``ActiveObject/id``: a plain `Int64?` whose projection, `$id`,
/// names the primary key in queries.
///
/// ```swift
/// let newest = try Person.all.order(by: \.$id, .descending).first()
/// let ids: [Int64?] = try Person.where(\.$age > 30).pluck(\.$id)
/// ```
///
/// You never declare it: every ``ActiveObject`` has `id`.
@propertyWrapper
public struct RowID: Sendable {
    /// The rowid, or nil for an object that was never saved (and for tables without a rowid).
    public var wrappedValue: Int64?

    /// Creates the storage of an `id`.
    @inlinable
    public init(wrappedValue: Int64?) { self.wrappedValue = wrappedValue }

    /// A reference to the primary-key column for queries: `\.$id`.
    @inlinable
    public var projectedValue: ColumnReference<Int64?> { ColumnReference(slot: ColumnReference<Int64?>.primaryKeySlot) }
}
