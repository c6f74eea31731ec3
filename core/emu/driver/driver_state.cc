#include "core/emu/driver/driver_state.h"


namespace mgpu::emu {

DriverState& DriverState::get() {
  // Never destroyed: a program's exit runs static destructors while its other threads may still
  // be in a driver call (an async runtime's workers), which must not find the state gone.
  static DriverState* s = new DriverState;
  return *s;
}

CUresult DriverState::fail(CUresult code, std::string why) {
  last_error = std::move(why);
  return code;
}

CUresult fault_code(ReportKind k) {
  switch (k) {
    case ReportKind::OutOfBounds: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case ReportKind::Misaligned: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case ReportKind::Deadlock: case ReportKind::StepLimit: return CUDA_ERROR_LAUNCH_TIMEOUT;
    case ReportKind::NotConverged: return CUDA_ERROR_ILLEGAL_INSTRUCTION;
    case ReportKind::Trap: return CUDA_ERROR_LAUNCH_FAILED;
    case ReportKind::RegisterFile: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    case ReportKind::Unsupported: return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_LAUNCH_FAILED;
  }
}

}  // namespace mgpu::emu
