/// A column wrapper's bookkeeping, in one word.
///
/// Every `@Column` / `@JSONColumn` wrapper stores one of these next to its value. Ordinary
/// objects use the first three cases; only the prototype a class's schema is built from
/// carries `.prototype`.
@usableFromInline
enum ColumnState {
    /// In a new object: nothing to track (an INSERT writes every column).
    case fresh
    /// Holds what the database holds.
    case clean
    /// Assigned since the object was last loaded or saved; the value before that first
    /// assignment, so that an assignment of an equal value is not a change.
    case changed(OriginalValue)
    /// The prototype's wrapper: the column's declaration, and no change tracking.
    case prototype(ColumnDescriptor)

    /// The declaration, in the prototype's wrappers only.
    @inlinable
    var descriptor: ColumnDescriptor? {
        if case .prototype(let descriptor) = self { return descriptor }
        return nil
    }
}

/// The value a property had before its first assignment since the last load or save. Boxed:
/// only the properties of loaded objects that are changed pay for it.
///
/// Its initializer is inlinable, so the setter of every `@Column` property is visible code
/// to the compiler (no opaque call inside the property's write access): in the module that
/// declares a model, the optimizer can then prove that no two accesses to a column property
/// overlap and drop their dynamic exclusivity checks, as it does for plain stored properties.
@usableFromInline
final class OriginalValue {
    @usableFromInline let value: Any

    @inlinable
    init(_ value: Any) { self.value = value }
}

/// A column's declaration as written in `@Column(…)`, and its slot in the schema. Present
/// only in the wrappers of a class's prototype.
///
/// Its identity matters: the wrapper initializers record every descriptor they create while a
/// prototype is built (``PrototypeConstruction``), and the schema build checks that the
/// columns reflection found hold exactly those descriptors (``PrototypeColumnCheck``).
@usableFromInline
final class ColumnDescriptor {
    let options: ColumnOptions
    /// The column's position in the schema, set once when the schema is built.
    @usableFromInline var slot = -1

    @usableFromInline
    init(options: ColumnOptions) { self.options = options }
}
