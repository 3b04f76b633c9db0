import Foundation

/// Marks a stored property whose `Codable` value is persisted as JSON text.
///
/// ```swift
/// final class Post: ActiveObject {
///     @JSONColumn var tags: [String] = []               // TEXT NOT NULL DEFAULT '[]'
///     @JSONColumn var meta: [String: Int]? = nil        // TEXT, NULL when nil
/// }
/// ```
/// Keys are sorted, so equal values produce equal text (and no spurious UPDATE). Dates inside
/// the value follow the model's ``DateStrategy`` (`"2014-09-23 10:11:12.000"` by default), like
/// a `Date` column.
/// Text that is not valid JSON for the type is a thrown `typeMismatch` when the row is read.
@propertyWrapper
public struct JSONColumn<Value: Codable> {
    /// See ``Column``.
    @usableFromInline var state: ColumnState
    /// The current value.
    @usableFromInline var value: Value

    /// The property's value. Reading it costs what reading a stored property costs; assigning
    /// it in an object loaded from the database remembers the value before, once, for change
    /// tracking.
    @inlinable
    public var wrappedValue: Value {
        get { value }
        set {
            if case .clean = state { state = .changed(OriginalValue(value)) }
            value = newValue
        }
    }

    /// Declares a JSON column named after the property, or `name` when given.
    @inlinable
    public init(wrappedValue: Value, _ name: String? = nil, unique: Bool = false, indexed: Bool = false) {
        self.value = wrappedValue
        self.state = PrototypeConstruction.isActive
            ? PrototypeConstruction.prototypeState(ColumnOptions(name: name, unique: unique, indexed: indexed))
            : .fresh
    }


    /// A reference to this column for queries: `\.$tags`.
    @inlinable
    public var projectedValue: ColumnReference<Value> { ColumnReference(slot: state.descriptor?.slot ?? -1) }
}

/// Implemented by `Optional` so that a nil JSON value is stored as NULL, not `"null"`.
protocol OptionalValue {
    static var wrappedType: Any.Type { get }
    var isNil: Bool { get }
    static var nilValue: Self { get }
}

extension Optional: OptionalValue {
    static var wrappedType: Any.Type { Wrapped.self }
    var isNil: Bool { self == nil }
    static var nilValue: Optional<Wrapped> { nil }
}

/// JSON coding for ``JSONColumn``: sorted keys, and the dates inside the value written with
/// the model's ``DateStrategy`` (text for `.iso8601Text` and `.compactText`, a number for
/// `.unixSeconds` and `.unixMilliseconds`), so that they read the same as a `Date` column.
enum JSONCoding {
    static func encode<Value: Encodable>(_ value: Value, in context: ValueContext) throws -> DatabaseValue {
        if let optional = value as? any OptionalValue, optional.isNil { return .null }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let strategy = context.dateStrategy
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            switch try strategy.encode(date) {
            case .text(let text): try container.encode(text)
            case .integer(let integer): try container.encode(integer)
            case .real(let real): try container.encode(real)
            case .null, .blob:
                throw EncodingError.invalidValue(date, EncodingError.Context(
                    codingPath: encoder.codingPath, debugDescription: "the date strategy gave no JSON value"))
            }
        }
        let data = try encoder.encode(value)
        return .text(String(decoding: data, as: UTF8.self))
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from value: DatabaseValue, in context: ValueContext) -> Value? {
        let data: Data
        switch value {
        case .null:
            if let optional = Value.self as? any OptionalValue.Type {
                return optional.nilValue as? Value
            }
            return nil
        case .text(let text): data = Data(text.utf8)
        case .blob(let blob): data = blob
        case .integer, .real: return nil
        }
        let decoder = JSONDecoder()
        let strategy = context.dateStrategy
        // Every form a `Date` column reads: any text form, or a number (seconds, or
        // milliseconds under `.unixMilliseconds`).
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let stored: DatabaseValue
            if let text = try? container.decode(String.self) {
                stored = .text(text)
            } else if let integer = try? container.decode(Int64.self) {
                stored = .integer(integer)
            } else {
                stored = .real(try container.decode(Double.self))
            }
            guard let date = strategy.decode(stored) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(stored) is not a date")
            }
            return date
        }
        return try? decoder.decode(Value.self, from: data)
    }
}
