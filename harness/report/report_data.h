// What the HTML report draws, gathered from a results database as one JSON document: the runs,
// every trial (template, problem, device, source, status, config, median, noise, TFLOP/s), and
// the exported best configs (measured and predicted, each with its source). Read-only.
#pragma once

#include <string>

namespace mgpu::harness {

std::string report_data_json(const std::string& db_path);

}  // namespace mgpu::harness
