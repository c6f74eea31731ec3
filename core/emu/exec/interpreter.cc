#include "core/emu/exec/interpreter.h"

#include "core/emu/exec/access.h"
#include "core/emu/exec/address.h"

namespace mgpu::emu {

bool registers_available(Warp& w, std::int32_t n);  // insns/misc.cc

namespace {

// The CTA and shared offset of the mbarrier a Wait::Mbar names (a shared::cluster address
// relative to the waiter's CTA).
Cta& waited_cta(const Warp& w, const Wait& wt, std::uint32_t& offset) {
  offset = wt.object & kSharedOffsetMask;
  return *w.cta->cluster->ctas[cluster_rank_of(wt.object)];
}

bool wgmma_groups_ready(Warp& w, std::uint64_t keep) {
  // The groups older than the `keep` most recent must be complete, or completable now (every
  // warp of the warpgroup has issued their operations).
  std::size_t n = w.wgmma_groups.size();
  for (std::size_t i = 0; i + keep < n; ++i)
    for (const auto& op : w.wgmma_groups[i])
      if (op->arrived != 0xF) return false;
  return true;
}

}  // namespace

bool lane_can_run(Warp& w, int l) {
  const Wait& wt = w.wait[l];
  switch (wt.kind) {
    case Wait::None: return true;
    case Wait::Converge: {
      std::uint32_t need = static_cast<std::uint32_t>(wt.value) & w.alive;
      for (std::uint32_t m = need; m; m &= m - 1) {
        int o = __builtin_ctz(m);
        if (w.pc[o] != w.pc[l]) return false;
      }
      return true;
    }
    case Wait::Bar: return w.cta->bars[wt.object].generation != wt.value;
    case Wait::Mbar: {
      std::uint32_t off;
      Cta& cta = waited_cta(w, wt, off);
      auto it = cta.mbarriers.find(off);
      if (it == cta.mbarriers.end() || !it->second.initialized()) return true;  // re-execution reports it
      return it->second.phase_complete_parity(static_cast<std::uint32_t>(wt.value));
    }
    case Wait::WgmmaGroups: return wgmma_groups_ready(w, wt.value);
    case Wait::BulkGroups: return true;
    case Wait::ClusterBar: return w.cta->cluster->barrier.generation != wt.value;
    case Wait::Registers: return registers_available(w, static_cast<std::int32_t>(wt.value));
    case Wait::TmemAlloc: return tmem_of(*w.cta).can_allocate(static_cast<std::uint32_t>(wt.value));
    case Wait::TmemPeer: {
      const Cta& peer = *w.cta->cluster->ctas[w.cta->rank ^ 1];
      return (wt.object ? peer.tc_relinquished : peer.tc_collective) >= wt.value;
    }
    case Wait::TmemPermit: return permit_available(*w.cta);
    case Wait::TmemPairAlloc: {
      const Cta& peer = *w.cta->cluster->ctas[w.cta->rank ^ 1];
      if (w.cta->tc_alloc_result >= 0) return true;  // the peer's warp allocated for both
      return peer.tc_alloc_req && tmem_of(*w.cta).first_fit(w.cta->tc_alloc_req, &tmem_of(*w.cta->cluster->ctas[w.cta->rank ^ 1])) >= 0;
    }
  }
  return true;
}

bool warp_can_run(Warp& w) {
  for (std::uint32_t m = w.alive; m; m &= m - 1)
    if (lane_can_run(w, __builtin_ctz(m))) return true;
  return false;
}

bool gather(Warp& w, std::uint32_t mask, std::uint32_t members, bool orders_memory) {
  std::uint32_t need = members & w.alive;
  if ((need & ~mask) == 0) {
    // Only bar.warp.sync orders memory among its participants (PTX ISA 9.7.13.2: "bar.warp.sync
    // also guarantee memory ordering among threads participating in barrier"); shfl.sync,
    // vote.sync, elect.sync and the .sync.aligned instructions only wait for each other, and the
    // warp is no scope (8.5), so their lanes stay unordered.
    if (RaceDetector* rd = w.cta->races; rd && orders_memory) {
      std::vector<int> threads;
      for (std::uint32_t m = mask; m; m &= m - 1) threads.push_back(w.race_thread(__builtin_ctz(m)));
      rd->join(threads);
    }
    return true;
  }
  for (std::uint32_t m = mask; m; m &= m - 1) w.wait[__builtin_ctz(m)] = Wait{Wait::Converge, 0, need};
  return false;
}

bool step_warp(Warp& w, int budget) {
  Launch& L = w.launch();
  const std::vector<Insn>& code = *L.code;
  for (int n = 0; n < budget; ++n) {
    if (!w.alive) return false;
    std::uint32_t best = UINT32_MAX, mask = 0;
    for (std::uint32_t m = w.alive; m; m &= m - 1) {
      int l = __builtin_ctz(m);
      if (w.wait[l].kind != Wait::None && !lane_can_run(w, l)) continue;
      if (w.pc[l] < best) { best = w.pc[l]; mask = 1u << l; }
      else if (w.pc[l] == best) mask |= 1u << l;
    }
    if (!mask) return n > 0;
    if (best >= code.size())
      L.fault(ReportKind::Unsupported, w.cta->where(&w, __builtin_ctz(mask), static_cast<int>(best)), "fell off the end of the kernel without ret/exit");
    const Insn& in = code[best];
    ++L.steps;
    ++w.steps;
    std::uint32_t run = mask;
    if (in.src->guard >= 0) {
      run = 0;
      for (std::uint32_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        bool g = w.reg(in.src->guard, l) & 1;
        if (g != in.src->guard_negated) run |= 1u << l;
        else { w.pc[l] = best + 1; w.wait[l] = Wait{}; }
      }
      if (!run) continue;
    }
    if (in.aligned && !gather(w, run, w.alive)) continue;
    L.thread_steps += static_cast<std::uint64_t>(__builtin_popcount(run));
    Flow f = in.fn(w, in, run);
    if (f == Flow::Next) {
      for (std::uint32_t m = run; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        w.pc[l] = best + 1;
        w.wait[l] = Wait{};
      }
    } else if (f == Flow::Done) {
      for (std::uint32_t m = run; m; m &= m - 1) w.wait[__builtin_ctz(m)] = Wait{};
    }
    if (L.phase_completed) return true;  // the scheduler may hand over to the woken waiters now
  }
  return true;
}

void note_poll(Warp& w, std::uint32_t pc, std::uint32_t object, std::uint64_t value, bool done) {
  Warp::Poll& p = w.poll;
  if (done) {
    p = Warp::Poll{};
    return;
  }
  p.repeated = p.pc == pc && p.object == object && p.value == value;
  p.pc = pc;
  p.object = object;
  p.value = value;
  p.at = w.steps;
}

bool spinning(const Warp& w) { return w.poll.repeated && w.steps - w.poll.at <= kSpinWindow; }

void report_missed_phase(Cta& owner, std::uint32_t offset, std::uint64_t phase, const Where& where) {
  for (auto& cta : owner.cluster->ctas)
    for (auto& w : cta->warps)
      for (std::uint32_t m = w->alive; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        const Wait& wt = w->wait[l];
        if (wt.kind != Wait::Mbar) continue;
        std::uint32_t off;
        if (&waited_cta(*w, wt, off) != &owner || off != offset) continue;
        const bool satisfied_before = ((phase - 1) & 1u) != (wt.value & 1u);
        const bool satisfied_now = (phase & 1u) != (wt.value & 1u);
        if (satisfied_before && !satisfied_now)
          owner.cluster->launch->report(
              ReportKind::BarrierMisuse, where,
              "the mbarrier at shared offset " + std::to_string(offset) + " completed phase " + std::to_string(phase - 1) +
                  " while CTA (" + std::to_string(cta->id[0]) + "," + std::to_string(cta->id[1]) + "," + std::to_string(cta->id[2]) +
                  ") warp " + std::to_string(w->index) + " lane " + std::to_string(l) + " still waited to observe phase " +
                  std::to_string(phase - 2) + " (parity " + std::to_string(wt.value & 1) + "): it missed it");
      }
}

bool after_mbarrier_update(Cta& owner, std::uint32_t offset, const MBarrier& bar, std::uint64_t phase_before,
                           const Where& where) {
  if (bar.phase() == phase_before) return false;
  owner.mbar_phase_completed(offset);
  report_missed_phase(owner, offset, bar.phase(), where);
  return true;
}

std::string describe_wait(Warp& w, int l) {
  const Wait& wt = w.wait[l];
  const Launch& L = w.launch();
  std::string at = "pc " + std::to_string(w.pc[l]) + " (PTX line " +
                   std::to_string(w.pc[l] < L.code->size() ? (*L.code)[w.pc[l]].line() : -1) + ")";
  switch (wt.kind) {
    case Wait::None: return "runnable at " + at;
    case Wait::Converge: return "waits at " + at + " for the rest of its warp to reach this collective";
    case Wait::Bar: {
      const NamedBarrier& b = w.cta->bars[wt.object];
      return "waits at " + at + " on named barrier " + std::to_string(wt.object) + " (" + std::to_string(b.arrived) + " of " +
             std::to_string(b.expected) + " threads arrived)";
    }
    case Wait::Mbar: {
      std::uint32_t off;
      Cta& cta = waited_cta(w, wt, off);
      std::string s = "waits at " + at + " on the mbarrier at shared offset " + std::to_string(off) +
                      (&cta != w.cta ? " of CTA rank " + std::to_string(cta.rank) : "") + " for the phase of parity " +
                      std::to_string(wt.value);
      auto it = cta.mbarriers.find(off);
      if (it != cta.mbarriers.end()) {
        const MBarrier& m = it->second;
        s += " (current phase " + std::to_string(m.phase()) + ", " + std::to_string(m.pending()) + " of " +
             std::to_string(m.expected()) + " arrivals pending, tx-count " + std::to_string(m.tx_count()) + " bytes)";
      }
      return s;
    }
    case Wait::WgmmaGroups: return "waits at " + at + " in wgmma.wait_group " + std::to_string(wt.value) + " for warps of its warpgroup to issue their wgmma";
    case Wait::BulkGroups: return "waits at " + at + " for bulk async-groups";
    case Wait::Registers: return "waits at " + at + " in setmaxnreg.inc " + std::to_string(wt.value) + " for registers other warps still hold";
    case Wait::TmemAlloc:
      return "waits at " + at + " in tcgen05.alloc for " + std::to_string(wt.value) + " columns of tensor memory (" +
             tmem_of(*w.cta).describe() + ")";
    case Wait::TmemPairAlloc: {
      Cta& peer = *w.cta->cluster->ctas[w.cta->rank ^ 1];
      if (!peer.tc_alloc_req)
        return "waits at " + at + " in tcgen05.alloc.cta_group::2 for a warp of the peer CTA rank " + std::to_string(peer.rank) +
               " to perform it too";
      return "waits at " + at + " in tcgen05.alloc.cta_group::2 for " + std::to_string(wt.value) +
             " columns free in the tensor memory of both CTAs of the pair (this CTA's SM: " + tmem_of(*w.cta).describe() +
             "; the peer's SM: " + tmem_of(peer).describe() + ")";
    }
    case Wait::TmemPeer: {
      const Cta& peer = *w.cta->cluster->ctas[w.cta->rank ^ 1];
      return "waits at " + at + (wt.object ? " in tcgen05.relinquish_alloc_permit" : " in a tcgen05.dealloc") +
             ".cta_group::2 for a warp of the peer CTA rank " + std::to_string(peer.rank) + " to perform it too (it performed " +
             std::to_string(wt.object ? peer.tc_relinquished : peer.tc_collective) + " of " + std::to_string(wt.value) + ")";
    }
    case Wait::TmemPermit:
      return "waits at " + at + " in tcgen05.alloc for " + permit_blocker(*w.cta) + "; it asks for " + std::to_string(wt.value) +
             " columns (" + tmem_of(*w.cta).describe() + ")";
    case Wait::ClusterBar: return "waits at " + at + " in barrier.cluster.wait (" + std::to_string(w.cta->cluster->barrier.arrived) + " threads arrived)";
  }
  return at;
}

}  // namespace mgpu::emu
