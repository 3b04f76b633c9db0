import Foundation

/// Which columns have a default computed at run time (`@Column var createdAt = Date()`,
/// `= UUID()`): such a value must never become the column's SQL `DEFAULT` (a row inserted by
/// another tool would get the moment the table was created, or one shared "unique" value).
///
/// A column's default is computed at run time when a second new object of the class holds a
/// different value than the schema's prototype (created earlier) — `Date` values compared at
/// full precision, whatever the model's date strategy keeps — or when it is a `Date` within
/// ``recentDateWindow`` of now: a default that stays equal for a while (`startOfDay(for:
/// Date())`, a clock too coarse to tell two objects' `Date()` apart) cannot be told from a
/// constant by comparing, and a constant date that close to now is rare enough to give up
/// (it only loses its SQL `DEFAULT`).
enum RuntimeDefaults {
    /// A date default this close to now (either side) is taken as computed at run time: 48 h,
    /// which covers "today", "yesterday", "tomorrow" and `Date()` in any time zone.
    static let recentDateWindow: TimeInterval = 48 * 3600

    /// The slots of `schema`'s columns whose default is computed at run time, given the
    /// prototype's encoded values (`prototypeValues`, by slot).
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` when a new object's
    ///   default cannot be encoded.
    static func slots(of schema: ModelSchema, prototypeValues: [DatabaseValue], context: ValueContext) throws -> Set<Int> {
        // A new object made now, outside any schema build (`newObject()` suspends it).
        let object = schema.newObject()
        let fresh = try object.encodedValues(schema: schema, context: context)
        // Dates at full precision (seconds as a Double): `.compactText` and `.iso8601Text`
        // keep whole seconds or milliseconds, so two `Date()`s a moment apart may encode equal.
        var preciseFresh: [DatabaseValue] = []
        var precisePrototype: [DatabaseValue] = []
        if schema.columns.contains(where: \.accessor.isDate) {
            let precise = ValueContext(dateStrategy: .unixSeconds)
            preciseFresh = try object.encodedValues(schema: schema, context: precise)
            precisePrototype = try schema.defaultValues(context: precise)
        }
        let now = Date()
        var slots = Set<Int>()
        for (slot, column) in schema.columns.enumerated() where slot < prototypeValues.count && slot < fresh.count {
            if fresh[slot] != prototypeValues[slot] {
                slots.insert(slot)
            } else if column.accessor.isDate, slot < precisePrototype.count, slot < preciseFresh.count {
                if preciseFresh[slot] != precisePrototype[slot] {
                    slots.insert(slot)
                } else if let date = DateStrategy.unixSeconds.decode(precisePrototype[slot]),
                          abs(date.timeIntervalSince(now)) < recentDateWindow {
                    slots.insert(slot)
                }
            }
        }
        return slots
    }
}
