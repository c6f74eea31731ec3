// The results database's schema, as an ordered list of migrations. Contract: migrate()
// brings a database to kSchemaVersion inside one transaction per step, recording the version
// in PRAGMA user_version; a database newer than this binary knows is refused with
// Error{InvalidInput} before anything is written.
#pragma once

#include <SQLiteCpp/Database.h>

namespace mgpu::results {

inline constexpr int kSchemaVersion = 4;

int schema_version(SQLite::Database& db);
void migrate(SQLite::Database& db);

}  // namespace mgpu::results
