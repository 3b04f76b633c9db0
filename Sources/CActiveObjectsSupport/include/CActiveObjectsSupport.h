#ifndef ACTIVEOBJECTS_SUPPORT_H
#define ACTIVEOBJECTS_SUPPORT_H

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

#endif
