// A config given by hand (--config of `compile matmul` and `bench matmul`), possibly partial.
// Contract: fields it leaves out take the template's default values (like Pallas's
// TuningConfig defaults), and a note on stderr names each defaulted field and its value;
// unknown fields, values of the wrong type or out of range are Error{InvalidInput}.
#pragma once

#include <string>

#include "core/tuning_config.h"
#include "kernels/matmul_template.h"
#include "kernels/op_template.h"

namespace mgpu::harness {

core::TuningConfig config_from_user(const kernels::MatmulTemplate& t, const std::string& json);
core::TuningConfig config_from_user(const kernels::OpTemplate& t, const std::string& json);

}  // namespace mgpu::harness
