#include "harness/cmd_devices.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/device_query.h"
#include "core/toolkit.h"

namespace mgpu::harness {
namespace {

nlohmann::json to_json(const core::DeviceReport& r) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const core::GpuInfo& g : r.gpus) {
    gpus.push_back({{"ordinal", g.ordinal},
                    {"name", g.name},
                    {"compute_capability", fmt::format("{}.{}", g.cc_major, g.cc_minor)},
                    {"arch", g.arch ? nlohmann::json(g.arch->name) : nlohmann::json(nullptr)},
                    {"sm_count", g.sm_count},
                    {"memory_bytes", g.memory_bytes},
                    {"l2_bytes", g.l2_bytes},
                    {"smem_per_block_optin", g.smem_per_block_optin},
                    {"sm_clock_khz", g.sm_clock_khz},
                    {"cluster_launch", g.cluster_launch}});
  }
  nlohmann::json j = {{"gpus", gpus},
                      {"driver_version", r.driver_version},
                      {"driver_cuda_version", r.driver_cuda_version},
                      {"toolkit_cuda_major", core::cuda_toolkit_major_version()}};
  j["unavailable"] = r.unavailable ? nlohmann::json(*r.unavailable) : nlohmann::json(nullptr);
  return j;
}

void print_text(const core::DeviceReport& r) {
  if (r.gpus.empty()) {
    fmt::print("no CUDA GPU: {}\n", r.unavailable.value_or("none found"));
    return;
  }
  constexpr double kGiB = 1024.0 * 1024 * 1024, kMiB = 1024.0 * 1024;
  for (const core::GpuInfo& g : r.gpus) {
    fmt::print("GPU {}: {} (compute capability {}.{}, {})\n", g.ordinal, g.name, g.cc_major,
               g.cc_minor, g.arch ? fmt::format("target {}", g.arch->name) : "no mgpu-tune target");
    fmt::print("  {} SMs, {:.1f} GiB memory, {:.1f} MiB L2, {} KiB SMEM per block (opt-in), "
               "SM clock {} MHz, cluster launch {}\n",
               g.sm_count, g.memory_bytes / kGiB, g.l2_bytes / kMiB, g.smem_per_block_optin / 1024,
               g.sm_clock_khz / 1000, g.cluster_launch ? "yes" : "no");
  }
  fmt::print("driver {} (supports CUDA {}.{}); built with CUDA toolkit {}\n",
             r.driver_version.empty() ? "version unknown" : r.driver_version,
             r.driver_cuda_version / 1000, (r.driver_cuda_version % 1000) / 10,
             core::cuda_toolkit_major_version());
}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List the CUDA GPUs seen by the driver (exit 0 also when there are none)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON instead of text");
  cmd->callback([json] {
    core::DeviceReport r = core::query_devices();
    if (*json) std::cout << to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else print_text(r);
  });
}

}  // namespace mgpu::harness
