#ifndef ACTIVEOBJECTS_SUPPORT_H
#define ACTIVEOBJECTS_SUPPORT_H

// The C half of the library's hand-made primitives (the Swift half is
// Sources/ActiveObjects/Concurrency/Primitives.swift): atomic operations on a machine word.
// Swift's own `Synchronization.Atomic` needs macOS 15 / iOS 18, later than the platforms the
// package supports, so the word is a `long` the library allocates and these builtins touch.

// How many class prototypes are being created right now, process-wide (see
// PrototypeConstruction.swift). Every `@Column` initializer of every object reads it, so it is
// a C global: reading it costs one atomic load, with no lazy-initialization check and no Swift
// access to instrument (Thread Sanitizer sees only the atomic operations).
extern long activeobjects_prototypes_in_progress;

static inline long activeobjects_prototypes_in_progress_load(void) {
    return __atomic_load_n(&activeobjects_prototypes_in_progress, __ATOMIC_ACQUIRE);
}

static inline void activeobjects_prototypes_in_progress_add(long delta) {
    __atomic_add_fetch(&activeobjects_prototypes_in_progress, delta, __ATOMIC_ACQ_REL);
}

/// Load with acquire ordering: what the storing thread wrote before its release store is visible.
static inline long activeobjects_atomic_load(const long *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Store with release ordering.
static inline void activeobjects_atomic_store(long *word, long value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/// Sequentially consistent load and store: for the two-sided handshakes where each side stores
/// its own word and then loads the other's (a reader given back / a waiter registering), which
/// acquire/release alone does not order.
static inline long activeobjects_atomic_load_seq_cst(const long *word) {
    return __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

static inline void activeobjects_atomic_store_seq_cst(long *word, long value) {
    __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
}

/// Replaces `expected` by `desired` if the word holds `expected`; true when it did.
static inline int activeobjects_atomic_compare_exchange(long *word, long expected, long desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/// Adds `delta` and returns the new value.
static inline long activeobjects_atomic_add(long *word, long delta) {
    return __atomic_add_fetch(word, delta, __ATOMIC_SEQ_CST);
}

#endif
