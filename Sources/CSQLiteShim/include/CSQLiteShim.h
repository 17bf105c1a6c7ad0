#ifndef CSQLITESHIM_H
#define CSQLITESHIM_H

/// Turns on SQLite's query planner stability guarantee for a connection (a `sqlite3 *` from
/// sqlite-nio's SQLite): statements keep the plan they were prepared with instead of being
/// re-prepared when a bound value changes (LIMIT ?, comparisons with parameters). Swift cannot
/// call the variadic sqlite3_db_config, hence this function. Returns an SQLite result code.
int plaza_sqlite_enable_qpsg(void *db);

/// Registers Plaza's SQL functions on a connection: `plaza_distance_km(lat1, lon1, lat2, lon2)`,
/// the great-circle distance in kilometres (sqlite-nio's SQLite has no math functions; on
/// PostgreSQL a SQL function of the same name is made by the migration).
int plaza_sqlite_register_functions(void *db);

/// A function from text to text, written in Swift: it gets `length` bytes of UTF-8 (not
/// NUL-terminated) and returns a malloc'd buffer of `*outLength` bytes (freed by SQLite), or
/// NULL for SQL NULL.
typedef char *(*plaza_text_function)(const unsigned char *text, int length, int *outLength);

/// Registers `plaza_search_text(text)` on a connection: the text as the search index stores
/// it (SearchFolding.indexText), made by `function`.
int plaza_sqlite_register_search_text(void *db, plaza_text_function function);

/// The same distance, for Swift.
double plaza_distance_km(double lat1, double lon1, double lat2, double lon2);

/// Hands the heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing),
/// after the connections dropped their page caches (SQLiteDriver, when idle).
void plaza_release_free_heap(void);

#endif
