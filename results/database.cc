#include "results/database.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include "core/input_file.h"
#include "results/schema.h"

namespace mgpu::results {

using core::Error;
using core::ErrorKind;
namespace fs = std::filesystem;

int busy_timeout_ms() {
  const char* env = std::getenv("MGPU_DB_BUSY_TIMEOUT_MS");
  if (!env || !*env) return 10000;
  char* end = nullptr;
  long v = std::strtol(env, &end, 10);
  if (*end || v < 0 || v > 3600 * 1000)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("MGPU_DB_BUSY_TIMEOUT_MS='{}' must be a whole number of milliseconds from 0 to 3600000", env));
  return static_cast<int>(v);
}

void retry_while_busy(const std::function<void()>& f) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms());
  for (int attempt = 0;; ++attempt) {
    try {
      return f();
    } catch (const SQLite::Exception& e) {
      if ((e.getErrorCode() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= give_up) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + 5 * std::min(attempt, 10)));
  }
}

namespace {

bool writable(const fs::path& p) { return ::access(p.c_str(), W_OK) == 0; }


// An SQLite URI naming exactly this file: every byte outside the unreserved set is escaped, so
// '?', '#' or '%' in a name stay part of the name.
std::string file_uri(const fs::path& abs, const std::string& query) {
  std::string uri = "file:";
  for (unsigned char c : abs.string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') uri += static_cast<char>(c);
    else uri += fmt::format("%{:02X}", c);
  }
  return uri + "?" + query;
}

// Whether the file's header says WAL mode (bytes 18 and 19, the read and write versions, are 2):
// a reader of such a file makes a -wal and -shm beside it.
bool wal_mode_header(const fs::path& abs) {
  unsigned char header[20] = {};
  const int fd = ::open(abs.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const ssize_t n = ::pread(fd, header, sizeof header, 0);
  ::close(fd);
  return n == static_cast<ssize_t>(sizeof header) && header[18] == 2 && header[19] == 2;
}

Error read_only_error(const std::string& path, const std::string& why) {
  return Error(ErrorKind::InvalidInput,
               fmt::format("{} is read-only ({}): this command writes results there; the read-only commands (best, "
                           "trials, export, regress, report, merge inputs) still work on it",
                           path, why));
}

// A database a writer opens: its file and its folder (SQLite keeps the -wal and -shm there)
// writable, else Error{InvalidInput}.
void refuse_unwritable(const std::string& path, const fs::path& abs, bool exists) {
  const fs::path dir = abs.parent_path();
  if (exists && !writable(abs)) throw read_only_error(path, "the file cannot be written");
  if (!writable(dir))
    throw exists ? read_only_error(path, fmt::format("its folder {} cannot be written, and SQLite keeps its -wal and "
                                                     "-shm files there", dir.string()))
                 : Error(ErrorKind::InvalidInput,
                         fmt::format("cannot create {}: the folder {} cannot be written", path, dir.string()));
}

}  // namespace

void check_database_writable(const std::string& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  refuse_unwritable(path, abs, fs::exists(abs, ec));
}

// Removes a -shm no connection uses. Every SQLite connection to a WAL database holds a shared
// lock on the -shm's "DMS" byte (offset 128) while it is open: where this process can take a
// write lock on it, no connection of any process has the file, and it is unlinked under the lock.
static void remove_unused_shm(const std::string& shm) {
  int fd = ::open(shm.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return;
  struct flock l{};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  l.l_start = 128;
  l.l_len = 1;
  if (::fcntl(fd, F_SETLK, &l) == 0) ::unlink(shm.c_str());
  ::close(fd);
}

void CloseDatabase::operator()(SQLite::Database* db) const {
  delete db;
  if (!reader_shm.empty()) remove_unused_shm(reader_shm);
  if (cleanup_path.empty() || !fs::exists(cleanup_path + "-wal")) return;
  // The reader created -wal/-shm. A connection that may write (and writes nothing) removes them
  // on close when it is the last one; while another process has the database open, they stay.
  try {
    SQLite::Database c(file_uri(cleanup_path, "mode=rw"), SQLite::OPEN_READWRITE | SQLite::OPEN_URI, 0);
    c.exec("SELECT count(*) FROM sqlite_schema");
  } catch (const SQLite::Exception&) {
    // Best effort: whoever holds the database removes them when it closes.
  }
}

void check_database_path(const std::string& path) {
  if (path.empty()) throw Error(ErrorKind::InvalidInput, "the database path is empty: give a file path");
  if (path == ":memory:")
    throw Error(ErrorKind::InvalidInput,
                "':memory:' is an in-memory database: every result would vanish when mgpu-tune exits; give a file path");
  std::string head = path.substr(0, 5);
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (head == "file:")
    throw Error(ErrorKind::InvalidInput,
                fmt::format("'{}' is an SQLite URI, not a file path: give a file path (./{} for a file really named so)",
                            path, path));
}

NewDatabaseGuard::NewDatabaseGuard(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  created_ = fs::symlink_status(path_, ec).type() == fs::file_type::not_found;  // (ec says ENOENT then)
}

NewDatabaseGuard::~NewDatabaseGuard() {
  if (kept_ || !created_) return;
  std::error_code ec;
  for (const char* suffix : {"-wal", "-shm", "-journal", ""})
    if (fs::is_regular_file(path_ + suffix, ec)) fs::remove(path_ + suffix, ec);
}

// Why the file system holding `dir` takes no new file or byte ("no free inodes", "no space"),
// or nothing. SQLite reports a file it could not create (-wal, -shm, the database) as
// CANTOPEN, with no errno: this tells a full disk (exit 1) from a bad path (exit 2). A file
// system that reports no inode counts (f_files 0: btrfs) is not taken for full.
static std::optional<std::string> disk_full_why(const fs::path& dir) {
  struct statvfs v{};
  if (::statvfs(dir.c_str(), &v) != 0) return std::nullopt;
  const bool root = ::geteuid() == 0;
  if (v.f_files > 0 && (root ? v.f_ffree : v.f_favail) == 0) return "no free inodes: No space left on device";
  if (v.f_blocks > 0 && (root ? v.f_bfree : v.f_bavail) == 0) return "No space left on device";
  return std::nullopt;
}

// The process's file-size limit (ulimit -f) in bytes, where there is one. SIGXFSZ is ignored
// (harness/stop_signals.h), so a write past it fails as a full disk would.
static std::optional<std::uintmax_t> file_size_limit() {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_FSIZE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<std::uintmax_t>(lim.rlim_cur);
}

// What SQLite's WAL index (the -shm beside a database) takes at least: one 32 KiB region.
constexpr std::uintmax_t kShmBytes = 32768;

// Which of the database's files reached the file-size limit, said for a message ("" if none).
static std::string file_size_limit_note(const std::string& path) {
  const std::optional<std::uintmax_t> limit = file_size_limit();
  if (!limit) return "";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path + suffix, ec);
    if (!ec && size >= *limit)
      return fmt::format(" ({}{} reached the file-size limit of {} bytes, ulimit -f)", path, suffix, *limit);
  }
  return "";
}

