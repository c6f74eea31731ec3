// PTX -> cubin through the toolkit's `ptxas` program: the fallback when nvJitLink (the
// in-process assembler, nvjitlink.h) is absent, and the reference for resource numbers.
// Contract: assemble_with_ptxas() runs `ptxas -arch=<arch> -O<n> -v`; a non-zero exit throws
// Error{Compile} naming the "ptxas" stage and carrying its log; a missing ptxas throws
// Error{Unavailable}. A temporary folder (TMPDIR) that is full, or a file-size limit (ulimit -f)
// that cuts a temporary file short, throws Error{IO} saying so: the machine's failure, whatever
// ptxas then did (an exit 255 with an empty log, no cubin), never the kernel's compile error.
// ptxas_version() is the first line of `ptxas --version` that names the release.
#pragma once

#include <string>
#include <string_view>

#include "core/arch.h"
#include "core/cubin.h"

namespace mgpu::core {

Cubin assemble_with_ptxas(std::string_view ptx, const ArchSpec& arch, int opt_level = 3);
std::string ptxas_version();

}  // namespace mgpu::core
