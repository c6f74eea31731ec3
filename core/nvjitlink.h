// PTX -> cubin in process through nvJitLink (libnvJitLink.so.<toolkit major>, opened at run
// time), as Mosaic GPU does: no process spawn, no temporary files. Contract:
// nvjitlink_available() says whether the library loads; assemble_with_nvjitlink() throws
// Error{Unavailable} when it does not and Error{Compile} naming the "nvJitLink" stage, with its
// error log, when the PTX is rejected. Thread-safe: each call uses its own handle.
#pragma once

#include <string>
#include <string_view>

#include "core/arch.h"
#include "core/cubin.h"

namespace mgpu::core {

bool nvjitlink_available();
std::string nvjitlink_version();  // e.g. "nvJitLink 13.0"
Cubin assemble_with_nvjitlink(std::string_view ptx, const ArchSpec& arch, int opt_level = 3);

}  // namespace mgpu::core
