// The virtual device (core/emu, libmgpu_vcuda.so) as a place where kernels are verified.
// Contract: why_not_verifiable() says why an arch's kernels cannot run there (nullopt when
// they can); use_virtual_device() points this process and the workers it starts at the
// library (MGPU_CUDA_DRIVER) or throws Error{InvalidInput} naming what is missing;
// virtual_environment() is the environment row verification trials are recorded under.
#pragma once

#include <optional>
#include <string>

#include "core/arch.h"
#include "results/store.h"

namespace mgpu::harness {

std::optional<std::string> why_not_verifiable(const core::ArchSpec& arch);

// Returns the library's path. `what` names the option that needs it, for the message.
std::string use_virtual_device(const std::string& what);

results::Environment virtual_environment(const core::ArchSpec& arch);

}  // namespace mgpu::harness
