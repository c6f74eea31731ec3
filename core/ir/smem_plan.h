// Carving the dynamic shared memory of a kernel into named, aligned regions. Pure arithmetic,
// no IR: templates plan first (and the validity predicate can ask the plan's total without
// building anything), then turn offsets into pointers with Emitter::smem_offset.
// Contract: alloc() returns the region's offset, aligned as asked (a power of two); regions
// never overlap; total_bytes() is the dynamic SMEM size to launch with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mgpu::core::ir {

struct SmemRegion {
  std::string name;
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
};

// Bytes of a ring of `depth` mbarriers (8 bytes each); BarrierRing::bytes() agrees.
constexpr std::int64_t BarrierRingBytes(int depth) { return 8 * std::int64_t(depth); }

class SmemPlan {
 public:
  std::int64_t alloc(std::string name, std::int64_t bytes, std::int64_t alignment);
  std::int64_t total_bytes() const { return end_; }
  const std::vector<SmemRegion>& regions() const { return regions_; }
  const SmemRegion& region(const std::string& name) const;

 private:
  std::vector<SmemRegion> regions_;
  std::int64_t end_ = 0;
};

}  // namespace mgpu::core::ir
