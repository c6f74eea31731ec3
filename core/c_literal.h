// Text as a C or C++ string literal, for generated sources (the C++ header export, a kernel
// pack's tables): whatever the text holds -- a quote, a backslash, a newline, a byte that is not
// ASCII -- the compiled literal is the same bytes and nothing else.
#pragma once

#include <string>
#include <string_view>

namespace mgpu::core {

std::string c_string_literal(std::string_view text);

}  // namespace mgpu::core
