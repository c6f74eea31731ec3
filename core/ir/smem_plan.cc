#include "core/ir/smem_plan.h"

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::core::ir {

std::int64_t SmemPlan::alloc(std::string name, std::int64_t bytes, std::int64_t alignment) {
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw Error(ErrorKind::InvalidInput, fmt::format("SMEM region {}: alignment {} is not a power of two", name, alignment));
  if (bytes <= 0) throw Error(ErrorKind::InvalidInput, fmt::format("SMEM region {}: size {} is not positive", name, bytes));
  for (const SmemRegion& r : regions_)
    if (r.name == name) throw Error(ErrorKind::InvalidInput, fmt::format("SMEM region {} allocated twice", name));
  std::int64_t offset = (end_ + alignment - 1) & ~(alignment - 1);
  regions_.push_back({std::move(name), offset, bytes});
  end_ = offset + bytes;
  return offset;
}

const SmemRegion& SmemPlan::region(const std::string& name) const {
  for (const SmemRegion& r : regions_)
    if (r.name == name) return r;
  throw Error(ErrorKind::InvalidInput, fmt::format("no SMEM region named {}", name));
}

}  // namespace mgpu::core::ir
