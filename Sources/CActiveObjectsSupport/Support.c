#if defined(__linux__) && !defined(__ANDROID__)
#define _GNU_SOURCE
#include <link.h>
#endif
#include "CActiveObjectsSupport.h"
#if (defined(__linux__) && !defined(__ANDROID__)) || defined(__APPLE__)
#include <pthread.h>
#endif

long activeobjects_prototypes_in_progress = 0;

// MARK: - Locating the Observation runtime's per-thread tracking pointer (see the header)

#if defined(__linux__) && !defined(__ANDROID__)

// Where the tracking pointer is, once located: the module and offset `__tls_get_addr` takes
// (module 0: not located); and its distance from the thread pointer when that is the same on
// every thread (see the header).
static unsigned long observation_tls_module = 0;
static unsigned long observation_tls_offset = 0;
long activeobjects_observation_tp_offset = 0;

int activeobjects_observation_may_be_tracking_slowly(void) {
    unsigned long module = __atomic_load_n(&observation_tls_module, __ATOMIC_ACQUIRE);
    if (module == 0) return 1;
    activeobjects_tls_location location = { module, __atomic_load_n(&observation_tls_offset, __ATOMIC_RELAXED) };
    return *(void *const *)__tls_get_addr(&location) != 0;
}

// The distance of `location` from the thread pointer, on the calling thread.
static long distance_from_thread_pointer(activeobjects_tls_location *location) {
    return (long)((char *)__tls_get_addr(location) - activeobjects_thread_pointer());
}

static void *measure_distance(void *location) {
    return (void *)distance_from_thread_pointer((activeobjects_tls_location *)location);
}

// The thread-local blocks of the calibrating thread: one entry per module that has one. Only
// the calibration (one thread, once per process) touches these.
enum { MAXIMUM_TLS_BLOCKS = 64 };
static struct {
    unsigned long module;
    const unsigned char *data;
    unsigned long words;
} tls_blocks[MAXIMUM_TLS_BLOCKS];
static long tls_block_count = 0;

static int note_tls_block(struct dl_phdr_info *info, size_t size, void *unused) {
    (void)size;
    (void)unused;
    if (info->dlpi_tls_modid == 0 || info->dlpi_tls_data == 0) return 0;
    for (int index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type != PT_TLS || tls_block_count == MAXIMUM_TLS_BLOCKS) continue;
        tls_blocks[tls_block_count].module = info->dlpi_tls_modid;
        tls_blocks[tls_block_count].data = info->dlpi_tls_data;
        tls_blocks[tls_block_count].words = header->p_memsz / sizeof(void *);
        tls_block_count++;
    }
    return 0;
}

long activeobjects_observation_candidates_prepare(void) {
    tls_block_count = 0;
    dl_iterate_phdr(note_tls_block, 0);
    long total = 0;
    for (long block = 0; block < tls_block_count; block++) total += (long)tls_blocks[block].words;
    return total;
}

// The block and word of a candidate number.
static int find_candidate(long candidate, long *block, unsigned long *word) {
    for (long index = 0; index < tls_block_count; index++) {
        if (candidate < (long)tls_blocks[index].words) {
            *block = index;
            *word = (unsigned long)candidate;
            return 1;
        }
        candidate -= (long)tls_blocks[index].words;
    }
    return 0;
}

unsigned long activeobjects_observation_candidate_read(long candidate) {
    long block;
    unsigned long word;
    if (!find_candidate(candidate, &block, &word)) return 0;
    return ((const unsigned long *)tls_blocks[block].data)[word];
}

