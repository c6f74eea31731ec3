// What a cubin's ELF file says about its functions, without any CUDA tool (issue 19: the
// `sass` command on cubins that other compilers, e.g. Triton, produced).
// Contract: cubin_functions() checks that the image is a CUDA ELF (64-bit, EM_CUDA) and
// returns, in section order, each function with code (a ".text.NAME" section) and its register
// count: the EIATTR_REGCOUNT attribute of the ".nv.info" section (CUDA 12/13 assemblers), else
// the top byte of the text section's sh_info (older ones), else 0. Anything that is not a
// cubin (not ELF, another machine, truncated headers) throws Error{InvalidInput} saying what.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mgpu::core {

struct CubinFunction {
  std::string name;
  int registers = 0;
};

std::vector<CubinFunction> cubin_functions(std::string_view image);

}  // namespace mgpu::core
