// What the HTML report draws, gathered from a results database as one JSON document: the runs,
// every trial (template, problem, device, source, status, config, median, noise, TFLOP/s), the
// exported best configs (measured and predicted, each with its source and verification, and a
// note of the rows skipped because the virtual device failed them), and the verification
// section (verification_summary.h). Read-only.
#pragma once

#include <string>

namespace mgpu::harness {

std::string report_data_json(const std::string& db_path);

}  // namespace mgpu::harness