void activeobjects_observation_candidate_publish(long candidate) {
    long block;
    unsigned long word;
    if (!find_candidate(candidate, &block, &word)) return;
    activeobjects_tls_location location = { tls_blocks[block].module, word * sizeof(void *) };
    __atomic_store_n(&observation_tls_offset, location.offset, __ATOMIC_RELAXED);
    __atomic_store_n(&observation_tls_module, location.module, __ATOMIC_RELEASE);
    // A static block lies at the same distance from the thread pointer on every thread: check
    // on this thread and on a new one (a block allocated per thread would differ), then use
    // the distance.
    if (activeobjects_thread_pointer() == 0) return;
    long here = distance_from_thread_pointer(&location);
    pthread_t thread;
    void *there = 0;
    if (pthread_create(&thread, 0, measure_distance, &location) != 0) return;
    if (pthread_join(thread, &there) != 0) return;
    if (here != 0 && (long)there == here) {
        __atomic_store_n(&activeobjects_observation_tp_offset, here, __ATOMIC_RELAXED);
    }
}

int activeobjects_observation_candidate_verify(long candidate) {
    long block;
    unsigned long word;
    if (!find_candidate(candidate, &block, &word)) return 0;
    activeobjects_tls_location location = { tls_blocks[block].module, word * sizeof(void *) };
    return __tls_get_addr(&location) == (const void *)&((const unsigned long *)tls_blocks[block].data)[word];
}

unsigned long activeobjects_current_stack_top(void) {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
    void *low = 0;
    size_t size = 0;
    int failed = pthread_attr_getstack(&attributes, &low, &size);
    pthread_attr_destroy(&attributes);
    return failed ? 0 : (unsigned long)low + size;
}

#elif defined(__APPLE__)

long activeobjects_observation_tsd_key = -1;

// The thread-specific-data keys Apple's libpthread reserves for the Swift runtime
// (__PTK_FRAMEWORK_SWIFT_KEY0 … KEY9).
enum { FIRST_SWIFT_KEY = 100, SWIFT_KEY_COUNT = 10 };

long activeobjects_observation_candidates_prepare(void) { return SWIFT_KEY_COUNT; }

unsigned long activeobjects_observation_candidate_read(long candidate) {
    if (candidate < 0 || candidate >= SWIFT_KEY_COUNT) return 0;
    return (unsigned long)pthread_getspecific((pthread_key_t)(FIRST_SWIFT_KEY + candidate));
}

void activeobjects_observation_candidate_publish(long candidate) {
    if (candidate < 0 || candidate >= SWIFT_KEY_COUNT) return;
    __atomic_store_n(&activeobjects_observation_tsd_key, FIRST_SWIFT_KEY + candidate, __ATOMIC_RELEASE);
}

int activeobjects_observation_candidate_verify(long candidate) {
    return candidate >= 0 && candidate < SWIFT_KEY_COUNT;
}

unsigned long activeobjects_current_stack_top(void) {
    return (unsigned long)pthread_get_stackaddr_np(pthread_self());
}

#else

int activeobjects_observation_candidate_verify(long candidate) { (void)candidate; return 0; }
unsigned long activeobjects_current_stack_top(void) { return 0; }
long activeobjects_observation_candidates_prepare(void) { return 0; }
unsigned long activeobjects_observation_candidate_read(long candidate) { (void)candidate; return 0; }
void activeobjects_observation_candidate_publish(long candidate) { (void)candidate; }

#endif

// MARK: - Connection settings (see the header)

#if __has_include(<sqlite3.h>)
#include <sqlite3.h>
#else
typedef struct sqlite3 sqlite3;
int sqlite3_db_config(sqlite3 *, int op, ...);
#endif
#ifndef SQLITE_DBCONFIG_ENABLE_FKEY
#define SQLITE_DBCONFIG_ENABLE_FKEY 1002
#endif
#ifndef SQLITE_DBCONFIG_LEGACY_ALTER_TABLE
#define SQLITE_DBCONFIG_LEGACY_ALTER_TABLE 1012
#endif

int activeobjects_config_foreign_keys(void *connection, int value, int *now) {
    return sqlite3_db_config((sqlite3 *)connection, SQLITE_DBCONFIG_ENABLE_FKEY, value, now);
}

int activeobjects_config_legacy_alter_table(void *connection, int value, int *now) {
    return sqlite3_db_config((sqlite3 *)connection, SQLITE_DBCONFIG_LEGACY_ALTER_TABLE, value, now);
}
