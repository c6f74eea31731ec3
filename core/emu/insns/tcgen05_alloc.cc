// tcgen05.alloc / dealloc / relinquish_alloc_permit (PTX ISA 9.7.16 "Tensor Memory Allocation
// and Management Instructions"): a warp allocates a power-of-two number of columns (32..512) of
// its SM's tensor memory and the address is written to shared memory; an allocation that cannot
// be satisfied blocks until columns are freed, a deadlock when nothing ever frees them. A CTA
// allocates only while it holds its SM's allocation permit (engines/tmem.h), which it keeps until
// tcgen05.relinquish_alloc_permit or its exit; another CTA's allocation waits for it meanwhile.
#include "core/emu/insns/tcgen05.h"

#include <cstring>

#include "core/emu/exec/access.h"

namespace mgpu::emu::tcgen05 {

namespace {

// A cta_group::2 alloc/dealloc is performed by one warp of each CTA of the pair together: the
// first to get here waits ("Issue Granularity": "the first warp to perform the operation could
// block until the second warp in the Peer CTA also performs the operation"). An allocation
// takes the same columns in both CTAs' tensor memory, once both warps are there and both have
// them free ("ownership is held jointly by both peer CTAs").
Flow pair_alloc(Warp& w, const Insn& in, std::uint32_t mask, std::uint32_t n) {
  Cta& cta = *w.cta;
  const int l0 = __builtin_ctz(mask);
  Cta& peer = peer_of(w, in, l0);
  int col = cta.tc_alloc_result;
  if (col < 0) {
    cta.tc_alloc_req = n;
    cta.tc_alloc_warp = w.index;
    if (peer.tc_alloc_req != 0 && peer.tc_alloc_req != n)
      w.launch().report(ReportKind::TmemMisuse, where(w, in, l0),
                        "tcgen05.alloc.cta_group::2 of " + std::to_string(n) + " columns while the peer CTA's warp asks for " +
                            std::to_string(peer.tc_alloc_req));
    if (!peer.tc_alloc_req || (col = tmem_of(cta).first_fit(n, &tmem_of(peer))) < 0) {
      EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::TmemPairAlloc, 0, n};
      return Flow::Block;
    }
    tmem_of(cta).take(static_cast<std::uint32_t>(col), n, &cta, w.index, in.line());
    tmem_of(peer).take(static_cast<std::uint32_t>(col), peer.tc_alloc_req, &peer, peer.tc_alloc_warp, in.line());
    peer.tc_alloc_result = col;  // its warp writes the address when it wakes
  }
  cta.tc_alloc_result = -1;
  cta.tc_alloc_req = 0;
  const std::uint32_t addr = static_cast<std::uint32_t>(col);  // lane 0, column col
  Resolved r = resolve(w, in, Space::Shared, shared_operand(w, in, in.operand(0), l0), 4, true, l0);
  std::memcpy(r.ptr, &addr, 4);
  return Flow::Next;
}

// The collective cta_group::2 dealloc and relinquish_alloc_permit ("Issue Granularity": "Issue
// from two warps, one in each of the current CTA and its Peer CTA, in order to collectively
// perform the operation"): each kind counted on its own, so one CTA's relinquish never pairs with
// the peer's dealloc.
Flow rendezvous(Warp& w, const Insn& in, std::uint32_t mask) {
  Cta& cta = *w.cta;
  const bool relinquish = in.op == Relinquish;
  const std::uint64_t k = relinquish ? ++cta.tc_relinquished : ++cta.tc_collective;
  const Cta& peer = peer_of(w, in, __builtin_ctz(mask));
  if ((relinquish ? peer.tc_relinquished : peer.tc_collective) >= k) return Flow::Next;
  EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::TmemPeer, relinquish ? 1u : 0u, k};
  return Flow::Block;
}

}  // namespace

Flow tcgen05_alloc(Warp& w, const Insn& in, std::uint32_t mask) {
  Launch& L = w.launch();
  Cta& cta = *w.cta;
  const int l0 = __builtin_ctz(mask);
  // Woken from the rendezvous: this warp's part was done before it waited.
  if (w.wait[l0].kind == Wait::TmemPeer) return Flow::Next;
  check_group(w, in, l0);
  const bool pair = in.flags & Group2;
  if (pair) peer_of(w, in, l0);
  switch (in.op) {
    case Alloc: {
      const std::uint64_t n = src(w, in, 1, l0);
      if (std::string e = TensorMemory::check_columns(n); !e.empty()) L.fault(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.alloc: " + e);
      // 9.7.16.7.1: "it is illegal for a CTA to perform tcgen05.alloc after any of its constituent
      // threads execute tcgen05.relinquish_alloc_permit". Reported; the allocation then goes on
      // for its columns alone (the CTA has no permit to wait for).
      if (cta.tmem_permit_relinquished) {
        if (w.wait[l0].kind == Wait::None)
          L.report(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.alloc after this CTA executed tcgen05.relinquish_alloc_permit");
      } else if (tmem_of(cta).permit().holder != &cta) {
        if (!permit_available(cta)) {
          EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::TmemPermit, 0, n};
          return Flow::Block;
        }
        take_permits(cta, w.index, in.line());
      }
      if (pair) return pair_alloc(w, in, mask, static_cast<std::uint32_t>(n));
      int col = tmem_of(cta).allocate(static_cast<std::uint32_t>(n), &cta, w.index, in.line());
      if (col < 0) {
        EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::TmemAlloc, 0, n};
        return Flow::Block;
      }
      const std::uint32_t addr = static_cast<std::uint32_t>(col);  // lane 0, column col
      Resolved r = resolve(w, in, Space::Shared, shared_operand(w, in, in.operand(0), l0), 4, true, l0);
      std::memcpy(r.ptr, &addr, 4);
      return Flow::Next;
    }
    case Dealloc: {
      const std::uint32_t a = static_cast<std::uint32_t>(src(w, in, 0, l0));
      const std::uint64_t n = src(w, in, 1, l0);
      if (std::string e = TensorMemory::check_columns(n); !e.empty()) L.fault(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.dealloc: " + e);
      const std::uint32_t c0 = tmem_column(a), c1 = c0 + static_cast<std::uint32_t>(n);
      check_mma_writes(w, in, l0, cta, 0, TensorMemory::kLanes, c0, c1, "tcgen05.dealloc frees");
      if (tmem_lane(a) != 0) L.report(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.dealloc of an address with lane " + std::to_string(tmem_lane(a)) + " (not one tcgen05.alloc returned)");
      if (std::string e = tmem_of(cta).deallocate(c0, static_cast<std::uint32_t>(n), &cta); !e.empty())
        L.report(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.dealloc: " + e);
      return pair ? rendezvous(w, in, mask) : Flow::Next;
    }
    default:
      // 9.7.16.7.1: the CTA gives up "the right to allocate Tensor Memory": its SM's permit passes
      // to the next CTA there that allocates. With .cta_group::2 each CTA of the pair gives up its
      // own, collectively.
      cta.tmem_permit_relinquished = true;
      tmem_of(cta).release_permit(&cta);
      return pair ? rendezvous(w, in, mask) : Flow::Next;
  }
}

}  // namespace mgpu::emu::tcgen05
