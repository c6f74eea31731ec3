// Barriers and fences (PTX ISA 9.7.13.1 bar/barrier, 9.7.13.2 bar.warp.sync, 9.7.13.x
// barrier.cluster, 9.7.13.4 membar/fence incl. fence.proxy.async). Named barriers count
// threads: a generation completes when its expected count has arrived, and waiting lanes
// resume when the generation changes. fence.proxy.async is recorded per thread: the proxy
// checker asks whether the writer of a shared byte fenced after writing it, the memory model
// whether one lies between a global write and a TMA load. Memory fences take part in release
// and acquire patterns and fence.sc order (check/memory_model.h).
#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"
#include "core/emu/exec/interpreter.h"

namespace mgpu::emu {
namespace {

enum BarOp : std::uint8_t { Sync, Arrive, WarpSync, Red };
enum RedOp : std::uint32_t { Popc = 1, And = 2, Or = 3 };  // bar.red's operation, in Insn::flags
enum ClusterFlag : std::uint32_t { Relaxed = 8 };           // barrier.cluster.arrive.relaxed

// bar.red writes the generation's reduction to its destination (PTX ISA 9.7.13.1).
void write_reduction(Warp& w, const Insn& in, std::uint32_t mask, const NamedBarrier& b) {
  EMU_FOR_LANES(mask, l) write_operand(w, in, in.operand(0), l, b.red_result, in.flags == Popc ? Ty::U32 : Ty::Pred);
}

Flow bar(Warp& w, const Insn& in, std::uint32_t mask) {
  if (in.op == WarpSync) {
    // PTX ISA 9.7.13.2: "bar.warp.sync also guarantee memory ordering among threads
    // participating in barrier" -- the one warp collective that orders memory.
    std::uint32_t mm = static_cast<std::uint32_t>(src(w, in, 0, __builtin_ctz(mask)));
    return gather(w, mask, mm, true) ? Flow::Next : Flow::Block;
  }
  const int l0 = __builtin_ctz(mask);
  // Lanes coming back after waiting: their generation has completed.
  if (w.wait[l0].kind == Wait::Bar) {
    const NamedBarrier& done = w.cta->bars[w.wait[l0].object];
    if (RaceDetector* rd = w.cta->races) EMU_FOR_LANES(mask, l) rd->acquire(w.race_thread(l), done.released);
    if (in.op == Red) write_reduction(w, in, mask, done);
    return Flow::Next;
  }
  if (!gather(w, mask, w.alive)) return Flow::Block;
  // bar.red d, a{, b}, {!}c: the barrier operands follow the destination; c is the last.
  const std::size_t first = in.op == Red ? 1 : 0;
  const bool has_count = in.operand_count() > first + (in.op == Red ? 2 : 1);
  std::uint64_t id = src(w, in, first, l0);
  if (id >= 16) w.launch().fault(ReportKind::NamedBarrierMisuse, where(w, in, l0), "barrier id " + std::to_string(id) + " is not in [0, 15]");
  Cta& cta = *w.cta;
  NamedBarrier& b = cta.bars[id];
  std::uint32_t count = has_count ? static_cast<std::uint32_t>(src(w, in, first + 1, l0)) : cta.threads;
  if (has_count && count % 32)
    w.launch().fault(ReportKind::NamedBarrierMisuse, where(w, in, l0), "barrier thread count " + std::to_string(count) + " is not a multiple of 32");
  if (b.expected == 0) b.expected = count;
  else if (b.expected != count)
    w.launch().report(ReportKind::NamedBarrierMisuse, where(w, in, l0),
                      "barrier " + std::to_string(id) + " used with thread count " + std::to_string(count) + " while " +
                          std::to_string(b.expected) + " threads are expected in this generation");
  b.arrived += static_cast<std::uint32_t>(__builtin_popcount(mask));
  if (in.op == Red) {
    const std::size_t c = in.operand_count() - 1;
    EMU_FOR_LANES(mask, l) {
      const bool v = src(w, in, c, l) & 1;
      b.red_popc += v;
      b.red_and = b.red_and && v;
      b.red_or = b.red_or || v;
    }
  }
  RaceDetector* rd = cta.races;
  if (rd) {
    if (b.acc.empty()) b.acc = rd->empty_clock();
    EMU_FOR_LANES(mask, l) rd->release(w.race_thread(l), b.acc);
  }
  std::uint64_t gen = b.generation;
  if (b.arrived >= b.expected) {
    ++b.generation;
    b.arrived = 0;
    b.expected = 0;
    b.red_result = in.flags == Popc ? b.red_popc : in.flags == And ? b.red_and : b.red_or;
    b.red_popc = 0;
    b.red_and = true;
    b.red_or = false;
    if (in.op == Red) write_reduction(w, in, mask, b);
    if (rd) {
      b.released = std::move(b.acc);
      b.acc.clear();
      if (in.op != Arrive) EMU_FOR_LANES(mask, l) rd->acquire(w.race_thread(l), b.released);
    }
    return Flow::Next;
  }
  if (in.op == Arrive) return Flow::Next;
  EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::Bar, static_cast<std::uint32_t>(id), gen};
  return Flow::Block;
}

std::string decode_bar(const ptx::Instruction& p, Insn& out) {
  if (p.parts.size() > 1 && p.parts[1] == "warp") {
    out.op = WarpSync;
  } else if (has_part(p, "red")) {
    // bar.red.popc.u32 d, a{, b}, {!}c / bar.red.and.pred, bar.red.or.pred: a barrier that also
    // reduces c over the arriving threads (PTX ISA 9.7.13.1).
    out.op = Red;
    out.flags = has_part(p, "popc") ? Popc : has_part(p, "and") ? And : has_part(p, "or") ? Or : 0u;
    if (!out.flags) return "bar.red needs .popc, .and or .or";
    if (p.operands.size() < 3 || p.operands.size() > 4) return "expected d, a{, b}, {!}c";
  } else {
    out.op = has_part(p, "arrive") ? Arrive : Sync;
    if (p.operands.empty() || p.operands.size() > 2) return "expected a barrier id and an optional thread count";
  }
  out.fn = &bar;
  return "";
}

// barrier.cluster.arrive / wait: PTX ISA 9.7.13.3. Every live thread of the cluster arrives;
// a wait returns once the phase the thread arrived in has completed.
void maybe_complete_cluster_barrier(Cluster& c) {
  std::uint32_t live = 0;
  for (auto& cta : c.ctas)
    for (auto& wp : cta->warps) live += static_cast<std::uint32_t>(__builtin_popcount(wp->alive));
  if (c.barrier.arrived > 0 && c.barrier.arrived >= live) {
    ++c.barrier.generation;
    c.barrier.arrived = 0;
    if (c.races) {
      c.barrier.released = std::move(c.barrier.acc);
      c.barrier.acc.clear();
    }
  }
}

// The mbarriers `thread` initialized become visible to the cluster with this arrival (generation
// `gen`) when it releases, or when the thread fenced them with fence.mbarrier_init since.
void publish_mbarrier_inits(Cta& cta, int thread, std::uint64_t gen, bool relaxed) {
  for (auto& [offset, m] : cta.mbar_init)
    if (m.thread == thread && m.published == MbarInit::kNever && (m.fenced || !relaxed)) m.published = gen;
}

Flow cluster_barrier(Warp& w, const Insn& in, std::uint32_t mask) {
  Cluster& c = *w.cta->cluster;
  const int l0 = __builtin_ctz(mask);
  if (in.aligned && !gather(w, mask, w.alive)) return Flow::Block;
  if (in.op == Arrive) {
    EMU_FOR_LANES(mask, l) {
      if (w.cluster_arrival[l])
        w.launch().fault(ReportKind::NamedBarrierMisuse, where(w, in, l), "barrier.cluster.arrive twice without a barrier.cluster.wait");
      w.cluster_arrival[l] = c.barrier.generation + 1;
      publish_mbarrier_inits(*w.cta, w.thread(l), c.barrier.generation, in.flags & Relaxed);
      // .relaxed: no release (PTX ISA 9.7.13.3), so nothing is handed to the waiters.
      if (RaceDetector* rd = w.cta->races; rd && !(in.flags & Relaxed)) {
        if (c.barrier.acc.empty()) c.barrier.acc = rd->empty_clock();
        rd->release(w.race_thread(l), c.barrier.acc);
      }
    }
    c.barrier.arrived += static_cast<std::uint32_t>(__builtin_popcount(mask));
    maybe_complete_cluster_barrier(c);
    return Flow::Next;
  }
  // wait
  if (w.cluster_arrival[l0] == 0)
    w.launch().fault(ReportKind::NamedBarrierMisuse, where(w, in, l0), "barrier.cluster.wait without a preceding barrier.cluster.arrive");
  if (c.barrier.generation + 1 > w.cluster_arrival[l0]) {
    EMU_FOR_LANES(mask, l) {
      w.cluster_arrival[l] = 0;
      w.cluster_acquired[l] = c.barrier.generation;
      if (RaceDetector* rd = w.cta->races)
        if (!c.barrier.released.empty()) rd->acquire(w.race_thread(l), c.barrier.released);
    }
    return Flow::Next;
  }
  EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::ClusterBar, 0, w.cluster_arrival[l] - 1};
  return Flow::Block;
}

