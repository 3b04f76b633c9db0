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
/// A thread-local flag (not a global one) because other threads create objects meanwhile.
@usableFromInline
enum PrototypeConstruction {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "ActiveObjects could not create a thread-local key (pthread_key_create: \(status))")
        return key
    }()

    /// True while this thread is creating a prototype.
    @usableFromInline
    static var isActive: Bool { pthread_getspecific(key) != nil }

    /// Runs `body` (which creates the prototype) with the flag set on this thread.
    static func run<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, previous) }
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
