// Tensor memory (PTX ISA 9.7.16 "Tensor Memory"): per SM, 128 lanes x 512 columns of 32-bit
// cells, addressed as (lane << 16) | column ("Tensor Memory Addressing"), and
// allocated in columns by tcgen05.alloc (9.7.16 "tcgen05.alloc": a power of two >= 32 and <= 512, all 128
// lanes of those columns). CTAs resident on one SM share it and compete for its columns.
// Contract: allocate() never blocks (the caller waits and retries while it fails); who holds
// which column is kept for the deadlock and leak reports; cells start as NaN (all ones).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mgpu::emu {

struct Cta;

class TensorMemory {
 public:
  static constexpr std::uint32_t kLanes = 128, kColumns = 512;

  TensorMemory() : cells_(static_cast<std::size_t>(kLanes) * kColumns, 0xFFFFFFFFu), owner_(kColumns) {}

  // The column count rule of tcgen05.alloc: "" or why `ncols` is not allowed.
  static std::string check_columns(std::uint64_t ncols);
  // First fit on 32-column boundaries; -1 when no such run of free columns exists now.
  int allocate(std::uint32_t ncols, const Cta* cta, int warp, int line);
  bool can_allocate(std::uint32_t ncols) const { return first_fit(ncols, nullptr) >= 0; }
  // The first 32-column boundary where `ncols` columns are free here and in `other` (if given),
  // or -1; take() allocates them (a cta_group::2 allocation holds the same columns in both CTAs).
  int first_fit(std::uint32_t ncols, const TensorMemory* other) const;
  void take(std::uint32_t col, std::uint32_t ncols, const Cta* cta, int warp, int line);
  // Frees [col, col + ncols); "" or why not (a column not held by `cta`).
  std::string deallocate(std::uint32_t col, std::uint32_t ncols, const Cta* cta);
  // Whether every column of [col, col + ncols) is held by `cta`.
  bool held_by(std::uint32_t col, std::uint32_t ncols, const Cta* cta) const;
  // Columns `cta` still holds, as "[a, b) (warp w, PTX line l)" pieces; empty if none.
  std::string held_text(const Cta* cta) const;
  void release_all(const Cta* cta);
  // Who holds what: "columns [a, b) by CTA (x,y,z) warp w (PTX line l); ..." or "none".
  std::string describe() const;

  std::uint32_t& cell(std::uint32_t lane, std::uint32_t col) { return cells_[static_cast<std::size_t>(lane) * kColumns + col]; }

 private:
  struct Owner {
    const Cta* cta = nullptr;
    int warp = -1, line = -1;
  };
  std::vector<std::uint32_t> cells_;
  std::vector<Owner> owner_;
};

// The tensor memory of the SM `cta` runs on (made on first use).
TensorMemory& tmem_of(Cta& cta);

// A tensor-memory address ("Tensor Memory Addressing"): lane in bits 31-16, column in bits 15-0.
inline std::uint32_t tmem_lane(std::uint32_t addr) { return addr >> 16; }
inline std::uint32_t tmem_column(std::uint32_t addr) { return addr & 0xFFFF; }

}  // namespace mgpu::emu
