// TuningConfig reading helpers shared by the matmul templates' configs: the grid-order
// dimension type and the checks every from_tuning_config() makes. Contract: each helper
// throws Error{InvalidInput} with a message naming the parameter and what it accepts.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/tuning_config.h"

namespace mgpu::kernels {

enum class Dim { M, N };
std::string_view to_string(Dim d);

// Every name present, no other: "unknown matmul config parameter 'x' (the parameters: ...)"
// or "the config lacks 'x' (...)". `added_later` names parameters a template gained after
// configs were stored without them: those may be absent (the reader then takes the value that
// reproduces the kernel the stored config ran), and are listed among the parameters.
void check_param_names(const core::TuningConfig& t, std::initializer_list<const char*> names,
                       std::initializer_list<const char*> added_later = {});
// One parameter's value, each refusal naming the parameter: what a Config's set_param() is
// written with, so parsing a whole config and updating one parameter of a parsed config (a walk
// of the space) are one code.
int int_value(std::string_view name, const core::ParamValue& v);
const std::string& str_value(std::string_view name, const core::ParamValue& v);
Dim dim_value(std::string_view name, const core::ParamValue& v);  // "M" | "N"

}  // namespace mgpu::kernels
