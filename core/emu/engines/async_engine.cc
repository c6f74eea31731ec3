#include "core/emu/engines/async_engine.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/emu/exec/interpreter.h"
#include "core/emu/exec/scalar.h"

namespace mgpu::emu {

namespace {

// (A stream, not string concatenation: GCC 12 warns falsely (-Wrestrict) on the latter here.)
std::string range(std::uint32_t lo, std::uint32_t hi) {
  std::ostringstream o;
  o << "[" << lo << ", " << hi << ")";
  return o.str();
}

}  // namespace

// The async proxy reads byte `a` of `cta`: it must have been written, and a generic-proxy
// write must have been followed by fence.proxy.async in the writing thread.
bool check_async_read(Cluster& c, const AsyncOp& self, Cta& cta, std::uint32_t a, const char* reader) {
  const SmemShadow& s = cta.shadow[a];
  Launch& L = *c.launch;
  if (!(s.flags & SmemShadow::kInit)) {
    L.report(ReportKind::Uninitialized, self.issued, std::string(reader) + " reads shared offset " + std::to_string(a) + " that nothing has written");
    return false;
  }
  if (s.flags & SmemShadow::kGeneric) {
    const Warp& wr = *cta.warps[s.writer / 32];
    if (wr.proxy_fences[s.writer % 32] == s.epoch) {
      L.report(ReportKind::ProxyFence, self.issued,
               std::string(reader) + " reads shared offset " + std::to_string(a) + " written by thread " + std::to_string(s.writer) +
                   " through the generic proxy with no fence.proxy.async after the write");
      return false;
    }
  }
  return true;
}


// The bytes [lo, hi) of `cta` are about to be written by the async proxy: nothing still
// reading or writing them may be in flight.
void check_async_write(Cluster& c, const AsyncOp& self, Cta& cta, std::uint32_t lo, std::uint32_t hi) {
  Launch& L = *c.launch;
  for (const auto& op : c.inflight) {
    if (op.get() == &self) continue;
    if (op->kind == AsyncOp::Wgmma) {
      auto& g = static_cast<WgmmaOp&>(*op);
      if (g.cta == &cta && g.reads(lo, hi))
        L.report(ReportKind::AsyncOverlap, self.issued,
                 "TMA load writes shared bytes " + range(lo, hi) + " of CTA rank " + std::to_string(cta.rank) +
                     " that a wgmma.mma_async issued at PTX line " + std::to_string(g.issued.line) +
                     " still reads (no wgmma.wait_group has retired it): the stage was released too early");
    } else if (op->kind == AsyncOp::Tcgen05Mma) {
      auto& g = static_cast<Tcgen05MmaOp&>(*op);
      if (g.reads(&cta, lo, hi))
        L.report(ReportKind::AsyncOverlap, self.issued,
                 "TMA load writes shared bytes " + range(lo, hi) + " of CTA rank " + std::to_string(cta.rank) +
                     " that a tcgen05.mma issued at PTX line " + std::to_string(g.issued.line) +
                     " still reads (no tcgen05.commit covering it has arrived): the stage was released too early");
    } else if (op->kind == AsyncOp::TmaStore) {
      auto& s = static_cast<TmaStoreOp&>(*op);
      std::uint32_t shi = s.src + static_cast<std::uint32_t>(s.map.box_bytes());
      if (s.cta == &cta && lo < shi && hi > s.src)
        L.report(ReportKind::AsyncOverlap, self.issued,
                 "TMA load writes shared bytes " + range(lo, hi) + " that a TMA store issued at PTX line " +
                     std::to_string(s.issued.line) + " still reads");
    } else if (op->kind == AsyncOp::TmaLoad && !op->performed) {
      auto& t = static_cast<TmaLoadOp&>(*op);
      std::uint32_t thi = t.dst + static_cast<std::uint32_t>(t.map.box_bytes());
      if ((t.cta_mask >> cta.rank) & 1 && lo < thi && hi > t.dst)
        L.report(ReportKind::AsyncOverlap, self.issued,
                 "two TMA loads in flight write shared bytes " + range(std::max(lo, t.dst), std::min(hi, thi)) +
                     " of CTA rank " + std::to_string(cta.rank) + " (the other issued at PTX line " + std::to_string(t.issued.line) + ")");
    }
  }
}

bool performable(const AsyncOp& op) {
  if (op.performed) return false;
  if (op.kind == AsyncOp::Wgmma) return static_cast<const WgmmaOp&>(op).arrived == 0xF;
  return true;
}

void perform(Cluster& c, AsyncOp& op) {
  switch (op.kind) {
    case AsyncOp::TmaLoad: perform_tma_load(c, static_cast<TmaLoadOp&>(op)); break;
    case AsyncOp::TmaStore: perform_tma_store(c, static_cast<TmaStoreOp&>(op)); break;
    case AsyncOp::Wgmma: perform_wgmma(c, static_cast<WgmmaOp&>(op)); break;
    case AsyncOp::Tcgen05Mma: perform_tcgen05_mma(c, static_cast<Tcgen05MmaOp&>(op)); break;
    case AsyncOp::Tcgen05Commit: perform_tcgen05_commit(c, static_cast<Tcgen05CommitOp&>(op)); break;
  }
}

void forget(Cluster& c, const AsyncOp* op) {
  auto it = std::find_if(c.inflight.begin(), c.inflight.end(), [&](const auto& p) { return p.get() == op; });
  if (it != c.inflight.end()) c.inflight.erase(it);
}

// PTX ISA 9.7.9.25: the box is read from global memory (out-of-bounds elements filled with
// zero, or NaN when the map asks for it), written to each destination CTA's shared memory with
// the map's swizzle, and its full byte count completed on each destination's mbarrier.
void perform_tma_load(Cluster& c, TmaLoadOp& op) {
  op.performed = true;
  Launch& L = *c.launch;
  const std::uint32_t bytes = static_cast<std::uint32_t>(op.map.box_bytes());
  std::vector<std::uint8_t> box(bytes);
  const std::uint32_t eb = op.map.elem_bytes;
  for_each_box_element(op.map, op.coords, [&](std::uint32_t off, std::uint64_t g, bool in) {
    if (in) {
      std::uint8_t* p = L.global->find(g, eb);
      if (!p) {
        Where w = op.issued;
        L.fault(ReportKind::OutOfBounds, w, "TMA load reads global address " + std::to_string(g) + " outside every allocation (the tensor map's extent exceeds its buffer)");
      }
      std::memcpy(&box[off], p, eb);
    } else if (op.map.oob_nan) {
      std::memset(&box[off], 0xFF, eb);
    }
  });
  for (std::size_t r = 0; r < c.ctas.size(); ++r) {
    if (!((op.cta_mask >> r) & 1)) continue;
    Cta& cta = *c.ctas[r];
    if (cta.exited) {
      L.report(ReportKind::ClusterExit, op.issued, "multicast TMA load into CTA rank " + std::to_string(r) + ", which has exited");
      continue;
    }
    check_async_write(c, op, cta, op.dst, op.dst + bytes);
    for (std::uint32_t i = 0; i < bytes; ++i) {
      std::uint32_t a = swizzle_address(op.dst + i, op.map.swizzle);
      cta.smem[a] = box[i];
      cta.shadow[a].flags = SmemShadow::kInit;
    }
    const int br = op.barrier_rank(static_cast<int>(r));
    Cta& bar_cta = *c.ctas[br];
    auto it = bar_cta.mbarriers.find(op.mbar);
    if (it == bar_cta.mbarriers.end() || !it->second.initialized()) {
      L.report(ReportKind::BarrierMisuse, op.issued, "TMA load completes bytes on the mbarrier at shared offset " + std::to_string(op.mbar) +
                                                         " of CTA rank " + std::to_string(br) + ", which is not initialized");
      continue;
    }
    std::string err;
    const std::uint64_t phase_before = it->second.phase();
    it->second.complete_tx(bytes, err);
    after_mbarrier_update(bar_cta, op.mbar, it->second, phase_before, op.issued);
    if (!err.empty())
      L.report(ReportKind::BarrierMisuse, op.issued, "mbarrier at shared offset " + std::to_string(op.mbar) + " of CTA rank " + std::to_string(br) + ": " + err);
  }
  forget(c, &op);
}

// PTX ISA 9.7.9.25 (shared -> global): elements outside the tensor are not written.
void perform_tma_store(Cluster& c, TmaStoreOp& op) {
  op.performed = true;
  op.read_done = true;
  Launch& L = *c.launch;
  Cta& cta = *op.cta;
  const std::uint32_t eb = op.map.elem_bytes;
  bool any_in = false, reported = false;
  for_each_box_element(op.map, op.coords, [&](std::uint32_t off, std::uint64_t g, bool in) {
    std::uint8_t val[8];
    for (std::uint32_t b = 0; b < eb; ++b) {
      std::uint32_t a = swizzle_address(op.src + off + b, op.map.swizzle);
      if (!reported && !check_async_read(c, op, cta, a, "a TMA store")) reported = true;
      val[b] = cta.smem[a];
    }
    if (!in) return;
    any_in = true;
    std::uint8_t* p = L.global->find(g, eb);
    if (!p) L.fault(ReportKind::OutOfBounds, op.issued, "TMA store writes global address " + std::to_string(g) + " outside every allocation");
    std::memcpy(p, val, eb);
  });
  if (!any_in) {
    std::string coords;
    for (std::uint32_t i = 0; i < op.map.rank; ++i) coords += (i ? ", " : "") + std::to_string(op.coords[i]);
    std::string dims;
    for (std::uint32_t i = 0; i < op.map.rank; ++i) dims += (i ? " x " : "") + std::to_string(op.map.dims[i]);
    L.report(ReportKind::TmaOutOfBounds, op.issued,
             "TMA store box at coordinates (" + coords + ") lies entirely outside the " + dims + " tensor: nothing is written");
  }
}

}  // namespace mgpu::emu
