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

// MARK: - Is this thread inside an observation-tracking scope?
//
// Every `@Column` getter of every object asks this, so it is inlined and costs a few
// instructions; the Swift half (Sources/ActiveObjects/Observable/TrackingProbe.swift) explains
// the design. The Observation runtime keeps, per thread, a pointer that is non-null exactly
// while `withObservationTracking` (or SwiftUI, or `Observations`) runs its closure on that
// thread. The library learns once per process where that pointer lives (a word of a module's
// thread-local block on Linux, a thread-specific-data key on Apple platforms) by watching it
// change under `withObservationTracking` on a thread of its own, and publishes the location
// here. Until it is located, or if it cannot be, the answer is "maybe", and the caller then
// registers the access the slow but always correct way.

#if defined(__linux__) && !defined(__ANDROID__)
// A location in thread-local storage as `__tls_get_addr` takes it: a module's block, an offset.
typedef struct {
    unsigned long module;
    unsigned long offset;
} activeobjects_tls_location;

// glibc's (and musl's) resolver of a thread-local address; the argument is their `tls_index`.
extern void *__tls_get_addr(activeobjects_tls_location *location);

// The pointer's distance from the thread pointer, when the Observation runtime's thread-local
// block is static (the usual case: a library loaded at startup), so the same on every thread:
// the pointer is read in two instructions. 0 while not located or not static.
extern long activeobjects_observation_tp_offset;

/// The calling thread's thread pointer (the base static thread-local blocks hang from).
static inline char *activeobjects_thread_pointer(void) {
#if defined(__x86_64__)
    char *pointer;
    __asm__ __volatile__("mov %%fs:0, %0" : "=r"(pointer));
    return pointer;
#elif defined(__aarch64__)
    char *pointer;
    __asm__ __volatile__("mrs %0, tpidr_el0" : "=r"(pointer));
    return pointer;
#else
    return 0;
#endif
}

/// 1 when the pointer is read at a fixed distance from the thread pointer.
static inline int activeobjects_observation_reads_at_fixed_distance(void) {
    return __atomic_load_n(&activeobjects_observation_tp_offset, __ATOMIC_RELAXED) != 0;
}

// The slower answer, when the pointer is not at a fixed distance from the thread pointer:
// through `__tls_get_addr` once located, else "maybe".
int activeobjects_observation_may_be_tracking_slowly(void);
#elif defined(__APPLE__)
#include <pthread.h>
// The pointer's thread-specific-data key; -1 while it is not located.
extern long activeobjects_observation_tsd_key;
#endif

/// 1 when this thread may be inside an observation-tracking scope; 0 when it certainly is not.
static inline __attribute__((always_inline)) int activeobjects_observation_may_be_tracking(void) {
#if defined(__linux__) && !defined(__ANDROID__)
    long offset = __atomic_load_n(&activeobjects_observation_tp_offset, __ATOMIC_RELAXED);
    if (__builtin_expect(offset != 0, 1)) {
        return *(void *const *)(activeobjects_thread_pointer() + offset) != 0;
    }
    return activeobjects_observation_may_be_tracking_slowly();
#elif defined(__APPLE__)
    long key = __atomic_load_n(&activeobjects_observation_tsd_key, __ATOMIC_ACQUIRE);
    if (__builtin_expect(key < 0, 0)) return 1;
    return pthread_getspecific((pthread_key_t)key) != 0;
#else
    return 1;
#endif
}

// The calibration's view of the candidate locations, on the calling thread (it runs once per
// process, on a thread of its own). `prepare` lists them (Linux: every word of every
// thread-local block the thread has; Apple: the keys reserved for the Swift runtime) and
// returns how many there are; `read` gives a candidate's value on this thread; `publish` makes
// a candidate the location `activeobjects_observation_may_be_tracking` reads.
long activeobjects_observation_candidates_prepare(void);
unsigned long activeobjects_observation_candidate_read(long candidate);
void activeobjects_observation_candidate_publish(long candidate);
// 1 when the address `activeobjects_observation_may_be_tracking` would read for `candidate` is
// the one `read` reads on this thread.
int activeobjects_observation_candidate_verify(long candidate);
// The highest address of the calling thread's stack (0 when unknown): a pointer into the
// stack frames above the caller lies between the caller's locals and it.
unsigned long activeobjects_current_stack_top(void);


// MARK: - Connection settings that SQL cannot change inside a transaction
//
// `sqlite3_db_config` is variadic, so Swift cannot call it; these wrappers fix its arguments
// (Support.c). `connection` is the `sqlite3 *` handle (a `void *` here, so that this header
// does not need SQLite's). `value` is 1 (on), 0 (off) or -1 (leave as is); `*now` receives the
// state after the call. They return SQLite's result code (0 for SQLITE_OK).

// Foreign-key enforcement (SQLITE_DBCONFIG_ENABLE_FKEY). Unlike `PRAGMA foreign_keys`, which
// is a no-op inside a transaction, this takes effect at once, also inside one: a table
// rebuild inside a caller's transaction then drops the old table without the implicit DELETE
// that would fire the children's ON DELETE actions.
int activeobjects_config_foreign_keys(void *connection, int value, int *now);

// `PRAGMA legacy_alter_table` (SQLITE_DBCONFIG_LEGACY_ALTER_TABLE): while on, ALTER TABLE
// RENAME neither rewrites nor checks the views and triggers that mention the table.
int activeobjects_config_legacy_alter_table(void *connection, int value, int *now);

#endif