// Said where a write failed on a full disk or past the file-size limit: a -wal that holds rows
// is the only copy of the transactions committed last (round 19, F37: a 480 KB -wal held the
// run's 10 committed trials, and looked like a temporary file to delete).
static std::string committed_wal_note(const std::string& path) {
  std::error_code ec;
  if (fs::file_size(path + "-wal", ec) == 0 || ec) return "";
  // Closing may still fold it in (the checkpoint needs no new room where the pages exist), so
  // said as a condition: whether it is left is known only after the message is made.
  return fmt::format("; every trial committed before stays: if {}-wal is left beside it, it holds the last of them "
                     "(keep it: the next run with room folds it in)", path);
}

static fs::path folder_of(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) return fs::path(".");
  return abs.parent_path();
}

// The path a message names: never an SQLite URI this file built (file:/abs/t.db?mode=rwc, which
// a user may not give), but the file it names. A user's own path never starts with "file:".
static std::string display_path(const std::string& path) {
  if (path.rfind("file:", 0) != 0) return path;
  std::string raw = path.substr(5, path.find('?') == std::string::npos ? std::string::npos : path.find('?') - 5), out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '%' && i + 2 < raw.size() && std::isxdigit(static_cast<unsigned char>(raw[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(raw[i + 2]))) {
      out += static_cast<char>(std::stoi(raw.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += raw[i];
    }
  }
  return out;
}

core::Error database_error(const std::string& given, const SQLite::Exception& e) {
  const std::string path = display_path(given);
  const int code = e.getErrorCode() & 0xff;
  if (code == SQLITE_CANTOPEN || code == SQLITE_FULL || code == SQLITE_IOERR)
    if (std::optional<std::string> why = disk_full_why(folder_of(path)))
      return Error(ErrorKind::IO, fmt::format("the disk holding {} is full ({}){}", path, *why, committed_wal_note(path)));
  switch (code) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error(ErrorKind::InvalidInput,
                   fmt::format("{} is locked by another process (waited {:g} s, MGPU_DB_BUSY_TIMEOUT_MS): this "
                               "command wrote nothing more; run it again when that process is done",
                               path, busy_timeout_ms() / 1000.0));
    case SQLITE_CORRUPT:
      return Error(ErrorKind::InvalidInput,
                   fmt::format("{} is damaged ({}): 'sqlite3 {} .recover' may save its rows", path, e.getErrorStr(),
                               path));
    case SQLITE_NOTADB:
      return Error(ErrorKind::InvalidInput,
                   fmt::format("cannot use {} as a results database: it is not an SQLite database; nothing was written",
                               path));
    case SQLITE_READONLY:
      // Not a read-only file: a hot journal (a writer stopped mid-transaction) that a read-only
      // connection may not roll back. open_database() rolls it back where it may write.
      if (e.getExtendedErrorCode() == SQLITE_READONLY_ROLLBACK || e.getExtendedErrorCode() == SQLITE_READONLY_RECOVERY)
        return Error(ErrorKind::InvalidInput,
                     fmt::format("{} needs recovery: a writer stopped in the middle of a transaction and left its "
                                 "journal ({}-journal or -wal) beside it, which only a process that may write {} and "
                                 "its folder can roll back; nothing was read or written",
                                 path, path, path));
      return read_only_error(path, e.getErrorStr());
    case SQLITE_CANTOPEN:
      return Error(ErrorKind::InvalidInput, fmt::format("cannot open the database {}: {}", path, e.getErrorStr()));
    case SQLITE_FULL:
      return Error(ErrorKind::IO, fmt::format("the disk holding {} is full{}{}", path, file_size_limit_note(path),
                                              committed_wal_note(path)));
    case SQLITE_IOERR:
      return Error(ErrorKind::IO, fmt::format("I/O error on {}: {}{}{}", path, e.what(), file_size_limit_note(path),
                                              committed_wal_note(path)));
    default: return Error(ErrorKind::InvalidInput, fmt::format("cannot use {} as a results database: {}", path, e.what()));
  }
}

namespace {

struct DatabaseFile {
  fs::path abs;  // the real file, symlinks followed
  bool exists = false;
};

// Where a symlink that names nothing leads: the last link's target, made absolute (relative
// targets are taken from the link's folder), as SQLite follows it to create the file. Empty
// when `abs` is no symlink, or the chain loops.
fs::path dangling_target(const fs::path& abs) {
  std::error_code ec;
  fs::path p = abs;
  for (int hops = 0; hops < 40; ++hops) {
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return hops ? p : fs::path();
    fs::path target = fs::read_symlink(p, ec);
    if (ec) return {};
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return {};
}

// The part of `abs` that is a file where a folder must be (base.db in base.db/x.db, and in
// base.db/: a trailing '/' makes every part a folder), or nothing.
std::optional<fs::path> file_on_the_way(const fs::path& abs) {
  std::vector<fs::path> parts;
  for (const fs::path& part : abs)
    if (!part.empty()) parts.push_back(part);
  const bool trailing_slash = !abs.empty() && abs.native().back() == '/';
  const std::size_t folders = trailing_slash ? parts.size() : parts.empty() ? 0 : parts.size() - 1;
  fs::path prefix;
  for (std::size_t i = 0; i < folders; ++i) {
    prefix /= parts[i];
    std::error_code ec;
    const fs::file_status st = fs::status(prefix, ec);
    if (!fs::exists(st)) return std::nullopt;
    if (!fs::is_directory(st)) return prefix;
  }
  return std::nullopt;
}

// The files SQLite keeps beside a database, and what each one is for a message.
constexpr std::pair<const char*, const char*> kSideFiles[] = {
    {"-journal", "rollback journal, which SQLite opens to look for a hot journal"},
    {"-wal", "write-ahead log"},
    {"-shm", "write-ahead log's shared-memory index"},
};

// A side file that is there but is no regular file (a FIFO: SQLite's open() of it blocks until
// a writer comes, and no signal ends SQLite's retried open; a folder or a device: "disk I/O
// error") is refused before SQLite opens anything, naming it. Symlinks are followed.
void check_side_files(const std::string& path, const fs::path& abs) {
  // Named as the user named the database, unless a symlink put its side files elsewhere.
  std::error_code ec0;
  const bool beside_path = fs::absolute(path, ec0) == abs;
  for (const auto& [suffix, role] : kSideFiles) {
    const fs::path side = (beside_path ? fs::path(path) : abs).string() + suffix;
    std::error_code ec;
    const fs::file_status st = fs::status(side, ec);
    if (ec || !fs::exists(st) || fs::is_regular_file(st)) continue;
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is {}, not a file SQLite can use beside the database {} (its {}): nothing was "
                            "opened; remove it, or give another database path",
                            side.string(), core::file_type_name(st.type()), path, role));
  }
}

// The checks on what the path names that need no opening: a folder, a FIFO, a device or an
// unreadable file is refused with the reason; so are side files (-journal, -wal, -shm) that
// are no regular files, a path under a file, and a symlink into a folder that is not there.
DatabaseFile check_database_file(const std::string& path) {
  check_database_path(path);
  std::error_code ec;
  // SQLite follows symlinks to the real file and keeps -wal/-shm beside it: so does this.
  fs::path abs = fs::absolute(path);
  if (fs::path real = fs::canonical(abs, ec); !ec) abs = real;
  const fs::file_status st = fs::status(abs, ec);
  const bool exists = fs::exists(st);
  // A path the system refuses is said as such, not "does not exist" or SQLite's "unable to open"
  // (round 19, F41): a loop of symbolic links, a name or path longer than the system takes.
  if (ec == std::errc::too_many_symbolic_link_levels || ec == std::errc::filename_too_long)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("cannot use the database {}: {}: {}", path.substr(0, 120), ec.message(),
                            ec == std::errc::filename_too_long
                                ? "its name (or the path) is longer than this system takes"
                                : "it is a loop of symbolic links (one names another that names it again)"));
  // A folder on the way this user may not search: not "does not exist", but why.
  if (ec == std::errc::permission_denied)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("cannot open the database {}: a folder on its path cannot be searched ({})", path,
                            ec.message()));
  if (!exists) {
    // A path under a file (base.db/, base.db/x.db): said as what it is, not "does not exist".
    if (std::optional<fs::path> file = file_on_the_way(abs))
      throw Error(ErrorKind::InvalidInput,
                  !path.empty() && path.back() == '/' && *file == abs.parent_path()
                      ? fmt::format("cannot use the database {}: the trailing '/' makes it a folder's path, but {} is "
                                    "a file (give it without the '/')",
                                    path, file->string())
                      : fmt::format("cannot use the database {}: {} is a file, not a folder, so nothing can be "
                                    "under it",
                                    path, file->string()));
    if (!path.empty() && path.back() == '/')
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("cannot use the database {}: a path ending in '/' names a folder; a results database "
                              "is a file", path));
    // A symlink that names nothing: SQLite would create its target, in the target's folder.
    if (fs::path target = dangling_target(abs); !target.empty()) {
      const fs::path dir = target.parent_path();
      const fs::file_status dst = fs::status(dir, ec);
      if (!fs::is_directory(dst))
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("cannot use the database {}: it is a symbolic link to {}, whose folder {} {}", path,
                                fs::read_symlink(abs, ec).string(), dir.string(),
                                fs::exists(dst) ? "is a file, not a folder" : "does not exist"));
      abs = target;
    }
  }
  if (exists && fs::is_directory(st))
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is a folder, not a results database", path));
  // SQLite needs a file it can lock and seek: a FIFO would block open() until some writer came
  // (no signal ends SQLite's retried open), and a device such as /dev/null swallows every row.
  if (exists && !fs::is_regular_file(st))
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is {}, not a results database: give a regular file's path", path, core::file_type_name(st.type())));
  // SQLite says only "unable to open database file": the reason (no permission) is said here.
  if (exists && ::access(abs.c_str(), R_OK) != 0) {
    const int err = errno;
    throw Error(ErrorKind::InvalidInput, fmt::format("cannot open the database {}: cannot read it ({})", path,
                                                     std::strerror(err)));
  }
  check_side_files(path, abs);
  return {abs, exists};
}

}  // namespace