std::string decode_barrier(const ptx::Instruction& p, Insn& out) {
  if (p.parts.size() > 1 && p.parts[1] == "cluster") {
    out.op = has_part(p, "arrive") ? Arrive : Sync;
    out.aligned = has_part(p, "aligned");
    if (has_part(p, "relaxed")) out.flags |= Relaxed;
    out.fn = &cluster_barrier;
    return "";
  }
  return decode_bar(p, out);
}

enum FenceFlag : std::uint32_t { FAcquire = 1, FRelease = 2, FSc = 4, FShared = 8, FGlobal = 16 };

// fence.proxy.async{.space} / membar.proxy.async (PTX ISA 9.7.13.4 membar/fence: "The memory
// ordering is limited only to operations performed on objects in the state space specified. If
// no state space is specified, then the memory ordering applies on all state spaces"): for
// shared memory the CTA's record the proxy checker reads (Cta::proxy_fenced); for global memory
// the thread's proxy-fenced clock (check/memory_model.h).
Flow proxy_fence(Warp& w, const Insn& in, std::uint32_t mask) {
  Cta& cta = *w.cta;
  if (in.flags & FShared) {
    ++cta.proxy_fence_gen;
    EMU_FOR_LANES(mask, l) cta.proxy_fenced[static_cast<std::size_t>(w.thread(l))] = cta.proxy_fence_gen;
  }
  if ((in.flags & FGlobal) && cta.races && w.launch().memory) EMU_FOR_LANES(mask, l) cta.races->proxy_fence(w.race_thread(l));
  return Flow::Next;
}

