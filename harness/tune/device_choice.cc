#include "harness/tune/device_choice.h"

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "core/cuda_driver.h"
#include "core/error.h"
#include "harness/measure/measure_trial.h"
#include "harness/measure/replay_measurer.h"
#include "harness/measure/trial_record.h"
#include "harness/measure/worker.h"
#include "harness/verify/virtual_device.h"
#include "harness/version.h"

namespace mgpu::harness {

// The virtual device (core/emu) behind the CUDA driver ABI, set up for this process and the
// workers it starts; its report (one GPU: the virtual device, with its memory).
core::DeviceReport virtual_device_report(const core::ArchSpec& arch) {
  if (auto why = why_not_verifiable(arch)) throw core::Error(core::ErrorKind::InvalidInput, "--device emulate: " + *why);
  std::string lib = use_virtual_device(arch, "--device emulate");
  core::DeviceReport report = core::query_devices();
  if (report.gpus.empty() || !core::CudaDriver::get().emulated())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--device emulate: {} is not the virtual device ({})", lib, report.unavailable.value_or("another driver is loaded")));
  return report;
}

namespace {

// The virtual device: kernels run and are verified in a worker process, with no time -- it has
// no clock.
Device emulator(const core::ArchSpec& arch, const DeviceChoice& choice) {
  core::DeviceReport report = virtual_device_report(arch);
  if (choice.check_fits_virtual_device) choice.check_fits_virtual_device(report);
  Device d;
  d.source = "emulate";
  d.env = gpu_environment(report.gpus.front(), report, arch);
  d.rates = &arch.default_device();
  auto worker = std::make_shared<WorkerProcess>(std::vector<std::string>{executable_path(), "worker"}, 900.0);
  d.measure = [worker](const TrialRequest& r) { return worker->run(r); };
  return d;
}

}  // namespace

Device pick_device(const DeviceChoice& o, const core::ArchSpec& arch) {
  const core::DeviceSpec& model_device = arch.default_device();
  auto model = [&](std::string note) {
    Device d;
    d.source = "model";
    d.note = std::move(note);
    d.env = model_environment(arch);
    d.rates = &model_device;
    d.measure = [](const TrialRequest& r) { return measure_trial(r); };
    return d;
  };
  if (o.device == "model") return model("");
  if (o.device.rfind("replay:", 0) == 0) {
    std::string path = o.device.substr(7);
    check_replay_is_not_output(path, o.db);
    auto replay = std::make_shared<ReplayMeasurer>(path, o.template_name, o.problem_key);
    Device d;
    d.source = "replay";
    d.note = replay->prediction_note(path);
    // The search runs over what the database answers, as a T4 replay runs over the file's space.
    d.offers = [replay](const core::TuningConfig& c) { return replay->knows(c.to_json()); };
    d.env = {fmt::format("replay:{}", std::filesystem::path(path).filename().string()), std::string(arch.name),
             fmt::format("{}.{}", arch.cc_major, arch.cc_minor), model_device.sm_count, "", "", 0};
    d.rates = &model_device;
    d.measure = [replay](const TrialRequest& r) { return replay->measure(r); };
    return d;
  }
  if (o.device == "emulate") return emulator(arch, o);
  core::DeviceReport report = core::query_devices();
  // The virtual device runs PTX and has no clock: taken for a GPU, every trial became a
  // 'cuda' launch error counted against the budget.
  if (!report.gpus.empty() && core::CudaDriver::get().emulated()) {
    if (o.device == "cuda")
      throw core::Error(core::ErrorKind::InvalidInput,
                        "--device cuda: the CUDA driver loaded is the virtual device (MGPU_CUDA_DRIVER), which has no "
                        "clock: use --device emulate to verify on it, or unset MGPU_CUDA_DRIVER to measure on a GPU");
    return model("nothing will be measured: the CUDA driver loaded is the virtual device (MGPU_CUDA_DRIVER), which has "
                 "no clock. Predicting with the cost model instead (--device emulate verifies on it); every result is "
                 "labelled 'model'");
  }
  const core::GpuInfo* gpu = nullptr;
  for (const core::GpuInfo& g : report.gpus)
    if (g.arch == &arch) gpu = &g;
  if (!gpu) {
    std::string why = report.gpus.empty() ? report.unavailable.value_or("no GPU")
                                          : fmt::format("no {} GPU among the {} found", arch.name, report.gpus.size());
    if (o.device == "cuda")
      throw core::Error(core::ErrorKind::InvalidInput, fmt::format("--device cuda needs a {} GPU: {}", arch.name, why));
    return model(fmt::format("nothing will be measured: {}. Predicting with the cost model instead; every result "
                             "is labelled 'model'", why));
  }
  Device d;
  d.source = "cuda";
  d.env = gpu_environment(*gpu, report, arch);
  const core::DeviceSpec* spec = arch.find_device(gpu->name);
  d.rates = spec ? spec : &model_device;
  // Trials run in a worker process (this same executable), which a faulting or hanging kernel
  // can take down without taking the tuner with it.
  auto worker = std::make_shared<WorkerProcess>(std::vector<std::string>{executable_path(), "worker"}, 120.0);
  d.measure = [worker](const TrialRequest& r) { return worker->run(r); };
  return d;
}


}  // namespace mgpu::harness
