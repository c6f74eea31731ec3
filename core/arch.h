// The arch table: the targets mgpu-tune compiles for and the GPUs that implement them.
// Contract: parse_arch() accepts "sm_90", "sm_90a", "sm_100", "sm_100a" (short forms mean the
// arch-specific "a" targets) and throws Error{InvalidInput} naming the valid choices otherwise.
// Limits are per the CUDA programming guide; device figures are datasheet leads (dense rates),
// used by the cost model and for "% of peak" — measured ceilings always win when present.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mgpu::core {

struct DeviceSpec {
  std::string_view name;   // marketing name, e.g. "H100 SXM"
  std::string_view match;  // substring of the driver's device name that identifies it
  int sm_count;
  int boost_clock_mhz;
  double peak_tflops_bf16;  // dense tensor-core rates
  double peak_tflops_f16;
  double peak_tflops_fp8;
  double hbm_gbytes_per_s;
  std::int64_t l2_bytes;
  std::int64_t memory_bytes;
};

struct ArchSpec {
  std::string_view name;    // canonical target name, e.g. "sm_90a"
  std::string_view family;  // "Hopper", "Blackwell"
  int cc_major;
  int cc_minor;
  int min_ptx_isa;  // PTX ISA version our PTX declares for the target, times ten (86 = PTX 8.6)
  int smem_per_block_optin;  // bytes, with cudaFuncAttributeMaxDynamicSharedMemorySize
  int smem_per_sm;           // bytes
  int regs_per_sm;           // 32-bit registers
  int max_regs_per_thread;
  int max_threads_per_block;
  int max_cluster_size_portable;
  int max_cluster_size;  // with cudaFuncAttributeNonPortableClusterSizeAllowed
  int tmem_columns;      // tensor memory columns per SM (128 lanes x 32 bit each); 0 = none
  std::span<const DeviceSpec> devices;  // first one is the default for predictions

  const DeviceSpec& default_device() const { return devices.front(); }
  // The device whose `match` occurs in the driver's name, or nullptr.
  const DeviceSpec* find_device(std::string_view driver_name) const;
  // LLVM's feature string for the minimum PTX ISA, e.g. "+ptx80".
  std::string ptx_feature() const;
};

std::span<const ArchSpec> all_archs();
const ArchSpec& parse_arch(std::string_view text);
// The arch a device of this compute capability runs natively, or nullptr.
const ArchSpec* arch_for_compute_capability(int major, int minor);
// "sm_90, sm_90a, sm_100, sm_100a": for help texts and error messages.
std::string arch_choices();

}  // namespace mgpu::core
