// Error categories shared by every layer, and the exit code each maps to.
// Contract: code that rejects user input throws Error{ErrorKind::InvalidInput, ...}; the CLI
// turns InvalidInput into exit code 2 and every other kind into 1 (a failure of the work).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace mgpu::core {

enum class ErrorKind {
  InvalidInput,  // bad flags, files, shapes or configs: the user can fix it
  Unavailable,   // a needed tool, library or device is absent on this machine
  Compile,       // a stage of the MLIR -> PTX -> cubin pipeline failed
  Launch,        // the driver refused to load or launch a kernel
  WrongResult,   // a kernel ran but its output failed verification
  Timeout,       // a compile or a measurement overran its budget
  IO,            // a file or database could not be read or written
};

std::string_view to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  // A byte that prints nothing in the message (a NUL a value carried would end what() there) is
  // kept as \xNN; line breaks and tabs stay.
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(printable(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  static std::string printable(const std::string& message);

 private:
  ErrorKind kind_;
};

// Exit codes: 0 success, 1 failure of the work, 2 bad input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

int exit_code_for(ErrorKind kind);

}  // namespace mgpu::core