// fence.mbarrier_init.release.cluster (PTX ISA 9.7.13.4: a release that applies to the thread's
// prior mbarrier.init only), or a fence of cluster scope or wider that covers them too.
void publish_inits(Warp& w, std::uint32_t mask) {
  EMU_FOR_LANES(mask, l)
    for (auto& [offset, m] : w.cta->mbar_init)
      if (m.thread == w.thread(l)) m.fenced = true;
}

Flow mbarrier_init_fence(Warp& w, const Insn&, std::uint32_t mask) {
  publish_inits(w, mask);
  return Flow::Next;
}

// A memory fence (PTX ISA 9.7.13.4 membar/fence; 8.4: membar, fence.sc and fence.acq_rel are
// memory fence operations, fence.acquire/.release their one-sided forms): the acquire side takes
// what the thread's earlier strong reads observed, the release side is what its later strong
// writes release (8.8 release and acquire patterns), and fence.sc also synchronizes with the
// morally strong fence.sc before it (8.9.3, 8.9.4) -- check/memory_model.h. membar.{cta,gl,sys}
// is fence.sc.{cta,gpu,sys} ("On sm_70 and higher membar is a synonym for fence.sc").
Flow memory_fence_insn(Warp& w, const Insn& in, std::uint32_t mask) {
  const Scope scope = static_cast<Scope>(in.imm[0]);
  if (scope != Scope::Cta) publish_inits(w, mask);
  EMU_FOR_LANES(mask, l) memory_fence(w, l, scope, in.flags & (FAcquire | FSc), in.flags & (FRelease | FSc), in.flags & FSc);
  return Flow::Next;
}

