import CActiveObjectsSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The primitives the library must make by hand, in one place. Everything else uses Foundation
// (`NSLock`, `NSCondition`) or Dispatch (queues, sources, timers).
//
// - `AtomicWord` / `AtomicFlag`: Swift's `Synchronization.Atomic` needs macOS 15 / iOS 18, later
//   than the platforms the package supports; the builtins are in the CActiveObjectsSupport target.
// - `ThreadLocal`: per-thread state read on every call (a `pthread` key); Foundation's thread
//   dictionary costs a dictionary lookup and a bridging cast each time.
// - `LockedValue`: a value and the `NSLock` that guards it, so that no caller forgets the lock.

/// A machine word that any thread reads and writes atomically.
final class AtomicWord: @unchecked Sendable {
    // Safety of @unchecked Sendable: the word is only touched through atomic operations.
    private let word: UnsafeMutablePointer<CLong>

    init(_ value: Int = 0) {
        word = UnsafeMutablePointer<CLong>.allocate(capacity: 1)
        word.initialize(to: CLong(value))
    }

    deinit { word.deallocate() }

    /// The value (an acquire load: what was written before the matching ``store(_:)`` is visible).
    @inline(__always)
    var value: Int { Int(activeobjects_atomic_load(word)) }

    /// Stores `value` (a release store).
    @inline(__always)
    func store(_ value: Int) { activeobjects_atomic_store(word, CLong(value)) }

    /// A sequentially consistent load, for handshakes where each side stores its own word and
    /// then loads the other's (see ``ReaderPool``).
    @inline(__always)
    var sequentiallyConsistentValue: Int { Int(activeobjects_atomic_load_seq_cst(word)) }

    /// A sequentially consistent store.
    @inline(__always)
    func storeSequentiallyConsistent(_ value: Int) { activeobjects_atomic_store_seq_cst(word, CLong(value)) }

    /// Replaces `expected` by `desired` if the word holds `expected`; true when it did.
    @inline(__always)
    func compareExchange(expected: Int, desired: Int) -> Bool {
        activeobjects_atomic_compare_exchange(word, CLong(expected), CLong(desired)) != 0
    }

    /// Adds `delta` and returns the new value.
    @discardableResult @inline(__always)
    func add(_ delta: Int) -> Int { Int(activeobjects_atomic_add(word, CLong(delta))) }
}

/// A flag any thread can read with one atomic load.
final class AtomicFlag: Sendable {
    private let word = AtomicWord()

    /// Whether ``set()`` was called (and ``clear()`` not since).
    @inline(__always)
    var isSet: Bool { word.value != 0 }

    /// Sets the flag.
    func set() { word.store(1) }

    /// Clears the flag.
    func clear() { word.store(0) }

    /// Sets the flag; true when this call set it (it was clear).
    func setIfClear() -> Bool { word.compareExchange(expected: 0, desired: 1) }
}

/// One object per thread (a `pthread` key): created on the thread's first use, released when
/// the thread ends. Free of locks.
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

/// A value protected by a lock. The lock is not recursive: `body` must not call back into the
/// same `LockedValue`.
final class LockedValue<Value>: @unchecked Sendable {
    // Safety of @unchecked Sendable: `value` is only touched inside `withLock`, which holds `lock`
    // (so no dynamic exclusivity check is needed either).
    private let lock = NSLock()
    @exclusivity(unchecked) private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
