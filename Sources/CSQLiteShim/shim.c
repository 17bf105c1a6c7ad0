#include "CSQLiteShim.h"

// sqlite-nio builds SQLite with its functions renamed sqlite_nio_sqlite3_*; its header is not
// reachable from this target, so the one function used is declared here.
int sqlite_nio_sqlite3_db_config(void *db, int op, ...);

// SQLITE_DBCONFIG_ENABLE_QPSG from sqlite3.h
#define PLAZA_SQLITE_DBCONFIG_ENABLE_QPSG 1007

int plaza_sqlite_enable_qpsg(void *db) {
    return sqlite_nio_sqlite3_db_config(db, PLAZA_SQLITE_DBCONFIG_ENABLE_QPSG, 1, (int *)0);
}

// The few sqlite3 functions a scalar SQL function needs, under sqlite-nio's names.
typedef struct sqlite3_context sqlite3_context;
typedef struct sqlite3_value sqlite3_value;
int sqlite_nio_sqlite3_create_function_v2(void *db, const char *name, int args, int flags, void *app,
                                          void (*func)(sqlite3_context *, int, sqlite3_value **),
                                          void (*step)(sqlite3_context *, int, sqlite3_value **),
                                          void (*final)(sqlite3_context *), void (*destroy)(void *));
double sqlite_nio_sqlite3_value_double(sqlite3_value *value);
int sqlite_nio_sqlite3_value_type(sqlite3_value *value);
void sqlite_nio_sqlite3_result_double(sqlite3_context *context, double value);
void sqlite_nio_sqlite3_result_null(sqlite3_context *context);

const unsigned char *sqlite_nio_sqlite3_value_text(sqlite3_value *value);
int sqlite_nio_sqlite3_value_bytes(sqlite3_value *value);
void *sqlite_nio_sqlite3_user_data(sqlite3_context *context);
void sqlite_nio_sqlite3_result_text(sqlite3_context *context, const char *text, int length, void (*destroy)(void *));

#define PLAZA_SQLITE_UTF8 1
#define PLAZA_SQLITE_DETERMINISTIC 0x000000800
#define PLAZA_SQLITE_INNOCUOUS 0x000200000
#define PLAZA_SQLITE_NULL 5

#include <math.h>

double plaza_distance_km(double lat1, double lon1, double lat2, double lon2) {
    const double radians = M_PI / 180.0;
    double dlat = (lat2 - lat1) * radians, dlon = (lon2 - lon1) * radians;
    double a = sin(dlat / 2) * sin(dlat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dlon / 2) * sin(dlon / 2);
    if (a > 1) a = 1;
    return 6371.0088 * 2 * asin(sqrt(a));
}

static void distance_function(sqlite3_context *context, int count, sqlite3_value **values) {
    for (int i = 0; i < 4; i++) {
        if (sqlite_nio_sqlite3_value_type(values[i]) == PLAZA_SQLITE_NULL) {
            sqlite_nio_sqlite3_result_null(context);
            return;
        }
    }
    sqlite_nio_sqlite3_result_double(context, plaza_distance_km(
        sqlite_nio_sqlite3_value_double(values[0]), sqlite_nio_sqlite3_value_double(values[1]),
        sqlite_nio_sqlite3_value_double(values[2]), sqlite_nio_sqlite3_value_double(values[3])));
}

int plaza_sqlite_register_functions(void *db) {
    return sqlite_nio_sqlite3_create_function_v2(db, "plaza_distance_km", 4,
        PLAZA_SQLITE_UTF8 | PLAZA_SQLITE_DETERMINISTIC | PLAZA_SQLITE_INNOCUOUS, 0, distance_function, 0, 0, 0);
}

#include <stdlib.h>

static void text_function(sqlite3_context *context, int count, sqlite3_value **values) {
    plaza_text_function function = (plaza_text_function)sqlite_nio_sqlite3_user_data(context);
    if (sqlite_nio_sqlite3_value_type(values[0]) == PLAZA_SQLITE_NULL) {
        sqlite_nio_sqlite3_result_null(context);
        return;
    }
    const unsigned char *text = sqlite_nio_sqlite3_value_text(values[0]);
    int length = sqlite_nio_sqlite3_value_bytes(values[0]);
    int outLength = 0;
    char *output = function(text, length, &outLength);
    if (output == 0) {
        sqlite_nio_sqlite3_result_null(context);
        return;
    }
    sqlite_nio_sqlite3_result_text(context, output, outLength, free);
}

int plaza_sqlite_register_search_text(void *db, plaza_text_function function) {
    return sqlite_nio_sqlite3_create_function_v2(db, "plaza_search_text", 1,
        PLAZA_SQLITE_UTF8 | PLAZA_SQLITE_DETERMINISTIC | PLAZA_SQLITE_INNOCUOUS, (void *)function, text_function, 0, 0, 0);
}

#if defined(__GLIBC__)
#include <malloc.h>
void plaza_release_free_heap(void) { malloc_trim(0); }
#else
void plaza_release_free_heap(void) {}
#endif
