#include "core/input_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::core {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& what, const std::string& path, const std::string& why) {
  throw Error(ErrorKind::InvalidInput, fmt::format("{} {} {}", what, path, why));
}

}  // namespace

std::string_view file_type_name(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

void check_input_file(const std::string& path, const std::string& what) {
  if (path.empty()) throw Error(ErrorKind::InvalidInput, fmt::format("the {} path is empty", what));
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // through symlinks
  if (ec && ec != std::errc::no_such_file_or_directory)
    refuse(what, path, fmt::format("cannot be used: {}", ec.message()));
  if (!fs::exists(st)) refuse(what, path, "does not exist");
  if (fs::is_directory(st)) refuse(what, path, "is a folder, not a file");
  if (!fs::is_regular_file(st))
    refuse(what, path, fmt::format("is {}, not a file: give a regular file", file_type_name(st.type())));
}

std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  check_input_file(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::InvalidInput, fmt::format("{} {}: cannot read it ({})", what, path, std::strerror(errno)));
  std::string bytes;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    bytes.append(buf, static_cast<size_t>(in.gcount()));
    if (bytes.size() > max_bytes) refuse(what, path, fmt::format("holds more than {} bytes", max_bytes));  // /proc files state 0
  }
  if (in.bad()) throw Error(ErrorKind::InvalidInput, fmt::format("{} {}: cannot read it (an I/O error)", what, path));
  return bytes;
}

int open_output_fifo(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (fs::status(path, ec).type() != fs::file_type::fifo) return -1;
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENXIO)
      refuse(what, path, "is a FIFO (named pipe) that no program is reading: writing it would wait forever (start "
                         "its reader first, or give a regular file)");
    refuse(what, path, fmt::format("is a FIFO (named pipe) that cannot be opened: {}", std::strerror(err)));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace mgpu::core
