// Thin C helpers for the parts of the SQLite C API that Swift cannot call directly.
#ifndef ACTIVEOBJECTS_CSQLITE_SHIM_H
#define ACTIVEOBJECTS_CSQLITE_SHIM_H

#include <sqlite3.h>

// sqlite3_db_config is variadic, so Swift cannot call it. These wrappers fix the arguments.
// https://www.sqlite.org/c3ref/db_config.html

/// Turns double-quoted string literals off (or on) for DML statements.
/// With DQS on, a misspelled "column" silently becomes the string 'column'.
static inline int activeobjects_set_dqs_dml(sqlite3 *db, int enabled) {
#ifdef SQLITE_DBCONFIG_DQS_DML
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, enabled, (int *)0);
#else
    return SQLITE_OK;
#endif
}

/// Turns double-quoted string literals off (or on) for DDL statements.
static inline int activeobjects_set_dqs_ddl(sqlite3 *db, int enabled) {
#ifdef SQLITE_DBCONFIG_DQS_DDL
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, enabled, (int *)0);
#else
    return SQLITE_OK;
#endif
}

/// Enables or disables foreign key enforcement.
static inline int activeobjects_set_foreign_keys(sqlite3 *db, int enabled) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, enabled, (int *)0);
}

/// SQLITE_TRANSIENT is a macro around a function-pointer cast, which Swift does not import.
/// Binding with it makes SQLite copy the bytes before the call returns.
static inline sqlite3_destructor_type activeobjects_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
