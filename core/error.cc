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

int exit_code_for(ErrorKind kind) {
  return kind == ErrorKind::InvalidInput ? kExitBadInput : kExitFailure;
}

}  // namespace mgpu::core
