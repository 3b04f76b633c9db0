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
///
/// Like ``Column``, the wrapper holds only the value, and the property is observable.
@propertyWrapper
public struct JSONColumn<Value: Codable> {
    /// The current value (the wrapper's only stored property; see ``Column``).
    @usableFromInline var value: Value

    /// Not used: see ``subscript(_enclosingInstance:wrapped:storage:)``.
    @available(*, unavailable, message: "@JSONColumn is only available on stored properties of ActiveObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("@JSONColumn is only available on stored properties of ActiveObject subclasses") }
        set { fatalError("@JSONColumn is only available on stored properties of ActiveObject subclasses") }
    }

    /// Declares a JSON column named after the property, or `name` when given. The last three
    /// parameters are the place of the declaration, filled in by the compiler (see ``Column``).
    @inlinable
    public init(wrappedValue: Value, _ name: String? = nil, unique: Bool = false, indexed: Bool = false,
                _file: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column) {
        self.value = wrappedValue
        if PrototypeConstruction.isActive {
            PrototypeConstruction.record(name: name, unique: unique, indexed: indexed, wrapper: Self.self,
                                         file: _file, line: _line, column: _column)
        }
    }

    /// Declares a JSON column that an earlier version of the model named `renamedFrom` (see
    /// ``Column/init(wrappedValue:_:unique:indexed:renamedFrom:_file:_line:_column:)``).
    @inlinable
    public init(wrappedValue: Value, _ name: String? = nil, unique: Bool = false, indexed: Bool = false,
                renamedFrom: String,
                _file: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column) {
        self.value = wrappedValue
        if PrototypeConstruction.isActive {
            PrototypeConstruction.record(name: name, unique: unique, indexed: indexed, references: nil,
                                         onDelete: .noAction, renamedFrom: renamedFrom, role: nil, wrapper: Self.self,
                                         file: _file, line: _line, column: _column)
        }
    }

    /// Reads and writes the property of `object`, as ``Column``'s subscript does.
    // The same body as Column's, on purpose: moved into a shared generic helper, it was no
    // longer inlined as well (about 170 instructions more per saved object, measured with
    // callgrind), and these accessors run on every property access.
    @inlinable
    public static subscript<Object: ActiveObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        // Always inlined: the key paths are then literals the optimizer turns into direct
        // accesses to the stored property (a call would project them at run time).
        @inline(__always) get {
            if TrackingProbe.mayBeTracking {
                object.observeRead(at: withUnsafeMutablePointer(to: &object[keyPath: storageKeyPath]) { Int(bitPattern: $0) })
            }
            return object[keyPath: storageKeyPath].value
        }
        @inline(__always) set {
            if object.assignmentBookkeeping == 0 {
                object[keyPath: storageKeyPath].value = newValue
            } else {
                ColumnAssignment.assign(
                    newValue, at: withUnsafeMutablePointer(to: &object[keyPath: storageKeyPath]) { Int(bitPattern: $0) },
                    in: object)
            }
        }
    }

    /// Not used: `$tags` is read through ``subscript(_enclosingInstance:projected:storage:)``.
    @available(*, unavailable, message: "@JSONColumn is only available on stored properties of ActiveObject subclasses")
    public var projectedValue: ColumnReference<Value> {
        fatalError("@JSONColumn is only available on stored properties of ActiveObject subclasses")
    }

    /// A reference to this column for queries: `\.$tags`.
    @inlinable
    public static subscript<Object: ActiveObject>(
        _enclosingInstance object: Object,
        projected projectedKeyPath: KeyPath<Object, ColumnReference<Value>>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> ColumnReference<Value> {
        @inline(__always) get {
            ColumnReference(offset: withUnsafeMutablePointer(to: &object[keyPath: storageKeyPath]) { Int(bitPattern: $0) }
                                - Int(bitPattern: Unmanaged.passUnretained(object).toOpaque()))
        }
    }
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
