/// What a foreign key does when the referenced row is deleted
/// (<https://www.sqlite.org/foreignkeys.html#fk_actions>).
public enum ForeignKeyAction: String, Sendable, Hashable {
    /// Delete the referencing rows too.
    case cascade = "CASCADE"
    /// Set the referencing column to NULL.
    case setNull = "SET NULL"
    /// Set the referencing column to its default.
    case setDefault = "SET DEFAULT"
    /// Refuse the delete while referencing rows exist, immediately.
    case restrict = "RESTRICT"
    /// Refuse the delete at the end of the statement (SQLite's default).
    case noAction = "NO ACTION"
}

/// The options given to `@Column(…)`: explicit name, constraints, foreign key.
///
/// Built out of line by ``PrototypeConstruction``'s `record` functions, from the scalars the
/// wrappers' `@inlinable` initializers pass: those initializers are inlined into every
/// object's creation and must stay small. Only a class's prototype keeps them (see
/// ``ColumnDescriptor``).
struct ColumnOptions {
    var name: String?
    var unique: Bool
    var indexed: Bool
    var references: ActiveObject.Type?
    var onDelete: ForeignKeyAction
    /// The column's name in earlier versions of the model (`@Column(renamedFrom:)`).
    var renamedFrom: String?
    /// The job the library does for the column (`@Column(role:)`).
    var role: ColumnRoleKind?

    init(name: String?, unique: Bool, indexed: Bool, references: ActiveObject.Type? = nil,
         onDelete: ForeignKeyAction = .noAction) {
        self.name = name
        self.unique = unique
        self.indexed = indexed
        self.references = references
        self.onDelete = onDelete
    }
}

/// Marks a stored property of an ``ActiveObject`` subclass as a persisted column.
///
/// ```swift
/// final class Person: ActiveObject {
///     @Column var name: String = ""                      // TEXT NOT NULL DEFAULT ''
///     @Column var rating: Double? = nil                  // REAL, nullable
///     @Column("photo_data") var photo: Data? = nil       // explicit column name
///     @Column(unique: true) var email: String = ""       // UNIQUE
///     @Column(indexed: true) var age: Int = 0            // CREATE INDEX
///     @Column(references: Group.self, onDelete: .cascade) var groupId: Int64? = nil
///     @Column(renamedFrom: "headline") var subtitle = ""  // createTable() renames the column
///     @Column(role: .updatedAt) var updatedAt: Date? = nil   // stamped on every save
/// }
/// ```
///
/// The value lives in the object itself, as a stored property's does, and nothing else does:
/// a `@Column` property takes exactly the memory of its value. Reading it costs what reading a
/// stored property costs, plus a check of a few instructions that registers the read when it
/// happens inside an observation-tracking scope (a SwiftUI body, `withObservationTracking`):
/// models are `Observable` property by property (see <doc:SwiftUIAndObservation>).
/// Assigning it in an object loaded from the database remembers, once, the value before (for
/// change tracking), and notifies the property's observers when the value differs.
///
/// `$name` (the projected value) names the column in queries:
/// `Person.where(\.$name == "Joe")`.
///
/// `@Column` is for stored properties of ``ActiveObject`` subclasses only: declared in a
/// struct, or wrapped in another property wrapper, it does not compile.
@propertyWrapper
public struct Column<Value: ColumnValue> {
    /// The current value: the wrapper's only stored property, so the wrapper has the value's
    /// layout (the library reads and writes it at the property's offset in the object).
    @usableFromInline var value: Value

    /// Not used: the property is read and written through
    /// ``subscript(_enclosingInstance:wrapped:storage:)``, which sees the object.
    @available(*, unavailable, message: "@Column is only available on stored properties of ActiveObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("@Column is only available on stored properties of ActiveObject subclasses") }
        set { fatalError("@Column is only available on stored properties of ActiveObject subclasses") }
    }

    /// Declares a column named after the property (through the model's `columnNaming`),
    /// or `name` when given.
    ///
    /// The last three parameters are filled in by the compiler with the place of the
    /// declaration (never pass them): the schema build matches each declaration's options to
    /// its property by that place.
    @inlinable
    public init(wrappedValue: Value, _ name: String? = nil, unique: Bool = false, indexed: Bool = false,
                _file: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column) {
        self.value = wrappedValue
        if PrototypeConstruction.isActive {
            PrototypeConstruction.record(name: name, unique: unique, indexed: indexed, wrapper: Self.self,
                                         file: _file, line: _line, column: _column)
        }
    }

