// Running a compiled matmul kernel once on the virtual device (MGPU_CUDA_DRIVER =
// libmgpu_vcuda.so) and verifying it: the same seeded inputs and NaN-poisoned C as on a GPU,
// a float64 reference computed on the CPU (cuBLASLt needs a GPU), and the checkers' findings
// of the launch. Contract: never a time (the virtual device has no clock); status ok,
// wrong_result, hazard (a synchronization error the checkers found, whatever the numbers say),
// fault or launch_error; the findings are in the message.
#pragma once

#include <string>

#include "core/built_kernel.h"
#include "harness/measure/measurement.h"
#include "harness/measure/trial_request.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {

Measurement verify_on_emulator(const TrialRequest& request, const kernels::MatmulTemplate& t,
                               const core::BuiltKernel& kernel, const std::string& ptx);

// Where the virtual device's driver library is: $MGPU_CUDA_DRIVER, else next to this
// executable (the build tree's core/emu/, or the bundle's lib/). Empty when not found.
std::string find_virtual_device_library();

}  // namespace mgpu::harness
