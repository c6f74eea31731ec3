// The virtual device (core/emu, libmgpu_vcuda.so) as a place where kernels are verified.
// Contract: why_not_verifiable() says why an arch's kernels cannot run there (nullopt when
// they can); use_virtual_device() points this process and the workers it starts at the
// library (MGPU_CUDA_DRIVER) or throws Error{InvalidInput} naming what is missing;
// virtual_environment() is the environment row verification trials are recorded under.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/arch.h"
#include "results/store.h"

namespace mgpu::harness {

std::optional<std::string> why_not_verifiable(const core::ArchSpec& arch);

// Error{InvalidInput} naming `what` when an MGPU_EMU_* knob is set to a value it does not take
// (core/emu/environment.h): for commands to call before they write anything.
void check_virtual_device_knobs(const std::string& what);
// The environment a virtual-device worker runs with ("NAME=value": the driver library, reports
// off -- findings come back in each trial's message --, races checked unless MGPU_EMU_RACES=0).
// `what` names the option that needs it, for the message when the library is missing.
// MGPU_EMU_ARCH makes the device present `arch` (sm_90a: an H100, sm_100a: a B200).
std::vector<std::string> virtual_device_environment(const core::ArchSpec& arch, const std::string& what);

// The same set in this process, for itself and every worker it starts; returns the library.
std::string use_virtual_device(const core::ArchSpec& arch, const std::string& what);

results::Environment virtual_environment(const core::ArchSpec& arch);

}  // namespace mgpu::harness
