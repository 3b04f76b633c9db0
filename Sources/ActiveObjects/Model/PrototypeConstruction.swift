import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells `@Column` initializers, per thread, that the object being created is the
/// prototype the schema reflects on.
///
/// Only the prototype needs a column's options (explicit name, constraints) and its slot, so
/// only the prototype's wrappers allocate a ``ColumnDescriptor`` to hold them; every other
/// object's wrappers hold just their value, which keeps objects small and fetches fast.
/// A thread-local flag (not a global one) because other threads create objects meanwhile;
/// a process-wide atomic count of constructions in progress spares every other object
/// creation the thread-local lookup.
@usableFromInline
enum PrototypeConstruction {
    // Safety of nonisolated(unsafe): the pointer itself never changes; the counter it points
    // to is only read and written through the atomic functions of the C shim.
    @usableFromInline
    nonisolated(unsafe) static let inProgress: UnsafeMutablePointer<CLong> = {
        let counter = UnsafeMutablePointer<CLong>.allocate(capacity: 1)
        counter.initialize(to: 0)
        return counter
    }()

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "ActiveObjects could not create a thread-local key (pthread_key_create: \(status))")
        return key
    }()

    /// True while this thread is creating a prototype. Inlined into every `@Column`
    /// initializer: the common answer (no prototype anywhere) costs one atomic load.
    @inlinable
    static var isActive: Bool {
        activeobjects_atomic_load(inProgress) != 0 && isActiveOnThisThread
    }

    @usableFromInline
    static var isActiveOnThisThread: Bool { pthread_getspecific(key) != nil }

    /// Runs `body` (which creates the prototype) with the flag set on this thread.
    static func run<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        activeobjects_atomic_add(inProgress, 1)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer {
            pthread_setspecific(key, previous)
            activeobjects_atomic_add(inProgress, -1)
        }
        return try body()
    }
}

/// A column's declaration as written in `@Column(…)`, and its slot in the schema. Present
/// only in the wrappers of a class's prototype.
@usableFromInline
final class ColumnDescriptor {
    let options: ColumnOptions
    /// The column's position in the schema, set once when the schema is built.
    @usableFromInline var slot = -1

    @usableFromInline
    init(options: ColumnOptions) { self.options = options }
}

/// A column wrapper's bookkeeping, in one word.
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

    @inlinable
    var descriptor: ColumnDescriptor? {
        if case .prototype(let descriptor) = self { return descriptor }
        return nil
    }
}

/// The value a property had before its first assignment since the last load or save. Boxed:
/// only the properties of loaded objects that are changed pay for it.
@usableFromInline
final class OriginalValue {
    let value: Any

    @usableFromInline
    init(_ value: Any) { self.value = value }
}
