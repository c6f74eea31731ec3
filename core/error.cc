#include "core/error.h"

namespace mgpu::core {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidInput: return "invalid input";
    case ErrorKind::Unavailable: return "unavailable";
    case ErrorKind::Compile: return "compile error";
    case ErrorKind::Launch: return "launch error";
    case ErrorKind::WrongResult: return "wrong result";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::IO: return "I/O error";
  }
  return "error";
}

std::string Error::printable(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (unsigned char c : message) {
    if (c >= 0x20 || c == '\n' || c == '\t') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

int exit_code_for(ErrorKind kind) {
  return kind == ErrorKind::InvalidInput ? kExitBadInput : kExitFailure;
}

}  // namespace mgpu::core
