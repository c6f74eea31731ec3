#include "core/c_literal.h"

#include <fmt/format.h>

namespace mgpu::core {

std::string c_string_literal(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\' || c == '?') out += '\\', out += static_cast<char>(c);  // '?': no trigraphs
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\{:03o}", c);  // octal: 3 digits at most, never runs on
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

}  // namespace mgpu::core
