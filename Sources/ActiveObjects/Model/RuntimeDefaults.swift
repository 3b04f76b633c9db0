import Foundation

/// Which columns have a default computed at run time (`@Column var createdAt = Date()`,
/// `= UUID()`): such a value must never become the column's SQL `DEFAULT` (a row inserted by
/// another tool would get the moment the table was created, or one shared "unique" value).
///
/// A column's default is computed at run time when a second new object of the class holds a
/// different value than the schema's prototype (created earlier), or when it is a `Date` within
/// ``recentDateWindow`` of now (a clock too coarse to tell two objects' `Date()` apart, or a
/// date strategy that keeps whole seconds).
enum RuntimeDefaults {
    /// A date default this close to now is taken as `Date()`.
    static let recentDateWindow: TimeInterval = 600

    /// The slots of `schema`'s columns whose default is computed at run time, given the
    /// prototype's encoded values (`prototypeValues`, by slot).
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` when a new object's
    ///   default cannot be encoded.
    static func slots(of schema: ModelSchema, prototypeValues: [DatabaseValue], context: ValueContext) throws -> Set<Int> {
        // A new object made now, outside any schema build (`newObject()` suspends it).
        let fresh = try schema.newObject().encodedValues(schema: schema, context: context)
        let now = Date()
        var slots = Set<Int>()
        for (slot, column) in schema.columns.enumerated() where slot < prototypeValues.count && slot < fresh.count {
            if fresh[slot] != prototypeValues[slot] {
                slots.insert(slot)
            } else if column.accessor.isDate, let date = context.dateStrategy.decode(prototypeValues[slot]),
                      abs(date.timeIntervalSince(now)) < recentDateWindow {
                slots.insert(slot)
            }
        }
        return slots
    }
}
