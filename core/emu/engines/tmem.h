// Tensor memory (PTX ISA 9.7.16 "Tensor Memory"): per SM, 128 lanes x 512 columns of 32-bit
// cells, addressed as (lane << 16) | column ("Tensor Memory Addressing"), and
// allocated in columns by tcgen05.alloc (9.7.16 "tcgen05.alloc": a power of two >= 32 and <= 512, all 128
// lanes of those columns). CTAs resident on one SM share it and compete for its columns.
// Contract: allocate() never blocks (the caller waits and retries while it fails); who holds
// which column is kept for the deadlock and leak reports; cells start as NaN (all ones).
//
// The allocation permit (9.7.16.7.1 "tcgen05.relinquish_alloc_permit": the instruction "specifies
// that the CTA of the executing thread is relinquishing the right to allocate Tensor Memory. So,
// it is illegal for a CTA to perform tcgen05.alloc after any of its constituent threads execute
// tcgen05.relinquish_alloc_permit"). The ISA does not spell out what the right means for the
// other CTAs of the SM; CUTLASS ("Release the right to allocate before deallocations so that the
// next CTA can rasterize") and nvFuser ("because we are relinquishing the right to allocate, CTAs
// are no longer serialized") do: one CTA of an SM holds it at a time, and the next allocates only
// once it is given up. Modelled so: each SM's permit is held by one CTA, from its first
// tcgen05.alloc until it relinquishes or exits; a CTA allocates only while it holds its SM's
// permit, and takes it when free, together with the permits of its cluster's other CTAs' SMs
// (a cluster is launched as a whole, so it never holds some of its SMs' permits while another
// cluster holds the rest). permit_available() and take_permits() are that rule.
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

  // The SM's allocation permit: the CTA holding it (null: free), and the tcgen05.alloc that
  // took it (`by` is the CTA that executed it: the holder, or another CTA of its cluster).
  struct Permit {
    const Cta* holder = nullptr;
    const Cta* by = nullptr;
    int warp = -1, line = -1;
  };
  const Permit& permit() const { return permit_; }
  void give_permit(const Permit& p) { permit_ = p; }
  void release_permit(const Cta* cta) {
    if (permit_.holder == cta) permit_ = Permit{};
  }

  std::uint32_t& cell(std::uint32_t lane, std::uint32_t col) { return cells_[static_cast<std::size_t>(lane) * kColumns + col]; }

 private:
  struct Owner {
    const Cta* cta = nullptr;
    int warp = -1, line = -1;
  };
  std::vector<std::uint32_t> cells_;
  std::vector<Owner> owner_;
  Permit permit_;
};

// The tensor memory of the SM `cta` runs on (made on first use).
TensorMemory& tmem_of(Cta& cta);

// Whether `cta` may allocate now as far as the permit goes: it holds its SM's permit, or every
// CTA of its cluster that has neither relinquished nor exited holds its SM's permit or finds it
// free. take_permits() then gives them all theirs (the tcgen05.alloc of `warp` at PTX `line`).
bool permit_available(Cta& cta);
void take_permits(Cta& cta, int warp, int line);
// Why `cta` cannot take the permits now: "the tensor memory allocation permit of its SM, held by
// CTA (x,y,z) (it took ...), which has not executed tcgen05.relinquish_alloc_permit..." (or of the
// SM of a CTA of its cluster). Empty when permit_available().
std::string permit_blocker(Cta& cta);

// A tensor-memory address ("Tensor Memory Addressing"): lane in bits 31-16, column in bits 15-0.
inline std::uint32_t tmem_lane(std::uint32_t addr) { return addr >> 16; }
inline std::uint32_t tmem_column(std::uint32_t addr) { return addr & 0xFFFF; }

}  // namespace mgpu::emu
