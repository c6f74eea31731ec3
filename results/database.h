// Opening a results database. Contract: open_database() returns an SQLite connection in WAL
// mode with foreign keys on and a busy timeout, so concurrent writers wait instead of failing.
// A file that is not an SQLite database, or that cannot be opened, throws Error{InvalidInput}
// (exit 2) and leaves the file untouched: nothing is written before the header is checked.
#pragma once

#include <memory>
#include <string>

#include <SQLiteCpp/Database.h>

namespace mgpu::results {

enum class OpenMode { ReadOnly, ReadWrite };

std::unique_ptr<SQLite::Database> open_database(const std::string& path, OpenMode mode);
// PRAGMA integrity_check == "ok".
bool integrity_ok(SQLite::Database& db);

}  // namespace mgpu::results
