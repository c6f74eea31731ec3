// Version of mgpu-tune and of the toolchain it was built with, for --version and provenance.
#pragma once

#include <string>

namespace mgpu::harness {

std::string version_string();  // "mgpu-tune X.Y.Z (MLIR A.B.C, CUDA toolkit D.E)"
// This running binary's absolute path (what worker processes and Slurm scripts run again).
std::string executable_path();

}  // namespace mgpu::harness
