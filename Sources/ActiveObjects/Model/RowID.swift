/// The property wrapper behind ``ActiveObject/id``: an `Int64?` whose projection, `$id`,
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
    // The value lives in the object (`ActiveObject.rowID`), read and written through
    // the enclosing-instance subscript: a stored property the library marks
    // `@exclusivity(unchecked)`, as it does for the other bookkeeping it touches on every row
    // (a dynamic exclusivity check cost more than the rest of an id access).

    /// Not used: `id` is read and written through ``subscript(_enclosingInstance:wrapped:storage:)``.
    @available(*, unavailable, message: "RowID is only used as ActiveObject.id")
    public var wrappedValue: Int64? {
        get { fatalError("RowID is only used as ActiveObject.id") }
        set { fatalError("RowID is only used as ActiveObject.id") }
    }

    /// Creates the wrapper of `id` (nil until the object is inserted).
    public init(wrappedValue: Int64?) {}

    /// Reads and writes the object's `id`: observed like a column (see ``Column``).
    public static subscript(
        _enclosingInstance object: ActiveObject,
        wrapped _: ReferenceWritableKeyPath<ActiveObject, Int64?>,
        storage _: ReferenceWritableKeyPath<ActiveObject, RowID>
    ) -> Int64? {
        get {
            if TrackingProbe.mayBeTracking { object.observeReadOfID() }
            return object.rowID
        }
        set { object.assignID(newValue) }
    }

    /// A reference to the primary-key column for queries: `\.$id`.
    @inlinable
    public var projectedValue: ColumnReference<Int64?> { ColumnReference(position: ColumnReference<Int64?>.primaryKeyPosition) }
}
