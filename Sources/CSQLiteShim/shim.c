#include "CSQLiteShim.h"

// sqlite-nio builds SQLite with its functions renamed sqlite_nio_sqlite3_*; its header is not
// reachable from this target, so the one function used is declared here.
int sqlite_nio_sqlite3_db_config(void *db, int op, ...);

// SQLITE_DBCONFIG_ENABLE_QPSG from sqlite3.h
#define PLAZA_SQLITE_DBCONFIG_ENABLE_QPSG 1007

int plaza_sqlite_enable_qpsg(void *db) {
    return sqlite_nio_sqlite3_db_config(db, PLAZA_SQLITE_DBCONFIG_ENABLE_QPSG, 1, (int *)0);
}
