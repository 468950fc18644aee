// The system's SQLite for Swift. SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift
// cannot import: the binders that need it live here.
#ifndef GEOFENCE_CSQLITE_SHIM_H
#define GEOFENCE_CSQLITE_SHIM_H
#include <sqlite3.h>

static inline int gfa_sqlite_bind_text(sqlite3_stmt *s, int i, const char *text, int n) {
    return sqlite3_bind_text(s, i, text, n, SQLITE_TRANSIENT);
}

static inline int gfa_sqlite_bind_blob(sqlite3_stmt *s, int i, const void *bytes, int n) {
    return sqlite3_bind_blob(s, i, bytes, n, SQLITE_TRANSIENT);
}
// Extended codes are macro expressions, which Swift does not import.
static inline int gfa_sqlite_ioerr_write(void) { return SQLITE_IOERR_WRITE; }
static inline int gfa_sqlite_ioerr_fsync(void) { return SQLITE_IOERR_FSYNC; }
#endif
