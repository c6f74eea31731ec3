// Reading a file the user named as an input (an MLIR module, a cubin, a shape suite, a
// campaign). Contract: read_input_file() returns its bytes, or throws Error{InvalidInput} naming
// `what` and the path when it does not exist, is a folder, a FIFO, a device or a socket (a FIFO
// would block until some writer came, /dev/zero would never end), cannot be read, or holds more
// than `max_bytes` (checked while reading too: a file may grow).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace mgpu::core {

inline constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{256} << 20;

// What a path that is no regular file is, for messages: "a FIFO (named pipe)", "a character
// device", "a folder", ...
std::string_view file_type_name(std::filesystem::file_type t);

// Throws as read_input_file() would for anything but a regular file, without reading it.
void check_input_file(const std::string& path, const std::string& what);
std::string read_input_file(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes = kMaxInputFileBytes);

// An output path that is a FIFO (named pipe): opening it to write waits until some program opens
// it to read, forever when none does. open_output_fifo() returns -1 when `path` is no FIFO;
// for a FIFO, a descriptor opened without waiting (then made blocking, so writes wait for the
// reader as pipes do) when a reader has it open, else Error{InvalidInput} naming `what` and
// the path. The caller writes through the descriptor and closes it.
int open_output_fifo(const std::string& path, const std::string& what);

}  // namespace mgpu::core
