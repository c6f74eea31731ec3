// Where the CUDA toolkit lives at run time, and the run-time libraries mgpu-tune opens.
// Contract: the toolkit root is $MGPU_CUDA_HOME, else $CUDA_HOME, else the root found at build
// time; ptxas is $MGPU_PTXAS or <root>/bin/ptxas. load_runtime_library() tries the versioned
// soname first (the system loader's paths, then the toolkit's own lib folders) and throws
// Error{Unavailable} with every path it tried when the library cannot be opened.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/dynlib.h"

namespace mgpu::core {

enum class RuntimeLibrary { CudaDriver, Nvml, NvJitLink, Cupti, CublasLt };

std::string_view to_string(RuntimeLibrary lib);
std::string cuda_toolkit_root();
std::string ptxas_path();
int cuda_toolkit_major_version();  // the toolkit this binary was built against, e.g. 13

std::vector<std::string> runtime_library_candidates(RuntimeLibrary lib);
DynamicLibrary load_runtime_library(RuntimeLibrary lib);

}  // namespace mgpu::core
