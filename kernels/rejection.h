// Why a config cannot work: the rule it breaks (a short, stable id that reports count by) and
// a sentence for people.
#pragma once

#include <string>

namespace mgpu::kernels {

struct Rejection {
  std::string rule;
  std::string reason;
};

}  // namespace mgpu::kernels
