#include "core/emu/exec/launch.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "core/emu/engines/async_engine.h"
#include "core/emu/exec/decode.h"
#include "core/emu/exec/interpreter.h"

namespace mgpu::emu {

void cluster_barrier_on_exit(Cluster& c);  // insns/barrier.cc
void setmaxnreg_exit_check(Launch& L, Cta& cta);  // insns/misc.cc

void Launch::report(ReportKind kind, Where where, std::string message) {
  for (const auto& r : reports)
    if (r.kind == kind && r.where.pc == where.pc && r.where.line == where.line) return;  // once per site
  reports.push_back(Report{kind, where, std::move(message)});
}

void Launch::fault(ReportKind kind, Where where, std::string message) { throw Fault(Report{kind, where, std::move(message)}); }

int Warp::thread(int lane) const { return index * 32 + lane; }
int Warp::race_thread(int lane) const { return cta->race_thread_base + thread(lane); }
Launch& Warp::launch() const { return *cta->cluster->launch; }

Where Cta::where(const Warp* w, int lane, int pc) const {
  Where r;
  r.cta[0] = id[0];
  r.cta[1] = id[1];
  r.cta[2] = id[2];
  if (w) r.warp = w->index;
  r.lane = lane;
  r.pc = pc;
  const Launch& L = *cluster->launch;
  if (pc >= 0 && static_cast<std::size_t>(pc) < L.code->size()) r.line = (*L.code)[pc].line();
  return r;
}

void Cta::mbar_phase_completed(std::uint32_t offset) {
  if (!races) return;
  MbarClocks& m = mbar_clocks[offset];
  if (m.pending.empty()) m.pending = races->empty_clock();
  m.completed = m.pending;
  m.pending = races->empty_clock();
}

namespace {

// `serial`: the cluster's place in the dispatch order; `sm_of_rank0`: the SM its CTA rank 0 is
// resident on when the launch places clusters on SMs (co-resident launches), or -1.
std::unique_ptr<Cluster> make_cluster(Launch& L, const std::uint32_t cid[3], std::uint32_t serial, int sm_of_rank0) {
  const LaunchConfig& c = L.config;
  auto cl = std::make_unique<Cluster>();
  cl->launch = &L;
  cl->serial = serial;
  for (int i = 0; i < 3; ++i) cl->id[i] = static_cast<int>(cid[i]);
  const std::uint32_t threads = c.block[0] * c.block[1] * c.block[2];
  const int nwarps = static_cast<int>((threads + 31) / 32);
  const std::size_t slots = L.kernel->reg_types.size();
  // The register budget a thread starts with: what the kernel asks for, or the most the
  // register file allows at this block size (ptxas would not give more).
  std::int32_t per_thread = L.kernel->maxnreg;
  if (!per_thread) per_thread = std::min<std::int32_t>(255, static_cast<std::int32_t>(65536 / (nwarps * 32)) / 8 * 8);
  int rank = 0;
  for (std::uint32_t z = 0; z < c.cluster[2]; ++z)
    for (std::uint32_t y = 0; y < c.cluster[1]; ++y)
      for (std::uint32_t x = 0; x < c.cluster[0]; ++x) {
        auto cta = std::make_unique<Cta>();
        cta->cluster = cl.get();
        cta->rank = rank++;
        cta->id[0] = static_cast<int>(cid[0] * c.cluster[0] + x);
        cta->id[1] = static_cast<int>(cid[1] * c.cluster[1] + y);
        cta->id[2] = static_cast<int>(cid[2] * c.cluster[2] + z);
        cta->sm = sm_of_rank0 >= 0 ? sm_of_rank0 + cta->rank : static_cast<int>((cta->id[0] + cta->id[1] * c.grid[0]) % L.sms);
        cta->threads = threads;
        // Uninitialized shared memory reads as NaN in every float format (all ones).
        cta->smem.assign(L.smem_bytes, 0xFF);
        cta->shadow.assign(L.smem_bytes, SmemShadow{});
        cta->warpgroups.resize(static_cast<std::size_t>(nwarps) / 4);
        cta->setmaxnreg_log.resize(static_cast<std::size_t>(nwarps + 3) / 4);
        cta->proxy_fenced.assign(threads, 0);
        for (int wi = 0; wi < nwarps; ++wi) {
          auto w = std::make_unique<Warp>();
          w->cta = cta.get();
          w->index = wi;
          w->lanes = static_cast<int>(std::min<std::uint32_t>(32, threads - 32 * wi));
          w->alive = w->lanes == 32 ? 0xFFFFFFFFu : (1u << w->lanes) - 1;
          w->regs.assign(slots * 32, 0);
          w->inflight.assign(slots, nullptr);
          w->a_held.assign(slots, nullptr);
          w->reg_touched.assign(slots, 0);
          w->tmem_pending.assign(slots, 0);
          w->local.assign(static_cast<std::size_t>(L.local_bytes) * 32, 0);
          w->maxnreg = per_thread;
          cta->registers_in_use += static_cast<std::int64_t>(per_thread) * 32;
          cta->warps.push_back(std::move(w));
        }
        cl->cluster_threads += threads;
        cl->ctas.push_back(std::move(cta));
      }
  if (c.detect_races) {
    const int stride = nwarps * 32;
    cl->races = std::make_unique<RaceDetector>(static_cast<int>(cl->ctas.size()), stride, L.smem_bytes, serial);
    for (auto& cta : cl->ctas) {
      cta->races = cl->races.get();
      cta->race_thread_base = cta->rank * stride;
      cta->race_byte_base = static_cast<std::uint32_t>(cta->rank) * L.smem_bytes;
    }
  }
  return cl;
}

// PTX ISA "tcgen05.alloc": all tensor memory a CTA allocated must be freed before it exits. Its
// exit gives up its SM's allocation permit if it still holds it (engines/tmem.h).
void tmem_leak_check(Launch& L, Cta& cta) {
  if (!cta.tmem) return;
  cta.tmem->release_permit(&cta);
  std::string held = cta.tmem->held_text(&cta);
  if (held.empty()) return;
  L.report(ReportKind::TmemMisuse, cta.where(),
           "CTA (" + std::to_string(cta.id[0]) + "," + std::to_string(cta.id[1]) + "," + std::to_string(cta.id[2]) +
               ") exited holding tensor memory " + held + ": no tcgen05.dealloc freed it (a leak)");
  cta.tmem->release_all(&cta);
}

// (Streams, not string concatenation: GCC 12 warns falsely (-Wrestrict) on the latter here.)
std::string triple(const int id[3]) {
  std::ostringstream o;
  o << "(" << id[0] << "," << id[1] << "," << id[2] << ")";
  return o.str();
}
std::string cta_name(const Cta& c) { return triple(c.id); }

// How the launch holds its clusters (run_launch): how many are resident at once and why, for
// the reports of a launch that cannot end.
struct Residency {
  std::size_t capacity = 1;     // clusters resident at once
  std::size_t waiting = 0;      // clusters of the grid not started yet
  bool placed = false;          // clusters placed on SMs as the hardware holds them (co-resident)
  int groups = 1, per_sm = 1, cluster_ctas = 1;
  std::string text() const {
    if (!placed)
      return std::to_string(waiting) + " more cluster" + (waiting == 1 ? "" : "s") +
             " of the grid have not started: this kernel has no instruction that can wait for another cluster (no atomic, "
             "strong or volatile access of global memory, no .gpu or .sys fence), so its clusters run " +
             (capacity == 1 ? std::string("one at a time") : std::to_string(capacity) + " at a time, sharing one group of SMs");
    std::string s = std::to_string(waiting) + " more cluster" + (waiting == 1 ? "" : "s") +
                    " of the grid cannot start until a resident one exits: at most " + std::to_string(capacity) +
                    (capacity == 1 ? " cluster is" : " clusters are") + " resident at once";
    if (placed)
      s += " (" + std::to_string(groups * cluster_ctas) + " SMs used by clusters of " + std::to_string(cluster_ctas) + " CTA" +
           (cluster_ctas == 1 ? "" : "s") + ", " + std::to_string(per_sm) + " CTA" + (per_sm == 1 ? "" : "s") +
           " per SM by the launch's resources), so a wait on one of them never ends";
    return s;
  }
};

[[noreturn]] void deadlock(Launch& L, const std::vector<Cluster*>& batch, const Residency& res) {
  std::string which;
  for (Cluster* cl : batch) which += (which.empty() ? "" : " and ") + triple(cl->id);
  std::string msg = std::string("every live thread of ") + (batch.size() > 1 ? "the co-resident clusters " : "cluster ") + which +
                    " waits and nothing in flight can wake one:";
  Where first;
  bool have_first = false;
  for (Cluster* cl : batch)
    for (auto& cta : cl->ctas)
      for (auto& w : cta->warps) {
        if (!w->alive) continue;
        std::string last;
        for (std::uint32_t m = w->alive; m; m &= m - 1) {
          int l = __builtin_ctz(m);
          std::string d = describe_wait(*w, l);
          if (d == last) continue;
          last = d;
          msg += "\n  CTA " + cta_name(*cta) + " warp " + std::to_string(w->index) + " lane " + std::to_string(l) + ": " + d;
          if (!have_first) { first = cta->where(w.get(), l, static_cast<int>(w->pc[l])); have_first = true; }
        }
      }
  // Who else could have arrived: threads that have exited (and so never will).
  std::size_t pending = 0;
  int uncommitted = 0, line = -1;
  for (Cluster* cl : batch) {
    for (auto& cta : cl->ctas) {
      int exited = 0;
      for (auto& w : cta->warps) exited += w->lanes - __builtin_popcount(w->alive);
      if (exited)
        msg += "\n  CTA " + cta_name(*cta) + ": " + std::to_string(exited) + " of " + std::to_string(cta->threads) +
               " threads have exited and cannot arrive";
    }
    for (auto& op : cl->inflight) {
      pending += !op->performed;
      // MMAs that no tcgen05.commit covers: nothing will ever tell a waiter they completed.
      if (op->kind == AsyncOp::Tcgen05Mma && !uncommitted++) line = op->issued.line;
    }
  }
  msg += "\n  async operations in flight: " + std::to_string(pending);
  if (uncommitted)
    msg += "\n  tcgen05.mma operations no tcgen05.commit covers: " + std::to_string(uncommitted) + " (the first issued at PTX line " +
           std::to_string(line) + ")";
  if (res.placed && res.waiting) msg += "\n  " + res.text();
  L.fault(ReportKind::Deadlock, first, msg);
}

// Reported where the warp that ran last stands: for an endless loop, inside the loop. Lanes
// blocked in tensor-memory allocation meanwhile are named: a CTA spinning while it keeps its SM's
// allocation permit (or columns) another CTA waits for shows as this, not as a deadlock.
[[noreturn]] void step_limit_reached(Launch& L, const Warp& w, const std::vector<Cluster*>& resident, const Residency& res) {
  Where at;
  if (w.alive) {
    const int lane = __builtin_ctz(w.alive);
    at = w.cta->where(&w, lane, static_cast<int>(w.pc[lane]));
  }
  std::string blocked;
  for (Cluster* cl : resident)
    for (auto& cta : cl->ctas)
      for (auto& o : cta->warps)
        for (std::uint32_t m = o->alive; m; m &= m - 1) {
          const int l = __builtin_ctz(m);
          const Wait::Kind k = o->wait[l].kind;
          if (k != Wait::TmemAlloc && k != Wait::TmemPermit && k != Wait::TmemPairAlloc && k != Wait::TmemPeer) continue;
          blocked += "\n  CTA " + cta_name(*o->cta) + " warp " + std::to_string(o->index) + " lane " + std::to_string(l) + ": " +
                     describe_wait(*o, l);
          break;  // one lane per warp: its lanes wait together in these collectives
        }
  // The other resident clusters: how many, and those that cannot move (every live lane waits),
  // each with its first waiting lane -- a spin on a flag that a deadlocked cluster would set.
  std::string others;
  if (resident.size() > 1) {
    others = "; " + std::to_string(resident.size() - 1) + " other cluster" + (resident.size() == 2 ? " is" : "s are") + " resident beside it";
    for (Cluster* cl : resident) {
      if (cl == w.cta->cluster) continue;
      const Warp* waiting = nullptr;
      int lane = -1;
      bool moves = false;
      for (auto& cta : cl->ctas)
        for (auto& o : cta->warps) {
          if (!o->alive) continue;
          if (warp_can_run(*o)) moves = true;
          else if (!waiting) waiting = o.get(), lane = __builtin_ctz(o->alive);
        }
      if (!moves && waiting)
        others += "; cluster " + triple(cl->id) + " cannot move: every live thread waits (CTA " + cta_name(*waiting->cta) + " warp " +
                  std::to_string(waiting->index) + " lane " + std::to_string(lane) + ": " + describe_wait(const_cast<Warp&>(*waiting), lane) + ")";
    }
  }
  L.fault(ReportKind::StepLimit, at,
          "no end after " + std::to_string(L.config.step_limit) +
              " warp-instructions of this cluster (the step limit; raise it with --step-limit or MGPU_EMU_STEP_LIMIT): an endless "
              "loop, or a spin on a wait that never completes (cluster " +
              triple(w.cta->cluster->id) + others + ")" + (res.waiting ? "; " + res.text() : std::string()) +
              (blocked.empty() ? "" : "; meanwhile blocked in tensor memory allocation:" + blocked));
}

// A resident cluster: its warps, and the residency slot it holds.
struct Resident {
  std::unique_ptr<Cluster> cl;
  std::vector<Warp*> warps;
  std::size_t slot = 0;
};

enum class Outcome { Ran, Stuck, Done };

// One scheduling decision inside one resident cluster: an async operation lands, or one warp
// runs a few instructions. Done when every thread of the cluster has exited and nothing it
// issued can land any more; Stuck when every live lane waits and nothing in flight can land.
Outcome step_cluster(Launch& L, Resident& r, std::vector<Warp*>& runnable, std::vector<AsyncOp*>& ready,
                     const std::vector<Resident>& all, const Residency& res) {
  Cluster& cl = *r.cl;
  runnable.clear();
  bool progress = false;  // a runnable warp that is not spinning on test_wait
  for (Warp* w : r.warps)
    if (w->alive && warp_can_run(*w)) {
      runnable.push_back(w);
      progress |= !spinning(*w);
    }
  ready.clear();
  for (auto& op : cl.inflight)
    if (performable(*op)) ready.push_back(op.get());
  // An async operation lands at a moment of the scheduler's choosing.
  // The seed also picks how eager the async engines are: seeds divisible by 4 perform an
  // operation only when nothing else can make progress (the latest legal moment), which
  // exposes reads of data that has not landed; the others land operations early or in
  // between. A warp spinning on test_wait makes none (interpreter.h, spinning()).
  if (!ready.empty() && (!progress || L.rng() % 4 < L.config.seed % 4)) {
    perform(cl, *ready[L.rng() % ready.size()]);
    return Outcome::Ran;
  }
  if (runnable.empty()) {
    for (Warp* w : r.warps)
      if (w->alive) return Outcome::Stuck;
    return Outcome::Done;
  }
  // Odd seeds hand over to a warp woken by a completed mbarrier phase at once: the waiter
  // then runs before the arriving warp's next instruction, which exposes a stage released
  // before the work reading it retired.
  Warp* w = nullptr;
  if (L.phase_completed && (L.config.seed & 1)) {
    std::vector<Warp*> woken;
    for (Warp* x : runnable)
      for (std::uint32_t m = x->alive; m; m &= m - 1)
        if (x->wait[__builtin_ctz(m)].kind == Wait::Mbar) { woken.push_back(x); break; }
    if (!woken.empty()) w = woken[L.rng() % woken.size()];
  }
  L.phase_completed = false;
  if (!w) w = runnable[L.rng() % runnable.size()];
  const std::uint64_t before = L.steps;
  step_warp(*w, 1 + static_cast<int>(L.rng() % 48));
  cl.steps += L.steps - before;
  if (!w->alive) {
    Cta& cta = *w->cta;
    bool all = true;
    for (auto& o : cta.warps) all &= o->alive == 0;
    if (all) {
      cta.exited = true;
      tmem_leak_check(L, cta);
      check_cta_exit(cl, cta);
      setmaxnreg_exit_check(L, cta);
    }
    cluster_barrier_on_exit(cl);
  }
  // Counted per cluster: a cluster's work grows with K and its tiles, a launch's with the grid
  // too, so a per-launch count would need a limit too high to end a hang quickly.
  if (cl.steps > L.config.step_limit) {
    std::vector<Cluster*> resident;
    for (const Resident& x : all) resident.push_back(x.cl.get());
    step_limit_reached(L, *w, resident, res);
  }
  return Outcome::Ran;
}

// Bulk stores nobody waited for still complete when the grid ends.
void drain(Cluster& cl) {
  while (!cl.inflight.empty()) {
    auto op = cl.inflight.front();
    if (!op->performed && performable(*op)) perform(cl, *op);
    forget(cl, op.get());
  }
}

bool uses_tcgen05(const Launch& L) {
  for (const Insn& in : *L.code)
    if (!in.src->parts.empty() && in.src->parts[0] == "tcgen05") return true;
  return false;
}

// Whether a thread of this kernel can wait for a thread of another cluster: only through global
// memory (PTX ISA 8: the other state spaces a cluster sees are its own), so only with an atomic
// outside shared memory, a strong (.relaxed/.acquire/.release/.volatile/.mmio) ld/st outside
// shared memory, a fence or membar of .gpu/.sys scope, or multimem. A kernel with none of them
// cannot observe another cluster's progress (a weak load spinning on another CTA's store is a
// data race, reported as one), so its clusters may run one resident window at a time.
bool may_wait_on_other_clusters(const Launch& L) {
  for (const Insn& in : *L.code) {
    const ptx::Instruction& p = *in.src;
    if (p.parts.empty()) continue;
    const std::string& op = p.parts[0];
    const Space sp = space_of(p);
    const bool shared = sp == Space::Shared || sp == Space::SharedCluster;
    if ((op == "atom" || op == "red") && !shared) return true;
    if ((op == "ld" || op == "st") && !shared &&
        (has_part(p, "relaxed") || has_part(p, "acquire") || has_part(p, "release") || has_part(p, "volatile") || has_part(p, "mmio")))
      return true;
    if (op == "membar" && (has_part(p, "gl") || has_part(p, "sys"))) return true;
    if (op == "fence" && !has_part(p, "proxy") && (has_part(p, "gpu") || has_part(p, "sys"))) return true;
    if (op == "multimem") return true;
  }
  return false;
}

}  // namespace


std::string launch_shape_error(const LaunchConfig& c) {
  static constexpr std::uint32_t kMaxGrid[3] = {0x7FFFFFFFu, 65535, 65535}, kMaxBlock[3] = {1024, 1024, 64};
  static constexpr const char* kAxis[3] = {"x", "y", "z"};
  std::uint64_t ctas = 1, threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (c.grid[i] < 1 || c.grid[i] > kMaxGrid[i])
      return "grid " + std::string(kAxis[i]) + " = " + std::to_string(c.grid[i]) + " is outside 1.." + std::to_string(kMaxGrid[i]);
    if (c.block[i] < 1 || c.block[i] > kMaxBlock[i])
      return "block " + std::string(kAxis[i]) + " = " + std::to_string(c.block[i]) + " is outside 1.." + std::to_string(kMaxBlock[i]);
    ctas *= c.grid[i];
    threads *= c.block[i];
  }
  if (threads > 1024) return "a block of " + std::to_string(threads) + " threads is more than CUDA's 1024";
  if (ctas > kMaxLaunchCtas)
    return "a grid of " + std::to_string(ctas) + " CTAs is more than the virtual device runs in one launch (" +
           std::to_string(kMaxLaunchCtas) + ")";
  return "";
}

