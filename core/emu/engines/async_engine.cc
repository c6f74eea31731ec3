#include "core/emu/engines/async_engine.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/emu/exec/access.h"
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
// write must be followed, before the async operation was issued, by fence.proxy.async in the
// writing thread or in the issuing thread (PTX ISA 8.x memory consistency model, proxies: the
// fence may sit on either side of the synchronization that orders the write before the issue;
// that synchronization itself is the race detector's to check).
bool check_async_read(Cluster& c, const AsyncOp& self, Cta& cta, std::uint32_t a, const char* reader,
                      const std::vector<std::uint32_t>& fenced, std::uint32_t issuer_fence) {
  const SmemShadow& s = cta.shadow[a];
  Launch& L = *c.launch;
  if (!(s.flags & SmemShadow::kInit)) {
    L.report(ReportKind::Uninitialized, self.issued, std::string(reader) + " reads shared offset " + std::to_string(a) + " that nothing has written");
    return false;
  }
  if ((s.flags & SmemShadow::kGeneric) && s.writer != SmemShadow::kRemoteWriter) {
    if (fenced[s.writer] <= s.epoch && issuer_fence <= s.epoch) {
      L.report(ReportKind::ProxyFence, self.issued,
               std::string(reader) + " reads shared offset " + std::to_string(a) + " written by thread " + std::to_string(s.writer) +
                   " through the generic proxy with no fence.proxy.async between the write and the issue (in the writer or the issuer)");
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

namespace {

// Whether the load's bytes for destination rank r are beyond what its mbarrier's phase announced:
// that phase has completed without them (PTX ISA 9.7.13.15.5: complete-tx acts on the current
// phase, so they would land in one that never expected them). Reports it.
bool surplus_load(Cluster& c, const TmaLoadOp& op, int r) {
  const int br = op.barrier_rank(r);
  const Cta& bar_cta = *c.ctas[static_cast<std::size_t>(br)];
  auto it = bar_cta.mbarriers.find(op.mbar);
  if (op.issue_phase[r] == TmaLoadOp::kNoPhase || it == bar_cta.mbarriers.end() || !it->second.initialized() ||
      it->second.phase() == op.issue_phase[r])
    return false;
  c.launch->report(ReportKind::BarrierMisuse, op.issued,
                   "TMA load's " + std::to_string(op.map.box_bytes()) + " bytes for the mbarrier at shared offset " + std::to_string(op.mbar) +
                       " of CTA rank " + std::to_string(br) + " were issued in its phase " + std::to_string(op.issue_phase[r]) +
                       ", which completed without them: no expect_tx counted these bytes");
  return true;
}

}  // namespace

namespace {

// The load lands in `cta` (the issuer's or, multicast, another of the cluster) as a write by a
// race-detector agent that knows what the issuing thread knew at the issue: a thread's access to
// these bytes not ordered before the issue races with it. Returns the agent, or -1 when races
// are not detected.
// `read`: when the load's global read was remembered (global_read), what it released: the landing
// comes after the read.
int race_check_landing(Cluster& c, const TmaLoadOp& op, Cta& cta, std::uint32_t bytes, const RaceDetector::Clock* read) {
  RaceDetector* rd = cta.races;
  if (!rd || op.issue_clock.empty()) return -1;
  const int agent = rd->begin_agent(op.issue_clock);
  if (read) rd->acquire(agent, *read);
  // 16-byte chunks stay contiguous under every swizzle mode.
  for (std::uint32_t i = 0; i < bytes; i += 16) {
    const std::uint32_t a = swizzle_address(op.dst + i, op.map.swizzle);
    RaceDetector::Conflict k = rd->on_write(agent, cta.race_byte_base + a, std::min<std::uint32_t>(16, bytes - i), op.issued.pc);
    if (!k.found) continue;
    const int line = k.pc >= 0 && static_cast<std::size_t>(k.pc) < c.launch->code->size() ? (*c.launch->code)[static_cast<std::size_t>(k.pc)].line() : -1;
    const int stride = rd->cta_stride();
    const std::string who = rd->is_agent(k.thread)
                                ? std::string("another TMA load wrote")
                                : "thread " + std::to_string(k.thread % stride) +
                                      (k.thread / stride != cta.rank ? " of CTA rank " + std::to_string(k.thread / stride) : std::string()) +
                                      (k.earlier_was_write ? " wrote" : " read") + " at PTX line " + std::to_string(line);
    c.launch->report(ReportKind::Race, op.issued,
                     "TMA load writes shared bytes " + range(a, a + 16) + " of CTA rank " + std::to_string(cta.rank) + " that " + who +
                         " with nothing ordering that before the load's issue (the buffer was refilled before its " +
                         (k.earlier_was_write ? "writer" : "reader") + " was done with it)");
    break;
  }
  return agent;
}

// Contiguous runs of global bytes a TMA box reads or writes (its in-tensor elements, row by row).
struct Runs {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> runs;
  void add(std::uint64_t g, std::uint32_t n) {
    if (!runs.empty() && runs.back().first + runs.back().second == g) runs.back().second += n;
    else runs.emplace_back(g, n);
  }
};

std::string global_range(std::uint64_t lo, std::uint64_t hi) {
  std::ostringstream o;
  o << "[0x" << std::hex << lo << ", 0x" << hi << ")";
  return o.str();
}

// The async proxy's accesses of global memory, as a pseudo-thread of the issuing cluster that
// knows what the issuing thread knew at the issue (check/memory_model.h): a TMA load's read
// (remembered only where something in the launch accessed the bytes before: `async` read of
// existing pages), a TMA store's writes. Returns the agent, or -1 when nothing was checked.
int global_access(Cluster& c, const AsyncOp& op, const RaceDetector::Clock& issue, RaceDetector& rd, const Runs& runs, bool write) {
  Launch& L = *c.launch;
  if (!L.memory || issue.empty() || runs.runs.empty()) return -1;
  if (!write) {
    bool any = false;
    for (const auto& [g, n] : runs.runs) any = any || L.memory->shadowed(g, n);
    if (!any) return -1;
  }
  const int agent = rd.begin_global_agent(issue);
  for (const auto& [g, n] : runs.runs) {
    MemoryModel::Access a;
    a.addr = g;
    a.bytes = n;
    a.pc = op.issued.pc;
    a.read = !write;
    a.write = write;
    a.order = order_bits::kAsync;
    a.existing_pages_only = !write;
    const MemoryModel::Conflict k = L.memory->access({&rd, agent}, a);
    if (write) L.memory->invalidate(g, n);
    if (k.found())
      report_memory_conflict(L, op.issued,
                             std::string(write ? "TMA store's write" : "TMA load's read") + " of global bytes " + global_range(g, g + n), k);
  }
  return agent;
}

}  // namespace

void check_cta_exit(Cluster& c, Cta& cta) {
  Launch& L = *c.launch;
  for (const auto& op : c.inflight) {
    if (op->kind == AsyncOp::TmaStore && static_cast<const TmaStoreOp&>(*op).cta == &cta) {
      const auto& s = static_cast<const TmaStoreOp&>(*op);
      L.report(ReportKind::ExitInFlight, op->issued,
               "CTA rank " + std::to_string(cta.rank) + " exited while the TMA store issued here may still read its shared bytes " +
                   range(s.src, s.src + static_cast<std::uint32_t>(s.map.box_bytes())) +
                   ": no cp.async.bulk.wait_group.read retired it before the exit");
    } else if (op->kind == AsyncOp::TmaLoad && !op->performed && ((static_cast<const TmaLoadOp&>(*op).cta_mask >> cta.rank) & 1)) {
      const auto& t = static_cast<const TmaLoadOp&>(*op);
      if (surplus_load(c, t, cta.rank)) continue;
      L.report(ReportKind::ExitInFlight, op->issued,
               "CTA rank " + std::to_string(cta.rank) + " exited before the TMA load issued here wrote its shared memory "
               "(nothing waited for it to land)");
    }
  }
  for (const auto& [offset, bar] : cta.mbarriers)
    if (bar.initialized() && bar.tx_count() != 0)
      L.report(ReportKind::ExitInFlight, cta.where(),
               "CTA rank " + std::to_string(cta.rank) + " exited with tx-count " + std::to_string(bar.tx_count()) +
                   " on the mbarrier at shared offset " + std::to_string(offset) + " (phase " + std::to_string(bar.phase()) +
                   (bar.tx_count() > 0 ? "): bytes announced by expect_tx never landed" : "): bytes landed that no expect_tx announced"));
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
  Runs read;
  const bool track = L.memory && op.issuer->races && !op.issue_clock.empty();
  for_each_box_element(op.map, op.coords, [&](std::uint32_t off, std::uint64_t g, bool in) {
    if (in) {
      std::uint8_t* p = L.global->find(g, eb);
      if (!p) {
        Where w = op.issued;
        L.fault(ReportKind::OutOfBounds, w, "TMA load reads global address " + std::to_string(g) + " outside every allocation (the tensor map's extent exceeds its buffer)");
      }
      std::memcpy(&box[off], p, eb);
      if (track) read.add(g, eb);
    } else if (op.map.oob_nan) {
      std::memset(&box[off], 0xFF, eb);
    }
  });
  // The read of global memory, before any landing: each landing (and so each waiter) knows it.
  RaceDetector::Clock read_done;
  if (track) {
    RaceDetector& rd = *op.issuer->races;
    const int g = global_access(c, op, op.issue_clock, rd, read, false);
    if (g >= 0) {
      read_done = rd.empty_clock();
      rd.release(g, read_done);
    }
  }
  for (std::size_t r = 0; r < c.ctas.size(); ++r) {
    if (!((op.cta_mask >> r) & 1)) continue;
    Cta& cta = *c.ctas[r];
    if (cta.exited) {
      L.report(ReportKind::ClusterExit, op.issued, "multicast TMA load into CTA rank " + std::to_string(r) + ", which has exited");
      continue;
    }
    check_async_write(c, op, cta, op.dst, op.dst + bytes);
    const int agent = race_check_landing(c, op, cta, bytes, read_done.empty() ? nullptr : &read_done);
    bool over_mbarrier = false;
    for (std::uint32_t i = 0; i < bytes; ++i) {
      std::uint32_t a = swizzle_address(op.dst + i, op.map.swizzle);
      over_mbarrier |= (cta.shadow[a].flags & SmemShadow::kMbarrier) != 0;
      cta.smem[a] = box[i];
      cta.shadow[a].flags = SmemShadow::kInit;
    }
    // PTX ISA 9.7.13.15.1: an mbarrier object is accessed only by mbarrier operations while it
    // is valid (between mbarrier.init and mbarrier.inval).
    if (over_mbarrier)
      L.report(ReportKind::BarrierMisuse, op.issued,
               "TMA load writes shared bytes " + range(op.dst, op.dst + bytes) + " of CTA rank " + std::to_string(r) +
                   " over a live mbarrier object (initialized, not invalidated)");
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
    surplus_load(c, op, static_cast<int>(r));
    // The landing happens before whatever acquires the phase this completes.
    if (RaceDetector* rd = bar_cta.races; rd && agent >= 0) {
      MbarClocks& mc = bar_cta.mbar_clocks[op.mbar];
      if (mc.pending.empty()) mc.pending = rd->empty_clock();
      rd->release(agent, mc.pending);
    }
    it->second.complete_tx(bytes, err);
    after_mbarrier_update(bar_cta, op.mbar, it->second, phase_before, op.issued);
    if (!err.empty())
      L.report(ReportKind::BarrierMisuse, op.issued, "mbarrier at shared offset " + std::to_string(op.mbar) + " of CTA rank " + std::to_string(br) + ": " + err);
  }
  forget(c, &op);
}

void check_tma_store_issue(Cluster& c, const TmaStoreOp& op, std::uint32_t issuer_fence) {
  Cta& cta = *op.cta;
  const std::uint32_t eb = op.map.elem_bytes;
  bool reported = false;
  // Elements outside the tensor are never written to global memory, so their shared bytes are
  // not read: clipping at the tensor edge is no uninitialized read.
  for_each_box_element(op.map, op.coords, [&](std::uint32_t off, std::uint64_t, bool in) {
    for (std::uint32_t b = 0; in && !reported && b < eb; ++b)
      reported = !check_async_read(c, op, cta, swizzle_address(op.src + off + b, op.map.swizzle), "a TMA store", cta.proxy_fenced, issuer_fence);
  });
}

// PTX ISA 9.7.9.25 (shared -> global): elements outside the tensor are not written.
void perform_tma_store(Cluster& c, TmaStoreOp& op) {
  op.performed = true;
  op.read_done = true;
  Launch& L = *c.launch;
  Cta& cta = *op.cta;
  const std::uint32_t eb = op.map.elem_bytes;
  bool any_in = false;
  Runs written;
  const bool track = L.memory && cta.races && !op.issue_clock.empty();
  for_each_box_element(op.map, op.coords, [&](std::uint32_t off, std::uint64_t g, bool in) {
    if (!in) return;
    std::uint8_t val[8];
    for (std::uint32_t b = 0; b < eb; ++b) val[b] = cta.smem[swizzle_address(op.src + off + b, op.map.swizzle)];
    any_in = true;
    std::uint8_t* p = L.global->find(g, eb);
    if (!p) L.fault(ReportKind::OutOfBounds, op.issued, "TMA store writes global address " + std::to_string(g) + " outside every allocation");
    std::memcpy(p, val, eb);
    if (track) written.add(g, eb);
  });
  // The writes, as the store's pseudo-thread; they are known to whoever acquires `done`: the
  // issuing thread at the cp.async.bulk.wait_group (not .read) that retires the store.
  if (track) {
    const int agent = global_access(c, op, op.issue_clock, *cta.races, written, true);
    op.done = cta.races->empty_clock();
    if (agent >= 0) cta.races->release(agent, op.done);
  }
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
