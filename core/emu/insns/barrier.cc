// Barriers and fences (PTX ISA 9.7.13.1 bar/barrier, 9.7.13.2 bar.warp.sync, 9.7.13.x
// barrier.cluster, 9.7.13.4 membar/fence incl. fence.proxy.async). Named barriers count
// threads: a generation completes when its expected count has arrived, and waiting lanes
// resume when the generation changes. fence.proxy.async is recorded per thread: the proxy
// checker asks whether the writer of a shared byte fenced after writing it.
#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"
#include "core/emu/exec/interpreter.h"

namespace mgpu::emu {
namespace {

enum BarOp : std::uint8_t { Sync, Arrive, WarpSync };

Flow bar(Warp& w, const Insn& in, std::uint32_t mask) {
  if (in.op == WarpSync) {
    std::uint32_t mm = static_cast<std::uint32_t>(src(w, in, 0, __builtin_ctz(mask)));
    return gather(w, mask, mm) ? Flow::Next : Flow::Block;
  }
  const int l0 = __builtin_ctz(mask);
  // Lanes coming back after waiting: their generation has completed.
  if (w.wait[l0].kind == Wait::Bar) {
    if (RaceDetector* rd = w.cta->races.get())
      EMU_FOR_LANES(mask, l) rd->acquire(w.thread(l), w.cta->bars[w.wait[l0].object].released);
    return Flow::Next;
  }
  if (!gather(w, mask, w.alive)) return Flow::Block;
  std::uint64_t id = src(w, in, 0, l0);
  if (id >= 16) w.launch().fault(ReportKind::BarrierMisuse, where(w, in, l0), "barrier id " + std::to_string(id) + " is not in [0, 15]");
  Cta& cta = *w.cta;
  NamedBarrier& b = cta.bars[id];
  std::uint32_t count = in.operand_count() > 1 ? static_cast<std::uint32_t>(src(w, in, 1, l0)) : cta.threads;
  if (in.operand_count() > 1 && count % 32)
    w.launch().fault(ReportKind::BarrierMisuse, where(w, in, l0), "barrier thread count " + std::to_string(count) + " is not a multiple of 32");
  if (b.expected == 0) b.expected = count;
  else if (b.expected != count)
    w.launch().report(ReportKind::BarrierMisuse, where(w, in, l0),
                      "barrier " + std::to_string(id) + " used with thread count " + std::to_string(count) + " while " +
                          std::to_string(b.expected) + " threads are expected in this generation");
  b.arrived += static_cast<std::uint32_t>(__builtin_popcount(mask));
  RaceDetector* rd = cta.races.get();
  if (rd) {
    if (b.acc.empty()) b.acc = rd->empty_clock();
    EMU_FOR_LANES(mask, l) rd->release(w.thread(l), b.acc);
  }
  std::uint64_t gen = b.generation;
  if (b.arrived >= b.expected) {
    ++b.generation;
    b.arrived = 0;
    b.expected = 0;
    if (rd) {
      b.released = std::move(b.acc);
      b.acc.clear();
      if (in.op != Arrive) EMU_FOR_LANES(mask, l) rd->acquire(w.thread(l), b.released);
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
    return "bar.red is not implemented";
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
    for (auto& cta : c.ctas)
      if (cta->races) {
        cta->cluster_clocks.released = std::move(cta->cluster_clocks.acc);
        cta->cluster_clocks.acc.clear();
      }
  }
}

Flow cluster_barrier(Warp& w, const Insn& in, std::uint32_t mask) {
  Cluster& c = *w.cta->cluster;
  const int l0 = __builtin_ctz(mask);
  if (in.aligned && !gather(w, mask, w.alive)) return Flow::Block;
  if (in.op == Arrive) {
    EMU_FOR_LANES(mask, l) {
      if (w.cluster_arrival[l])
        w.launch().fault(ReportKind::BarrierMisuse, where(w, in, l), "barrier.cluster.arrive twice without a barrier.cluster.wait");
      w.cluster_arrival[l] = c.barrier.generation + 1;
      if (RaceDetector* rd = w.cta->races.get()) {
        if (w.cta->cluster_clocks.acc.empty()) w.cta->cluster_clocks.acc = rd->empty_clock();
        rd->release(w.thread(l), w.cta->cluster_clocks.acc);
      }
    }
    c.barrier.arrived += static_cast<std::uint32_t>(__builtin_popcount(mask));
    maybe_complete_cluster_barrier(c);
    return Flow::Next;
  }
  // wait
  if (w.cluster_arrival[l0] == 0)
    w.launch().fault(ReportKind::BarrierMisuse, where(w, in, l0), "barrier.cluster.wait without a preceding barrier.cluster.arrive");
  if (c.barrier.generation + 1 > w.cluster_arrival[l0]) {
    EMU_FOR_LANES(mask, l) {
      w.cluster_arrival[l] = 0;
      if (RaceDetector* rd = w.cta->races.get())
        if (!w.cta->cluster_clocks.released.empty()) rd->acquire(w.thread(l), w.cta->cluster_clocks.released);
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
    out.fn = &cluster_barrier;
    return "";
  }
  return decode_bar(p, out);
}

Flow proxy_fence(Warp& w, const Insn&, std::uint32_t mask) {
  EMU_FOR_LANES(mask, l) ++w.proxy_fences[l];
  return Flow::Next;
}

Flow nop(Warp&, const Insn&, std::uint32_t) { return Flow::Next; }

std::string decode_fence(const ptx::Instruction& p, Insn& out) {
  // fence.proxy.async orders this thread's generic-proxy accesses with later async-proxy ones;
  // every other fence is implied by the device's sequential consistency.
  bool async_proxy = p.parts.size() > 2 && p.parts[1] == "proxy" && p.parts[2] == "async";
  out.fn = async_proxy ? &proxy_fence : &nop;
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
