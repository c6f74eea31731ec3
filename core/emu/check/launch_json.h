// A launch's outcome as JSON (ok, warp- and thread-instruction counts, printf output, and each
// report with kind, fatal, note, CTA, warp, lane, pc, PTX line and message, and the
// shared-memory bank conflicts in total, per PTX line and per label region): what the driver's
// mgpuEmuLastLaunch extension and `mgpu-tune emulate --json` print.
#pragma once

#include <string>

#include "core/emu/device.h"

namespace mgpu::emu {

std::string launch_json(const LaunchResult& r);

}  // namespace mgpu::emu
