import CSQLite

/// A flag any thread can read with one atomic load (the hot paths test it on every read or
/// every release of the writer).
final class AtomicFlag: @unchecked Sendable {
    // Safety of @unchecked Sendable: the word is only touched through atomic loads and stores.
    private let word: UnsafeMutablePointer<CLong>

    init() {
        word = UnsafeMutablePointer<CLong>.allocate(capacity: 1)
        word.initialize(to: 0)
    }

    deinit { word.deallocate() }

    /// Whether ``set()`` was called (and ``clear()`` not since).
    @inline(__always)
    var isSet: Bool { activeobjects_atomic_load(word) != 0 }

    /// Sets the flag.
    func set() { activeobjects_atomic_store(word, 1) }

    /// Clears the flag.
    func clear() { activeobjects_atomic_store(word, 0) }
}
