import Foundation

/// The values the library writes in an object's role columns for one write (see
/// ``ColumnRole``): dates for `.createdAt`, `.updatedAt` and `.deletedAt`, the next
/// `.lockVersion`. Decided on the object's thread before the write, written in place of the
/// object's values, and put into the object only once the write succeeded — a write that
/// fails leaves the object as it was.
struct RoleStamps: Sendable {
    /// The value written for each stamped slot, in the order stamped.
    private(set) var values: [(slot: Int, value: DatabaseValue)] = []
    /// How the values are encoded (dates follow the strategy).
    var context = ValueContext()

    var isEmpty: Bool { values.isEmpty }
    var slots: [Int] { values.map(\.slot) }

    /// Stamps `slot` with `value` (replacing an earlier stamp of it).
    mutating func set(_ slot: Int, _ value: DatabaseValue) {
        if let index = values.firstIndex(where: { $0.slot == slot }) {
            values[index].value = value
        } else {
            values.append((slot, value))
        }
    }

    /// Puts the stamped values into a row of values by slot.
    func apply(to row: inout [DatabaseValue]) {
        for (slot, value) in values { row[slot] = value }
    }
}

/// One reading of the clock for a write: every column stamped by the write gets the same moment.
private struct Moment {
    let schema: ModelSchema
    let context: ValueContext
    private var stored: DatabaseValue?

    init(schema: ModelSchema, context: ValueContext) {
        self.schema = schema
        self.context = context
    }

    /// The moment, as the date strategy stores it (read on first use).
    mutating func value(for slot: Int) throws -> DatabaseValue {
        if let stored { return stored }
        let now = try Timestamps.now(in: context, table: schema.tableName, column: schema.columns[slot].name).stored
        stored = now
        return now
    }
}

