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
    nonisolated(unsafe) private static let inProgress: UnsafeMutablePointer<CLong> = {
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

    /// True while this thread is creating a prototype.
    @usableFromInline
    static var isActive: Bool {
        activeobjects_atomic_load(inProgress) != 0 && pthread_getspecific(key) != nil
    }

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
