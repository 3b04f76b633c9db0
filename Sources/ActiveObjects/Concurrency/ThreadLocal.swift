#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One object per thread (a `pthread` key): created on the thread's first use, released when
/// the thread ends. Faster than Foundation's thread dictionary, and free of locks.
final class ThreadLocal<Box: AnyObject>: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        // The destructor releases the thread's box when the thread ends.
        let status = pthread_key_create(&key) { box in
            // Optional on Linux, not on Darwin: accept both.
            let pointer: UnsafeMutableRawPointer? = box
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        precondition(status == 0, "ActiveObjects could not create a thread-local key (pthread_key_create: \(status))")
        self.key = key
    }

    /// This thread's box, made by `make` on first use.
    @inline(__always)
    func value(_ make: () -> Box) -> Box {
        if let box = pthread_getspecific(key) {
            return Unmanaged<Box>.fromOpaque(box).takeUnretainedValue()
        }
        let box = make()
        pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        return box
    }
}