extension ActiveObject {
    /// The stamps of an INSERT (of any kind: insert, upsert, a deleted object put back):
    /// `.createdAt` when nil (a non-optional one always), `.updatedAt` — neither inside
    /// ``withoutTimestamps(_:)-(()->R)``. A `.lockVersion` is written as the object holds it.
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)`` when the date cannot be written.
    func insertStamps(schema: ModelSchema, values: [DatabaseValue], context: ValueContext) throws -> RoleStamps {
        var stamps = RoleStamps(context: context)
        let roles = schema.roles
        guard roles.hasTimestamps, !Timestamps.areSuspended else { return stamps }
        var moment = Moment(schema: schema, context: context)
        if let slot = roles.createdAt, values[slot] == .null || !schema.columns[slot].isNullable {
            stamps.set(slot, try moment.value(for: slot))
        }
        if let slot = roles.updatedAt { stamps.set(slot, try moment.value(for: slot)) }
        return stamps
    }

    /// The stamps of an UPDATE that writes `changed` (not empty): `.updatedAt` (unless the
    /// user assigned it, or inside ``withoutTimestamps(_:)-(()->R)``) and the next version,
    /// with the version the row must still hold (nil without a `.lockVersion` column).
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)``.
    func updateStamps(schema: ModelSchema, changed: [Int], values: [DatabaseValue],
                      context: ValueContext) throws -> (stamps: RoleStamps, expectedVersion: DatabaseValue?) {
        var stamps = RoleStamps(context: context)
        let roles = schema.roles
        if let slot = roles.updatedAt, !changed.contains(slot), !Timestamps.areSuspended {
            var moment = Moment(schema: schema, context: context)
            stamps.set(slot, try moment.value(for: slot))
        }
        let expected = try versionLoaded(schema: schema, values: values, context: context)
        if let expected, let slot = roles.lockVersion {
            stamps.set(slot, try nextVersion(after: expected, schema: schema, slot: slot, context: context))
        }
        return (stamps, expected)
    }

    /// The stamps of a soft delete (`deletedAt` now) or a restore (`deletedAt` NULL), with
    /// `.updatedAt` now (unless inside ``withoutTimestamps(_:)-(()->R)``) and the next version,
    /// and the version the row must still hold (nil without a `.lockVersion` column).
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)``.
    func markStamps(deleting: Bool, schema: ModelSchema,
                    context: ValueContext) throws -> (stamps: RoleStamps, expectedVersion: DatabaseValue?) {
        var stamps = RoleStamps(context: context)
        let roles = schema.roles
        guard let deletedAt = roles.deletedAt else { return (stamps, nil) }
        var moment = Moment(schema: schema, context: context)
        stamps.set(deletedAt, deleting ? try moment.value(for: deletedAt) : .null)
        if let slot = roles.updatedAt, !Timestamps.areSuspended { stamps.set(slot, try moment.value(for: slot)) }
        let values = try encodedValues(schema: schema, context: context)
        let expected = try versionLoaded(schema: schema, values: values, context: context)
        if let expected, let slot = roles.lockVersion {
            stamps.set(slot, try nextVersion(after: expected, schema: schema, slot: slot, context: context))
        }
        return (stamps, expected)
    }

    /// The version the object was loaded (or last saved) with: its `.lockVersion` value, or,
    /// when the user assigned that property since, the value before. Nil without the role, or
    /// for an object that holds no row (nothing to check).
    /// - Throws: ``ActiveObjectError/misuse(_:)`` for an object loaded without some of its
    ///   columns (`fetch(sql:)`): the version it was loaded with may not be among them.
    func versionLoaded(schema: ModelSchema, values: [DatabaseValue], context: ValueContext) throws -> DatabaseValue? {
        guard let slot = schema.roles.lockVersion, recordState == .persisted else { return nil }
        if isPartiallyLoaded {
            throw ActiveObjectError.misuse(
                "this \(schema.modelName) was loaded without some of its columns, so the version it was loaded with "
                    + "(\(schema.columns[slot].name), optimistic locking) is unknown: select every column, or reload() it, before writing it")
        }
        let accessor = schema.accessors[slot]
        if let original = edits?.original(atOffset: accessor.valueOffset) {
            return try accessor.encodeOriginal(original, context: context)
        }
        return values[slot]
    }

    /// `version + 1`, refused when the property cannot hold it.
    /// - Throws: ``ActiveObjectError/invalidValue(table:column:reason:)``.
    private func nextVersion(after version: DatabaseValue, schema: ModelSchema, slot: Int,
                             context: ValueContext) throws -> DatabaseValue {
        let column = schema.columns[slot]
        guard case .integer(let number) = version else {
            throw ActiveObjectError.invalidValue(table: schema.tableName, column: column.name,
                                                 reason: "the lock version is \(version), not an integer")
        }
        let (next, overflow) = number.addingReportingOverflow(1)
        let value = DatabaseValue.integer(next)
        guard !overflow, column.accessor.canHold(value, context: context) else {
            throw ActiveObjectError.invalidValue(
                table: schema.tableName, column: column.name,
                reason: "the lock version \(number) is the largest its property \(column.propertyName) can hold")
        }
        return value
    }

    /// The object's key as ``ActiveObjectError/staleObject(table:key:)`` names it: `"42"`,
    /// `"ALFKI"`, `"OrderID=10248, ProductID=11"`.
    func keyDescription(schema: ModelSchema, key: [DatabaseValue]) -> String {
        func text(_ value: DatabaseValue) -> String {
            switch value {
            case .integer(let number): return String(number)
            case .real(let real): return String(real)
            case .text(let string): return string
            case .blob(let data): return "x'" + data.map { String(format: "%02X", $0) }.joined() + "'"
            case .null: return "NULL"
            }
        }
        switch schema.key {
        case .rowID:
            return key.first.map(text) ?? "nil"
        case .columns(let slots):
            if slots.count == 1 { return key.first.map(text) ?? "nil" }
            return zip(slots, key).map { "\(schema.columns[$0.0].name)=\(text($0.1))" }.joined(separator: ", ")
        }
    }

    /// Puts written values into the object's properties, notifying their observers, without
    /// counting them as changes: they are what the row holds. With `forgettingEdits`, an
    /// earlier unsaved assignment of those properties is forgotten too (a soft delete or a
    /// restore, after which the object's other edits stay pending); a save marks the whole
    /// object saved afterwards anyway.
    func takeWrittenValues(_ written: [(slot: Int, value: DatabaseValue)], schema: ModelSchema, context: ValueContext,
                           forgettingEdits: Bool) {
        guard !written.isEmpty else { return }
        let offsets = written.map { schema.accessors[$0.slot].valueOffset }
        notifyingObservers(ofOffsets: offsets, id: false) {
            withUnsafeObjectPointer { base in
                for (slot, value) in written { _ = schema.accessors[slot].load(value, into: base, context: context) }
            }
            if forgettingEdits, var pending = edits {
                for offset in offsets { pending.forget(atOffset: offset) }
                edits = pending.isEmpty ? nil : pending
            }
        }
    }
}
