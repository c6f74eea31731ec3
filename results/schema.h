// The results database's schema, as an ordered list of migrations. Contract: migrate()
// brings a database to kSchemaVersion inside one IMMEDIATE transaction (all steps, and the
// version in PRAGMA user_version, commit together or not at all), re-reading the version once
// it holds the write lock, so any number of processes may migrate the same file at once. A
// database newer than this binary knows, or an SQLite file of something else, is refused with
// Error{InvalidInput} before anything is written.
#pragma once

#include <SQLiteCpp/Database.h>

namespace mgpu::results {

inline constexpr int kSchemaVersion = 8;

int schema_version(SQLite::Database& db);
void migrate(SQLite::Database& db);

}  // namespace mgpu::results
