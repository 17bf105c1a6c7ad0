#ifndef CSQLITESHIM_H
#define CSQLITESHIM_H

/// Turns on SQLite's query planner stability guarantee for a connection (a `sqlite3 *` from
/// sqlite-nio's SQLite): statements keep the plan they were prepared with instead of being
/// re-prepared when a bound value changes (LIMIT ?, comparisons with parameters). Swift cannot
/// call the variadic sqlite3_db_config, hence this function. Returns an SQLite result code.
int plaza_sqlite_enable_qpsg(void *db);

#endif
