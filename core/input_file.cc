#include "core/input_file.h"

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

std::string kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory: return "is a folder, not a file";
    case fs::file_type::fifo: return "is a FIFO (named pipe), not a file: give a regular file";
    case fs::file_type::character: return "is a character device, not a file: give a regular file";
    case fs::file_type::block: return "is a block device, not a file: give a regular file";
    case fs::file_type::socket: return "is a socket, not a file: give a regular file";
    default: return "is not a regular file";
  }
}

}  // namespace

void check_input_file(const std::string& path, const std::string& what) {
  if (path.empty()) throw Error(ErrorKind::InvalidInput, fmt::format("the {} path is empty", what));
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // through symlinks
  if (ec && ec != std::errc::no_such_file_or_directory)
    refuse(what, path, fmt::format("cannot be used: {}", ec.message()));
  if (!fs::exists(st)) refuse(what, path, "does not exist");
  if (!fs::is_regular_file(st)) refuse(what, path, kind_of(st.type()));
}

std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  check_input_file(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(what, path, fmt::format("cannot be read ({})", std::strerror(errno)));
  std::string bytes;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    bytes.append(buf, static_cast<size_t>(in.gcount()));
    if (bytes.size() > max_bytes) refuse(what, path, fmt::format("holds more than {} MiB: refused", max_bytes >> 20));
  }
  if (in.bad()) refuse(what, path, "could not be read to its end");
  return bytes;
}

}  // namespace mgpu::core
