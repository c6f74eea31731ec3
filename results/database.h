// Opening a results database. Contract:
// - The path is checked first (check_database_path): "" and ":memory:" (every result would
//   vanish at exit) and "file:" URIs are refused. Every path is then opened as a file through
//   a URI this code builds, so no name is ever read as a URI or an in-memory database. A path
//   that exists but is no regular file (a FIFO, /dev/null, a socket) is refused before any open.
// - ReadWrite: WAL mode, foreign keys on, a busy timeout (MGPU_DB_BUSY_TIMEOUT_MS, default
//   10000), so concurrent writers wait instead of failing. A file or folder that cannot be
//   written is refused ("read-only ... read-only commands still work on it").
// - ReadOnly: SQLite `mode=ro`, and `immutable=1` where the file or its folder cannot be
//   written (and no -wal holds committed rows that immutable would hide). Nothing is ever
//   written; the -wal/-shm files SQLite creates beside a WAL database for a reader are removed
//   again when the connection closes (by a connection that writes nothing, so SQLite itself
//   decides whether another process still needs them).
// - Both: the header, the schema version (newer than this binary: refused) and every page
//   (PRAGMA quick_check) are checked before anything is written.
// Every SQLite failure, here or later (database_error), becomes Error{InvalidInput} (exit 2)
// naming the file and the problem -- not a database, damaged, locked by another process,
// read-only -- except a full disk or an I/O error (ErrorKind::IO, exit 1). The file is left as
// it was: nothing is written before these checks pass.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>

#include "core/error.h"

namespace mgpu::results {

enum class OpenMode { ReadOnly, ReadWrite };

// Removes the -wal/-shm files a reader created, after closing the connection.
struct CloseDatabase {
  std::string cleanup_path;  // the database's absolute path; empty: nothing to clean up
  // A reader that found a -wal without a -shm (a writer's leftover, or a stray -wal) makes the
  // -shm itself: its path, removed on close when no other connection uses it.
  std::string reader_shm;
  void operator()(SQLite::Database* db) const;
};
using DatabasePtr = std::unique_ptr<SQLite::Database, CloseDatabase>;

void check_database_path(const std::string& path);
// check_database_path() and what open_database() refuses without opening: a folder, a FIFO or
// other non-regular file, an unreadable file (Error{InvalidInput}). For checking a --db before
// long work (tune walks millions of configs first).
void check_database_target(const std::string& path);
// Whether a writer could open it, without opening or changing anything: Error{InvalidInput} when
// the file or its folder cannot be written (for a command to say before long work).
void check_database_writable(const std::string& path);
// A database a command is about to create (a merge's new output, an import's new database):
// unless keep() is called, the destructor removes it and its -wal, -shm and -journal when it
// was not there at construction, so a failed or stopped command leaves nothing behind (a
// schema-less file would read as a "blank" database). Declared before the Store, so the
// Store is closed first.
class NewDatabaseGuard {
 public:
  explicit NewDatabaseGuard(std::string path);
  NewDatabaseGuard(const NewDatabaseGuard&) = delete;
  NewDatabaseGuard& operator=(const NewDatabaseGuard&) = delete;
  ~NewDatabaseGuard();
  void keep() { kept_ = true; }
  bool created() const { return created_; }

 private:
  std::string path_;
  bool created_ = false, kept_ = false;
};
DatabasePtr open_database(const std::string& path, OpenMode mode);
// The schema version and the table count, read in one statement (one snapshot: another
// process may be creating the schema meanwhile). Both zero: blank, what SQLite leaves of a run
// killed before its migration committed. Tables but no version: another program's database.
struct SchemaHeader {
  int user_version = 0;
  int tables = 0;
  bool blank() const { return user_version == 0 && tables == 0; }
  bool foreign() const { return user_version == 0 && tables > 0; }
};
SchemaHeader schema_header(SQLite::Database& db);
// PRAGMA integrity_check == "ok".
bool integrity_ok(SQLite::Database& db);
// The one-line error for an SQLite failure on the database at `path`.
core::Error database_error(const std::string& path, const SQLite::Exception& e);
// The busy timeout in milliseconds (MGPU_DB_BUSY_TIMEOUT_MS, default 10000).
int busy_timeout_ms();
// Runs f again while SQLite answers "busy" without waiting (it does so, rather than call the
// busy handler, when waiting could deadlock: changing the journal mode, upgrading a read to a
// write), for up to the busy timeout; then the last "busy" is thrown.
void retry_while_busy(const std::function<void()>& f);
// Runs f, turning any SQLite failure into database_error(path, ...).
template <class F>
auto guard_database(const std::string& path, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const SQLite::Exception& e) {
    throw database_error(path, e);
  }
}

}  // namespace mgpu::results