void check_database_target(const std::string& path) { check_database_file(path); }

DatabasePtr open_database(const std::string& path, OpenMode mode) {
  const auto [abs, exists] = check_database_file(path);
  const int timeout = busy_timeout_ms();
  std::error_code ec;
  const fs::path dir = abs.parent_path();
  std::string uri;
  CloseDatabase closer;
  int flags = SQLite::OPEN_URI;
  if (mode == OpenMode::ReadOnly) {
    if (!exists) throw Error(ErrorKind::InvalidInput, fmt::format("database {} does not exist", path));
    const std::string wal = abs.string() + "-wal";
    const bool had_wal = fs::exists(wal), had_shm = fs::exists(abs.string() + "-shm");
    const bool can_write = writable(abs) && writable(dir);
    // immutable hides rows still in a -wal, so only where no -wal holds any.
    const bool wal_rows = had_wal && fs::file_size(wal, ec) > 0;
    // On a full disk (no inode or byte free) SQLite could create a -wal and fail on the -shm,
    // leaving an empty -wal: read the file as it is instead, creating nothing.
    // So under a file-size limit (ulimit -f) below the -shm's 32 KiB: SQLite's -shm was cut at
    // the limit and left for every later reader (round 19, F37).
    const std::optional<std::uintmax_t> limit = file_size_limit();
    const bool disk_full = can_write && !wal_rows && (disk_full_why(dir).has_value() || (limit && *limit < kShmBytes));
    // A -shm without its -wal (left by a crash: SQLite removes the -shm first when the last
    // connection closes) beside a WAL database: no connection has it open (one that does keeps
    // its -wal), and a reader would create a new -wal beside the -shm and leave it there. The
    // file is read as it is, creating nothing.
    const bool stray_shm = had_shm && !had_wal && wal_mode_header(abs);
    uri = file_uri(abs, ((!can_write || disk_full) && !wal_rows) || stray_shm ? "mode=ro&immutable=1" : "mode=ro");
    if (can_write && !disk_full && !had_wal && !had_shm) closer.cleanup_path = abs.string();
    if (can_write && !disk_full && had_wal && !had_shm) closer.reader_shm = abs.string() + "-shm";
    flags |= SQLite::OPEN_READONLY;
  } else {
    if (fs::exists(dir) && !fs::is_directory(dir))
      throw Error(ErrorKind::InvalidInput, fmt::format("cannot create {}: {} is a file, not a folder", path, dir.string()));
    if (!fs::is_directory(dir))
      throw Error(ErrorKind::InvalidInput, fmt::format("cannot create {}: the folder {} does not exist", path, dir.string()));
    refuse_unwritable(path, abs, exists);
    // A file-size limit (ulimit -f) SQLite's files cannot live under: one below the -shm's 32 KiB,
    // or below the database's own size (a page past it cannot be written back). Said before
    // anything is opened: the write failed later and left a -wal and -shm cut at the limit.
    if (const std::optional<std::uintmax_t> limit = file_size_limit()) {
      std::error_code sec;
      const std::uintmax_t size = exists ? fs::file_size(abs, sec) : 0;
      if (*limit < kShmBytes || (!sec && size >= *limit))
        throw Error(ErrorKind::IO,
                    fmt::format("the file-size limit (ulimit -f) of {} bytes is too small to write {}: {}; nothing was "
                                "written (raise it: ulimit -f unlimited)", *limit, path,
                                *limit < kShmBytes ? fmt::format("SQLite's index beside it ({}-shm) takes {} bytes", path,
                                                                 kShmBytes)
                                                   : fmt::format("the database is {} bytes already", size)));
    }
    // A full disk is found before SQLite creates an empty database (or -wal, -shm) it cannot
    // fill. Where all three are there already, SQLite itself says when a write finds no room.
    const bool creates = !exists || !fs::exists(abs.string() + "-wal", ec) || !fs::exists(abs.string() + "-shm", ec);
    if (std::optional<std::string> why = creates ? disk_full_why(dir) : std::nullopt)
      throw Error(ErrorKind::IO, fmt::format("the disk holding {} is full ({}): nothing was written", path, *why));
    uri = file_uri(abs, "mode=rwc");
    flags |= SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE;
  }
  // A database this open created and could not set up (no inode left for its -wal) is an
  // empty file: removed, not left behind.
  // So is an empty -wal it made without its -shm (no connection uses a -wal without one).
  const bool wal_before = fs::exists(abs.string() + "-wal", ec), shm_before = fs::exists(abs.string() + "-shm", ec);
  auto remove_if_created_empty = [&](DatabasePtr& d) {
    if (mode != OpenMode::ReadWrite) return;
    d.reset();
    std::error_code e2;
    const std::string wal = abs.string() + "-wal", shm = abs.string() + "-shm";
    if (!wal_before && !shm_before && !fs::exists(shm, e2) && fs::is_regular_file(wal, e2) &&
        fs::file_size(wal, e2) == 0 && !e2)
      fs::remove(wal, e2);
    if (!exists && fs::is_regular_file(abs, e2) && fs::file_size(abs, e2) == 0 && !e2) fs::remove(abs, e2);
  };
  DatabasePtr db;
  try {
    try {
      db = DatabasePtr(new SQLite::Database(uri, flags, timeout), closer);
      // Reading the schema forces SQLite to check the file header before any write.
      db->exec("SELECT count(*) FROM sqlite_schema");
    } catch (const SQLite::Exception& e) {
      // A hot rollback journal: a writer stopped mid-transaction. Any SQLite connection that may
      // write rolls it back on open, restoring the last committed state; a read-only one may
      // not and says "readonly". Where this process may write the file and its folder, it opens
      // it so once (no other change), then reads as asked.
      const int ext = e.getExtendedErrorCode();
      if (mode != OpenMode::ReadOnly || ext != SQLITE_READONLY_ROLLBACK || !writable(abs) || !writable(dir)) throw;
      db.reset();
      {
        SQLite::Database recover(file_uri(abs, "mode=rw"), SQLite::OPEN_READWRITE | SQLite::OPEN_URI, timeout);
        recover.exec("SELECT count(*) FROM sqlite_schema");
      }
      db = DatabasePtr(new SQLite::Database(uri, flags, timeout), closer);
      db->exec("SELECT count(*) FROM sqlite_schema");
    }
  } catch (const SQLite::Exception& e) {
    // The error is told before the cleanup frees the inode it could not get.
    core::Error told = database_error(path, e);
    remove_if_created_empty(db);
    if (mode == OpenMode::ReadWrite) throw told;
    const int code = e.getErrorCode() & 0xff;
    const std::string wal = abs.string() + "-wal", shm = abs.string() + "-shm";
    if (mode != OpenMode::ReadOnly || closer.cleanup_path.empty() ||
        (code != SQLITE_CANTOPEN && code != SQLITE_IOERR && code != SQLITE_FULL)) {
      db.reset();  // a reader's -shm made for a -wal it found is removed on close (CloseDatabase)
      throw told;
    }
    // A reader that could create the -wal but not the -shm (the last inode taken): the empty
    // -wal it made is removed (no -shm: no connection uses it), and the file is read as it is,
    // creating nothing. A writer's -wal always has its -shm beside it.
    db.reset();
    std::error_code e2;
    if (!fs::exists(shm, e2) && fs::is_regular_file(wal, e2) && fs::file_size(wal, e2) == 0 && !e2) fs::remove(wal, e2);
    try {
      closer.cleanup_path.clear();
      db = DatabasePtr(new SQLite::Database(file_uri(abs, "mode=ro&immutable=1"), flags, timeout), closer);
      db->exec("SELECT count(*) FROM sqlite_schema");
    } catch (const SQLite::Exception&) {
      throw told;
    }
  }
  try {
    return guard_database(path, [&] {
      // A newer schema is refused before anything is written (WAL mode rewrites the header).
      if (int v = schema_version(*db); v > kSchemaVersion)
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("{} has schema version {}, newer than this mgpu-tune knows ({}): use a newer mgpu-tune; "
                                "the file was not changed", path, v, kSchemaVersion));
      // Damaged pages are found now, not halfway through a run or an export.
      if (std::string check = db->execAndGet("PRAGMA quick_check(1)").getString(); check != "ok") {
        // One line: "*** in database main ***\nPage 4: ..." becomes "Page 4: ...".
        if (check.rfind("*** in database main ***\n", 0) == 0) check.erase(0, 25);
        for (char& c : check)
          if (c == '\n') c = ' ';
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("{} is damaged (quick_check: {}): nothing was written; 'sqlite3 {} .recover' may save "
                                "its rows", path, check, path));
      }
      if (mode == OpenMode::ReadWrite) {
        if (sqlite3_db_readonly(db->getHandle(), "main") == 1) throw read_only_error(path, "SQLite opened it read-only");
        // Another program's database is refused before WAL mode rewrites its header.
        if (schema_header(*db).foreign())
          throw Error(ErrorKind::InvalidInput,
                      fmt::format("{} is an SQLite database of something else (tables, but no mgpu-tune schema "
                                  "version): nothing was written", path));
        retry_while_busy([&] { db->exec("PRAGMA journal_mode=WAL"); });
      }
      db->exec("PRAGMA foreign_keys=ON");
      return std::move(db);
    });
  } catch (...) {
    remove_if_created_empty(db);
    throw;
  }
}

SchemaHeader schema_header(SQLite::Database& db) {
  // The statement is finished before returning, so its read ends before a journal-mode change.
  SQLite::Statement q(db, "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)");
  q.executeStep();
  return {q.getColumn(0).getInt(), q.getColumn(1).getInt()};
}

bool integrity_ok(SQLite::Database& db) {
  return db.execAndGet("PRAGMA integrity_check").getString() == "ok";
}

}  // namespace mgpu::results
