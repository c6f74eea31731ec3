// Where a tuning run's trials run, from --device: the cost model ("model"), a results database
// read back ("replay:PATH"), the virtual device ("emulate"), a GPU ("cuda"), or the GPU when
// there is one and the model when not ("auto", saying so in `note`). Op-neutral: what depends
// on the op comes in DeviceChoice. Contract: pick_device() throws Error{InvalidInput} for a
// choice that cannot be had (--device cuda without a GPU, the virtual device taken for one, a
// problem too big for the virtual device); GPU and virtual-device trials run in a worker
// process (crash containment, harness/measure/worker.h).
#pragma once

#include <functional>
#include <string>

#include "core/arch.h"
#include "core/device_query.h"
#include "core/tuning_config.h"
#include "harness/measure/measurement.h"
#include "harness/measure/trial_request.h"
#include "results/store.h"

namespace mgpu::harness {

// Where trials run: the device kind, its environment row, and how to measure one config.
struct Device {
  std::string source;  // cuda | model | replay
  std::string note;
  results::Environment env;
  // The rates the strategies' cost model predicts with and the peak the report divides by: the
  // GPU's own where the arch lists it (an H200 lease ranked by the H100's bandwidth never
  // proposed split-K), else the arch's default device.
  const core::DeviceSpec* rates = nullptr;
  std::function<Measurement(const TrialRequest&)> measure;
  std::function<bool(const core::TuningConfig&)> offers;  // the configs it can answer; unset: all
};

struct DeviceChoice {
  std::string device;         // --device
  std::string db;             // the output database (a replay must not read it)
  std::string template_name;  // what a replay reads back
  std::string problem_key;
  // Throws Error{InvalidInput} when the problem cannot run on the virtual device (memory).
  std::function<void(const core::DeviceReport&)> check_fits_virtual_device;
};

Device pick_device(const DeviceChoice& choice, const core::ArchSpec& arch);

// The virtual device (core/emu) behind the CUDA driver ABI, set up for this process and the
// workers it starts; its report (one GPU: the virtual device, with its memory).
core::DeviceReport virtual_device_report(const core::ArchSpec& arch);

}  // namespace mgpu::harness