    /// Declares a column that an earlier version of the model named `renamedFrom`: when the
    /// table has a column of that name and none of the new one, `createTable()` renames it
    /// (every value kept) instead of adding an empty column.
    ///
    /// ```swift
    /// @Column(renamedFrom: "headline") var subtitle = ""
    /// ```
    /// Naming a column that another property maps to, or the former name of another property,
    /// is ``ActiveObjectError/invalidModel(model:reason:)``.
    // A separate initializer rather than a defaulted parameter of the one above: every object
    // creation runs that one, and it must stay small enough to be inlined.
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

    /// Declares a column the library maintains: a creation or change date, a soft-delete
    /// mark, or a version for optimistic locking (see ``ColumnRole``).
    ///
    /// ```swift
    /// @Column(role: .createdAt) var createdAt: Date? = nil
    /// @Column(role: .lockVersion) var lockVersion: Int = 0
    /// ```
    /// Each role exists only for the types it serves (`.lockVersion` on a `String` does not
    /// compile); two columns of one role in a model are ``ActiveObjectError/invalidModel(model:reason:)``.
    @inlinable
    public init(wrappedValue: Value, _ name: String? = nil, role: ColumnRole<Value>, indexed: Bool = false,
                renamedFrom: String? = nil,
                _file: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column) {
        self.value = wrappedValue
        if PrototypeConstruction.isActive {
            PrototypeConstruction.record(name: name, unique: false, indexed: indexed, references: nil,
                                         onDelete: .noAction, renamedFrom: renamedFrom, role: role.kind, wrapper: Self.self,
                                         file: _file, line: _line, column: _column)
        }
    }

    /// Declares a foreign-key column: `REFERENCES parent(primaryKey) ON DELETE action`.
    ///
    /// ```swift
    /// @Column(references: Group.self, onDelete: .cascade) var groupId: Int64? = nil
    /// ```
    @inlinable
    public init(wrappedValue: Value, _ name: String? = nil, unique: Bool = false, indexed: Bool = false,
                references parent: ActiveObject.Type, onDelete: ForeignKeyAction = .noAction,
                renamedFrom: String? = nil,
                _file: StaticString = #fileID, _line: UInt = #line, _column: UInt = #column) {
        self.value = wrappedValue
        if PrototypeConstruction.isActive {
            PrototypeConstruction.record(name: name, unique: unique, indexed: indexed, references: parent,
                                         onDelete: onDelete, renamedFrom: renamedFrom, role: nil, wrapper: Self.self,
                                         file: _file, line: _line, column: _column)
        }
    }

    /// Reads and writes the property of `object`.
    ///
    /// Reading: the value, after registering the read with the object's observers when this
    /// thread is inside an observation-tracking scope (a few instructions tell when it is not).
    /// Writing: for a new, unobserved object, a plain store; otherwise through
    /// ``ColumnAssignment``, which remembers the value before for change tracking and notifies
    /// observers of a different value.
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
                // The address ends its access at once: no access spans a call, so the optimizer
                // keeps proving that accesses to the property never overlap.
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

    /// Not used: `$name` is read through ``subscript(_enclosingInstance:projected:storage:)``.
    @available(*, unavailable, message: "@Column is only available on stored properties of ActiveObject subclasses")
    public var projectedValue: ColumnReference<Value> {
        fatalError("@Column is only available on stored properties of ActiveObject subclasses")
    }

    /// A reference to this column for queries, ordering and relations: `\.$name`.
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

/// Where a column wrapper is declared: `#fileID`, `#line` and `#column` of its declaration
/// (the compiler gives the declaration's place even when an `init()` assigns the property).
@usableFromInline
struct SourcePlace: Hashable {
    let file: String
    let line: UInt
    let column: UInt

    @usableFromInline
    init(file: StaticString, line: UInt, column: UInt) {
        self.file = file.description
        self.line = line
        self.column = column
    }
}

/// The projected value of a ``Column`` (`$name`): identifies the column in queries.
///
/// You never create one; you write key paths to it:
/// ```swift
/// Person.where(\.$age > 30).order(by: \.$name)
/// ```
public struct ColumnReference<Value>: Sendable {
    /// Where the column's property lies in the object (its byte offset), or one of the markers
    /// below. The schema turns it into the column.
    @usableFromInline let position: Int

    @inlinable
    init(offset: Int) { self.position = offset }

    @inlinable
    init(position: Int) { self.position = position }

    /// The position of the primary key (`\.$id`).
    @usableFromInline static var primaryKeyPosition: Int { -1 }
}
