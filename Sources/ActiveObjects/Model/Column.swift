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
/// `@usableFromInline` so that the wrappers' initializers can be `@inlinable`: specialized in
/// the model's module, creating an object then costs no runtime generic-metadata lookups.
/// Only a class's prototype keeps them (see ``ColumnDescriptor``).
@usableFromInline
struct ColumnOptions {
    var name: String?
    var unique: Bool
    var indexed: Bool
    var references: ActiveObject.Type?
    var onDelete: ForeignKeyAction

    @usableFromInline
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
/// }
/// ```
///
/// The value lives in the property itself, so reading and writing cost what a plain stored
/// property costs. `$name` (the projected value) names the column in queries:
/// `Person.where(\.$name == "Joe")`.
@propertyWrapper
public struct Column<Value: ColumnValue> {
    /// Whether the property was assigned since the last load or save, and its value before
    /// (or, in the class's prototype only, the column's declaration).
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

    /// Declares a column named after the property (through the model's `columnNaming`),
    /// or `name` when given.
    @inlinable
    public init(wrappedValue: Value, _ name: String? = nil, unique: Bool = false, indexed: Bool = false) {
        self.value = wrappedValue
        self.state = PrototypeConstruction.isActive
            ? PrototypeConstruction.prototypeState(ColumnOptions(name: name, unique: unique, indexed: indexed))
            : .fresh
    }

    /// Declares a foreign-key column: `REFERENCES parent(primaryKey) ON DELETE action`.
    ///
    /// ```swift
    /// @Column(references: Group.self, onDelete: .cascade) var groupId: Int64? = nil
    /// ```
    @inlinable
    public init(wrappedValue: Value, _ name: String? = nil, unique: Bool = false, indexed: Bool = false,
                references parent: ActiveObject.Type, onDelete: ForeignKeyAction = .noAction) {
        self.value = wrappedValue
        self.state = PrototypeConstruction.isActive
            ? PrototypeConstruction.prototypeState(ColumnOptions(name: name, unique: unique, indexed: indexed,
                                                        references: parent, onDelete: onDelete))
            : .fresh
    }


    /// A reference to this column for queries, ordering and relations: `\.$name`.
    @inlinable
    public var projectedValue: ColumnReference<Value> {
        ColumnReference(slot: state.descriptor?.slot ?? ColumnReference<Value>.noSlot)
    }
}

/// The projected value of a ``Column`` (`$name`): identifies the column in queries.
///
/// You never create one; you write key paths to it:
/// ```swift
/// Person.where(\.$age > 30).order(by: \.$name)
/// ```
public struct ColumnReference<Value>: Sendable {
    @usableFromInline let slot: Int

    @inlinable
    init(slot: Int) { self.slot = slot }

    /// The slot of the primary key (`\.$id`).
    @usableFromInline static var primaryKeySlot: Int { -1 }
    /// No column: the reference was read from an object that is not the class's prototype.
    @usableFromInline static var noSlot: Int { Int.min }
}
