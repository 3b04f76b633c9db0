import Foundation

/// Marks a stored property whose `Codable` value is persisted as JSON text.
///
/// ```swift
/// final class Post: ActiveObject {
///     @JSONColumn var tags: [String] = []               // TEXT NOT NULL DEFAULT '[]'
///     @JSONColumn var meta: [String: Int]? = nil        // TEXT, NULL when nil
/// }
/// ```
/// Keys are sorted, so equal values produce equal text (and no spurious UPDATE).
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
            ? .prototype(ColumnDescriptor(options: ColumnOptions(name: name, unique: unique, indexed: indexed)))
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

/// JSON coding for ``JSONColumn``.
enum JSONCoding {
    static func encode<Value: Encodable>(_ value: Value) throws -> DatabaseValue {
        if let optional = value as? any OptionalValue, optional.isNil { return .null }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        return .text(String(decoding: data, as: UTF8.self))
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from value: DatabaseValue) -> Value? {
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
        return try? JSONDecoder().decode(Value.self, from: data)
    }
}
