#include "results/database.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "results/schema.h"

namespace mgpu::results {

using core::Error;
using core::ErrorKind;

std::unique_ptr<SQLite::Database> open_database(const std::string& path, OpenMode mode) {
  int flags = mode == OpenMode::ReadOnly ? SQLite::OPEN_READONLY
                                         : SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE;
  if (mode == OpenMode::ReadOnly && !std::filesystem::exists(path))
    throw Error(ErrorKind::InvalidInput, fmt::format("database {} does not exist", path));
  std::unique_ptr<SQLite::Database> db;
  try {
    db = std::make_unique<SQLite::Database>(path, flags, /*busyTimeoutMs=*/10000);
    // Reading the schema forces SQLite to check the file header before any write.
    db->exec("SELECT count(*) FROM sqlite_schema");
  } catch (const SQLite::Exception& e) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("cannot use {} as a results database: {}", path, e.what()));
  }
  // A newer schema is refused before anything is written (WAL mode rewrites the header).
  if (int v = schema_version(*db); v > kSchemaVersion)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} has schema version {}, newer than this mgpu-tune knows ({}): use a newer mgpu-tune; "
                            "the file was not changed", path, v, kSchemaVersion));
  try {
    if (mode == OpenMode::ReadWrite) db->exec("PRAGMA journal_mode=WAL");
    db->exec("PRAGMA foreign_keys=ON");
  } catch (const SQLite::Exception& e) {
    throw Error(ErrorKind::InvalidInput, fmt::format("cannot open {} for writing: {}", path, e.what()));
  }
  return db;
}

bool integrity_ok(SQLite::Database& db) {
  return db.execAndGet("PRAGMA integrity_check").getString() == "ok";
}

}  // namespace mgpu::results
