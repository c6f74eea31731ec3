// Running a compiled matmul kernel once on the virtual device (MGPU_CUDA_DRIVER =
// libmgpu_vcuda.so) and verifying it: the same seeded inputs and NaN-poisoned C as on a GPU,
// a float64 reference computed on the CPU (cuBLASLt needs a GPU), and the checkers' findings
// of the launch. Contract: never a time (the virtual device has no clock); status ok,
// wrong_result, hazard (a synchronization error the checkers found, whatever the numbers say),
// fault or launch_error; the findings are in the message.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/built_kernel.h"
#include "core/cuda_driver.h"
#include "harness/measure/measurement.h"
#include "harness/measure/trial_request.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {

// Runs request.seeds schedules (seeds schedule_seed(0), schedule_seed(1), ...); the first
// that fails is the verdict, its seed named in the message.
Measurement verify_on_emulator(const TrialRequest& request, const kernels::MatmulTemplate& t,
                               const core::BuiltKernel& kernel, const std::string& ptx);

// Runs `seeds` schedules, each through `once(seed, bytes)` (its verdict; the launch's output
// bytes into `bytes`); the first that fails is the verdict, named by schedule and seed. A
// schedule whose bytes differ from the first's is wrong_result, `differs(at, first, got)` saying
// where (the first byte that differs); a pass under several says so and keeps the last notes.
Measurement run_schedules(int seeds, const std::function<Measurement(std::uint64_t seed, std::vector<std::uint8_t>& bytes)>& once,
                          const std::function<std::string(std::size_t at, const std::vector<std::uint8_t>& first,
                                                          const std::vector<std::uint8_t>& got)>& differs);

// The i-th schedule's seed: 1, 4, 2, 3, 5, 8, 6, 7, ... (seed % 4 == 0: async work lands as
// late as is legal; odd: woken waiters run at once), so two schedules already try both.
std::uint64_t schedule_seed(int i);

// What the virtual device's checkers reported for the last launch: hazards (findings: the
// trial fails) and notes (said, not counted), with the whole report (bank conflicts).
struct LaunchFindings {
  std::vector<std::string> hazards, notes;
  nlohmann::json report;
  void fail(Measurement& m) const;           // status hazard, the findings in the message
  void describe_pass(Measurement& m) const;  // notes and bank conflicts in a passing verdict's message
};
LaunchFindings last_launch_findings();

// A launch that threw: fault or launch error, a hang (deadlock, step limit) or an unsupported
// instruction told apart by the virtual device's first report; a step limit lowered below the
// default is no verdict (env_error).
void explain_launch_failure(Measurement& m, const core::CudaError& e);

// Where the virtual device's driver library is: $MGPU_CUDA_DRIVER, else next to this
// executable (the build tree's core/emu/, or the bundle's lib/). Empty when not found.
std::string find_virtual_device_library();

}  // namespace mgpu::harness
