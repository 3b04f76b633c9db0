// The sqlite3 C API for the raw reference contender of the benchmarks.
#ifndef ACTIVEOBJECTS_BENCH_CSQLITE_SHIM_H
#define ACTIVEOBJECTS_BENCH_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro around a function-pointer cast, which Swift does not import.
static inline sqlite3_destructor_type bench_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