// How many CTAs of this launch one SM holds at once (the CUDA occupancy rules): 228 KiB of
// shared memory with 1 KiB reserved per CTA, 2048 threads, 32 CTAs, and 64 K registers when
// the kernel states its budget (.maxnreg; PTX does not carry ptxas's count otherwise).
int resident_ctas_per_sm(const Launch& L) {
  const LaunchConfig& c = L.config;
  if (c.resident_ctas) return static_cast<int>(c.resident_ctas);
  const std::uint32_t threads = c.block[0] * c.block[1] * c.block[2];
  const std::uint32_t warps = (threads + 31) / 32;
  std::uint32_t r = std::min<std::uint32_t>(32, 64 / std::max<std::uint32_t>(warps, 1));
  r = std::min<std::uint32_t>(r, (228u * 1024) / (L.smem_bytes + 1024));
  if (L.kernel->maxnreg) r = std::min<std::uint32_t>(r, 65536u / (static_cast<std::uint32_t>(L.kernel->maxnreg) * warps * 32));
  return static_cast<int>(std::max<std::uint32_t>(r, 1));
}

// How the clusters of a launch run (the virtual device's residency):
//  - A kernel that may wait for another cluster (may_wait_on_other_clusters) runs as the
//    hardware holds it: clusters are dispatched in order of their linear cluster id (x fastest,
//    as the hardware's block scheduler does) onto groups of cluster-size SMs, one per group
//    before a second on any (a tcgen05 kernel's: a group filled before the next, so that
//    co-resident CTAs share tensor memory), up to resident_ctas_per_sm per group, so at most
//    (SMs / cluster size) x resident_ctas_per_sm are resident at once; when one exits, the next
//    in order takes its place. A persistent grid (at most that many clusters) is wholly
//    resident and its CTAs can wait on each other; a CTA waiting on one that cannot be resident
//    beside it spins into the step limit (or deadlocks), and the report says how many clusters
//    wait to start and why.
//  - Any other kernel cannot tell how many clusters run beside it, so it runs as it always
//    has: clusters in a seeded random order, one at a time -- or, when it uses tcgen05,
//    resident_ctas_per_sm at a time on one group of SMs, whose tensor memory they share.
// Resident clusters are interleaved by the seeded scheduler: each decision picks one resident
// cluster (uniformly; the one whose instruction just completed an mbarrier phase keeps the turn
// when the seed hands over to the woken waiters) and makes one scheduling decision inside it,
// as a lone cluster always did (step_cluster). Only resident clusters have state: a cluster's
// CTAs, warps, shared memory and race detector exist from its start to its exit.
void run_launch(Launch& L) {
  const LaunchConfig& c = L.config;
  L.rng.seed(c.seed);
  L.sms = c.sms ? c.sms : (L.module->target.rfind("sm_100", 0) == 0 ? 148 : 132);
  std::uint32_t nclusters[3];
  for (int i = 0; i < 3; ++i) nclusters[i] = c.grid[i] / c.cluster[i];
  std::vector<std::array<std::uint32_t, 3>>& order = L.cluster_order;
  order.clear();
  for (std::uint32_t z = 0; z < nclusters[2]; ++z)
    for (std::uint32_t y = 0; y < nclusters[1]; ++y)
      for (std::uint32_t x = 0; x < nclusters[0]; ++x) order.push_back({x, y, z});
  const bool placed = may_wait_on_other_clusters(L);
  if (!placed) std::shuffle(order.begin(), order.end(), L.rng);
  const bool tmem = uses_tcgen05(L);
  Residency res;
  res.placed = placed;
  res.cluster_ctas = static_cast<int>(c.cluster[0] * c.cluster[1] * c.cluster[2]);
  res.per_sm = resident_ctas_per_sm(L);
  res.groups = std::max(1, static_cast<int>(L.sms) / res.cluster_ctas);
  res.capacity = placed ? static_cast<std::size_t>(res.groups) * static_cast<std::size_t>(res.per_sm)
                        : (tmem ? static_cast<std::size_t>(res.per_sm) : 1);
  if (c.detect_races) {
    const std::uint32_t threads = c.block[0] * c.block[1] * c.block[2];
    L.memory = std::make_unique<MemoryModel>(static_cast<int>((threads + 31) / 32 * 32));
  }
  // Tensor memory per SM (CTA rank r of the clusters of one group shares SM group * size + r).
  std::vector<std::vector<std::shared_ptr<TensorMemory>>> tmem_of_group;
  std::vector<Resident> resident;
  std::vector<bool> slot_used(std::min<std::size_t>(res.capacity, order.size()), false);
  std::size_t next = 0;
  auto start_clusters = [&] {
    while (resident.size() < res.capacity && next < order.size()) {
      std::size_t slot = 0;
      while (slot_used[slot]) ++slot;
      slot_used[slot] = true;
      // Placed clusters take one cluster per SM group first, then the next round (as the
      // hardware spreads CTAs over SMs) -- but a tcgen05 kernel's fill one group up to its
      // residency before the next, so co-resident CTAs share an SM's tensor memory and
      // allocation permit as they always did here (the contention worth proving); a window of
      // an unplaced tcgen05 launch shares group 0.
      const int group = !placed ? 0
                        : tmem  ? static_cast<int>(slot / static_cast<std::size_t>(res.per_sm))
                                : static_cast<int>(slot % static_cast<std::size_t>(res.groups));
      Resident r;
      r.slot = slot;
      r.cl = make_cluster(L, order[next].data(), static_cast<std::uint32_t>(next), placed ? group * res.cluster_ctas : -1);
      ++next;
      if (tmem) {
        if (tmem_of_group.size() <= static_cast<std::size_t>(group)) tmem_of_group.resize(static_cast<std::size_t>(group) + 1);
        auto& sms = tmem_of_group[static_cast<std::size_t>(group)];
        for (std::size_t rank = 0; rank < r.cl->ctas.size(); ++rank) {
          if (sms.size() <= rank) sms.push_back(std::make_shared<TensorMemory>());
          r.cl->ctas[rank]->tmem = sms[rank];
        }
      }
      for (auto& cta : r.cl->ctas)
        for (auto& w : cta->warps) r.warps.push_back(w.get());
      resident.push_back(std::move(r));
    }
    res.waiting = order.size() - next;
  };
  start_clusters();
  std::vector<Warp*> runnable;
  std::vector<AsyncOp*> ready;
  std::vector<std::size_t> untried;
  const Cluster* last = nullptr;  // the cluster of the last decision
  while (!resident.empty()) {
    std::size_t i = 0;
    if (resident.size() > 1) {
      i = resident.size();
      if (L.phase_completed)
        for (std::size_t k = 0; k < resident.size(); ++k)
          if (resident[k].cl.get() == last) i = k;
      if (i == resident.size()) i = L.rng() % resident.size();
    }
    bool tried_others = false;  // `untried` holds the clusters not yet tried for this decision
    for (;;) {
      const Outcome o = step_cluster(L, resident[i], runnable, ready, resident, res);
      if (o == Outcome::Ran) {
        last = resident[i].cl.get();
        break;
      }
      if (o == Outcome::Done) {
        drain(*resident[i].cl);
        slot_used[resident[i].slot] = false;
        resident.erase(resident.begin() + static_cast<std::ptrdiff_t>(i));
        last = nullptr;
        start_clusters();
        break;
      }
      // Stuck: another resident cluster may still wake it (through the tensor memory of an SM
      // they share) or hold what it waits for; when every resident cluster is stuck, they are
      // reported together (a cluster stuck on its own barriers is named with whoever waits on it).
      if (!tried_others) {
        untried.clear();
        for (std::size_t k = 0; k < resident.size(); ++k)
          if (k != i) untried.push_back(k);
        tried_others = true;
      }
      if (untried.empty()) {
        std::vector<Cluster*> all;
        for (auto& r : resident) all.push_back(r.cl.get());
        deadlock(L, all, res);
      }
      const std::size_t pick = untried.size() > 1 ? L.rng() % untried.size() : 0;
      i = untried[pick];
      untried.erase(untried.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
}

}  // namespace mgpu::emu
