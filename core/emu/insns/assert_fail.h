// What a failed device assertion (a call of __assertfail, CUDA's device-side assert) reports:
// a Trap finding whose message starts with kAssertFailPrefix, so the driver answers the launch
// with CUDA_ERROR_ASSERT as CUDA does (insns/control.cc raises it, driver/cuda_api.cc maps it).
#pragma once

namespace mgpu::emu {

inline constexpr const char* kAssertFailPrefix = "device assertion failed: ";

}  // namespace mgpu::emu
