#include "core/emu/exec/address.h"
#include "core/emu/exec/state.h"

namespace mgpu::emu {

std::uint64_t GlobalMemory::alloc(std::uint64_t bytes) {
  if (!next_) next_ = kGlobalBase;
  std::uint64_t base = next_;
  Block b{bytes, std::make_unique<std::uint8_t[]>(bytes ? bytes : 1)};
  blocks_.emplace(base, std::move(b));
  // 256-byte alignment as cuMemAlloc gives, plus a gap so an overrun faults instead of landing
  // in the next allocation.
  next_ += (bytes + 255) / 256 * 256 + 4096;
  live_bytes_ += bytes;
  return base;
}

bool GlobalMemory::free(std::uint64_t addr) {
  auto it = blocks_.find(addr);
  if (it == blocks_.end()) return false;
  live_bytes_ -= it->second.size;
  if (last_base_ == addr) last_data_ = nullptr;
  blocks_.erase(it);
  return true;
}

std::uint8_t* GlobalMemory::find(std::uint64_t addr, std::uint64_t bytes) {
  if (last_data_ && addr >= last_base_ && addr + bytes <= last_base_ + last_size_) return last_data_ + (addr - last_base_);
  auto it = blocks_.upper_bound(addr);
  if (it == blocks_.begin()) return nullptr;
  --it;
  if (addr + bytes > it->first + it->second.size) return nullptr;
  last_base_ = it->first;
  last_size_ = it->second.size;
  last_data_ = it->second.data.get();
  return last_data_ + (addr - it->first);
}

}  // namespace mgpu::emu
