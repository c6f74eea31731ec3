#include "results/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/input_file.h"

namespace mgpu::results {

// The environment's failures (exit 1): a full disk or quota, a file-size limit, the device.
// EPIPE: the program reading a pipe (-o /dev/stdout | head) went away; output that cannot be
// written is exit 1 (README "Exit codes"), not bad input.
bool environment_errno(int err) { return err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO || err == EPIPE; }

using core::Error;
using core::ErrorKind;
namespace fs = std::filesystem;

namespace {

// The path a write would reach: symlinks followed even when their target does not exist yet.
fs::path resolve(fs::path p) {
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  fs::path abs = fs::absolute(p, ec);
  fs::path canon = fs::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal() : canon;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec) && !ec) return true;  // device and inode: hard links, symlinks
  return resolve(a) == resolve(b);                     // by name: files that do not exist yet
}


[[noreturn]] void fail_stream(const std::string& path, const char* what) {
  int err = errno;
  throw Error(environment_errno(err) ? ErrorKind::IO : ErrorKind::InvalidInput,
              fmt::format("cannot write {}: {} ({})", path, what, err ? std::strerror(err) : "unknown error"));
}

}  // namespace

void refuse_database_path(const std::string& out, const std::vector<std::string>& dbs, const std::string& role) {
  for (const std::string& db : dbs) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      if (!same_file(out, resolve(db).string() + suffix)) continue;
      throw Error(ErrorKind::InvalidInput,
                  *suffix ? fmt::format("refusing to write {}: it is the {} file of {} {}", out, suffix, role, db)
                          : fmt::format("refusing to write {}: it is {} {}", out, role, db));
    }
  }
}

void check_output_folder(const std::string& path) {
  std::error_code ec;
  const fs::path dir = resolve(path).parent_path();
  if (fs::is_directory(dir, ec)) return;
  // A path under a file (f.txt/x.csv) is said as what it is, not "does not exist" (round 16, F6).
  for (fs::path up = dir; !up.empty() && up != up.parent_path(); up = up.parent_path())
    if (fs::exists(up, ec)) {
      if (!fs::is_directory(up, ec))
        throw Error(ErrorKind::InvalidInput, fmt::format("cannot write {}: {} is a file, not a folder, so nothing can "
                                                         "be under it", path, up.string()));
      break;
    }
  throw Error(ErrorKind::InvalidInput, fmt::format("cannot write {}: the folder {} does not exist", path, dir.string()));
}

void write_file_atomically(const std::string& path, const std::string& text) {
  if (path.empty()) throw Error(ErrorKind::InvalidInput, "the output path is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // through symlinks, as the kernel sees it
  if (fs::is_directory(st)) throw Error(ErrorKind::InvalidInput, fmt::format("{} is a folder: give a file path", path));
  // A device or a pipe (/dev/stdout, a FIFO) is written in place: there is nothing to replace,
  // and renaming over it would put a regular file where the device was.
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    // A FIFO no program reads would block the open forever: refused (exit 2) instead.
    if (const int fd = core::open_output_fifo(path, "the output"); fd >= 0) {
      const char* p = text.data();
      std::size_t left = text.size();
      while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          const int err = errno;
          ::close(fd);
          throw Error(environment_errno(err) ? ErrorKind::IO : ErrorKind::InvalidInput,
                      fmt::format("cannot write {}: writing failed ({})", path, std::strerror(err)));
        }
        p += n;
        left -= static_cast<std::size_t>(n);
      }
      ::close(fd);
      return;
    }
    errno = 0;
    std::ofstream out(path, std::ios::binary);
    if (!out) fail_stream(path, "cannot open it");
    out << text;
    out.flush();
    if (!out) fail_stream(path, "writing failed");
    return;
  }
  const fs::path target = resolve(path);
  const fs::path dir = target.parent_path();
  check_output_folder(path);
  const fs::path tmp = dir / fmt::format(".{}.mgpu-tmp-{}", target.filename().string(), ::getpid());
  auto fail = [&](const char* what) {
    int err = errno;
    fs::remove(tmp, ec);
    throw Error(environment_errno(err) ? ErrorKind::IO : ErrorKind::InvalidInput,
                fmt::format("cannot write {}: {} ({})", path, what, std::strerror(err)));
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("cannot create a file in its folder");
    out << text;
    out.flush();
    if (!out) fail("writing failed");
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) fail("cannot replace it");
}

NewFolderGuard::NewFolderGuard(std::string folder) : folder_(std::move(folder)) {
  std::error_code ec;
  created_ = fs::symlink_status(folder_, ec).type() == fs::file_type::not_found;
}

NewFolderGuard::~NewFolderGuard() {
  if (kept_) return;
  std::error_code ec;
  for (const std::string& f : new_files_)
    if (fs::is_regular_file(fs::symlink_status(f, ec))) fs::remove(f, ec);
  if (created_) fs::remove(folder_, ec);  // fails, harmlessly, unless empty: nothing of anyone else's goes
}

void NewFolderGuard::will_write(const std::string& file) {
  std::error_code ec;
  if (fs::symlink_status(file, ec).type() == fs::file_type::not_found) new_files_.push_back(file);
}

}  // namespace mgpu::results