Flow nop(Warp&, const Insn&, std::uint32_t) { return Flow::Next; }

std::string decode_fence(const ptx::Instruction& p, Insn& out) {
  const bool membar = p.parts[0] == "membar";
  if (p.parts.size() > 1 && p.parts[1] == "proxy") {
    // fence.proxy.async{.global, .shared::cta, .shared::cluster}: bi-directional, generic <->
    // async. Other proxy kinds (alias, tensormap, the uni-directional async::generic forms)
    // order nothing the device models apart.
    if (p.parts.size() > 2 && p.parts[2] == "async") {
      const std::string space = p.parts.size() > 3 ? p.parts[3] : "";
      if (space.empty() || space.rfind("shared", 0) == 0) out.flags |= FShared;
      if (space.empty() || space == "global") out.flags |= FGlobal;
      out.fn = &proxy_fence;
      return "";
    }
    out.fn = &nop;
    return "";
  }
  if (membar) {
    out.flags = FSc;
    if (has_part(p, "cta")) out.imm[0] = static_cast<std::int32_t>(Scope::Cta);
    else if (has_part(p, "gl")) out.imm[0] = static_cast<std::int32_t>(Scope::Gpu);
    else if (has_part(p, "sys")) out.imm[0] = static_cast<std::int32_t>(Scope::Sys);
    else return "membar needs .cta, .gl or .sys";
    out.fn = &memory_fence_insn;
    return "";
  }
  // fence.mbarrier_init, and the .sync_restrict forms (restricted to shared-memory objects, so no
  // order for the memory model's global locations): the mbarrier-init publication as before.
  if (has_part(p, "mbarrier_init") || p.opcode.find("restrict") != std::string::npos) {
    out.fn = (has_part(p, "mbarrier_init") || has_part(p, "cluster") || has_part(p, "gpu") || has_part(p, "sys")) ? &mbarrier_init_fence : &nop;
    return "";
  }
  // fence{.sem}.scope: .sem is .sc, .acq_rel (the default), .acquire or .release.
  if (has_part(p, "sc")) out.flags = FSc;
  else if (has_part(p, "acquire")) out.flags = FAcquire;
  else if (has_part(p, "release")) out.flags = FRelease;
  else out.flags = FAcquire | FRelease;
  if (has_part(p, "cta")) out.imm[0] = static_cast<std::int32_t>(Scope::Cta);
  else if (has_part(p, "cluster")) out.imm[0] = static_cast<std::int32_t>(Scope::Cluster);
  else if (has_part(p, "gpu")) out.imm[0] = static_cast<std::int32_t>(Scope::Gpu);
  else if (has_part(p, "sys")) out.imm[0] = static_cast<std::int32_t>(Scope::Sys);
  else return "fence needs a scope (.cta, .cluster, .gpu or .sys)";
  out.fn = &memory_fence_insn;
  return "";
}

}  // namespace

void cluster_barrier_on_exit(Cluster& c);
void cluster_barrier_on_exit(Cluster& c) { maybe_complete_cluster_barrier(c); }

void register_barrier() {
  register_decoder("bar", &decode_bar);
  register_decoder("barrier", &decode_barrier);
  register_decoder("fence", &decode_fence);
  register_decoder("membar", &decode_fence);
}

}  // namespace mgpu::emu
