#include "core/emu/exec/launch.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "core/emu/engines/async_engine.h"
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

std::unique_ptr<Cluster> make_cluster(Launch& L, const std::uint32_t cid[3]) {
  const LaunchConfig& c = L.config;
  auto cl = std::make_unique<Cluster>();
  cl->launch = &L;
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
    cl->races = std::make_unique<RaceDetector>(static_cast<int>(cl->ctas.size()), stride, L.smem_bytes);
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

[[noreturn]] void deadlock(Launch& L, const std::vector<Cluster*>& batch) {
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
  L.fault(ReportKind::Deadlock, first, msg);
}

// Reported where the warp that ran last stands: for an endless loop, inside the loop. Lanes
// blocked in tensor-memory allocation meanwhile are named: a CTA spinning while it keeps its SM's
// allocation permit (or columns) another CTA waits for shows as this, not as a deadlock.
[[noreturn]] void step_limit_reached(Launch& L, const Warp& w, const std::vector<Warp*>& warps) {
  Where at;
  if (w.alive) {
    const int lane = __builtin_ctz(w.alive);
    at = w.cta->where(&w, lane, static_cast<int>(w.pc[lane]));
  }
  std::string blocked;
  for (Warp* o : warps)
    for (std::uint32_t m = o->alive; m; m &= m - 1) {
      const int l = __builtin_ctz(m);
      const Wait::Kind k = o->wait[l].kind;
      if (k != Wait::TmemAlloc && k != Wait::TmemPermit && k != Wait::TmemPairAlloc && k != Wait::TmemPeer) continue;
      blocked += "\n  CTA " + cta_name(*o->cta) + " warp " + std::to_string(o->index) + " lane " + std::to_string(l) + ": " +
                 describe_wait(*o, l);
      break;  // one lane per warp: its lanes wait together in these collectives
    }
  L.fault(ReportKind::StepLimit, at,
          "no end after " + std::to_string(L.config.step_limit) +
              " warp-instructions of this cluster (the step limit; raise it with --step-limit or MGPU_EMU_STEP_LIMIT): an endless "
              "loop, or a spin on a wait that never completes" +
              (blocked.empty() ? "" : "; meanwhile blocked in tensor memory allocation:" + blocked));
}

// Runs the clusters of `batch` together (they are resident at the same time), all their warps
// interleaved by the seeded scheduler.
void run_batch(Launch& L, const std::vector<Cluster*>& batch) {
  L.current = batch.front();
  // Counted per batch: a cluster's work grows with K and its tiles, a launch's with the grid too,
  // so a per-launch count would need a limit too high to end a hang quickly.
  const std::uint64_t first_step = L.steps;
  std::vector<Warp*> warps;
  for (Cluster* cl : batch)
    for (auto& cta : cl->ctas)
      for (auto& w : cta->warps) warps.push_back(w.get());
  std::vector<Warp*> runnable;
  std::vector<std::pair<Cluster*, AsyncOp*>> ready;
  for (;;) {
    runnable.clear();
    bool progress = false;  // a runnable warp that is not spinning on test_wait
    for (Warp* w : warps)
      if (w->alive && warp_can_run(*w)) {
        runnable.push_back(w);
        progress |= !spinning(*w);
      }
    ready.clear();
    for (Cluster* cl : batch)
      for (auto& op : cl->inflight)
        if (performable(*op)) ready.emplace_back(cl, op.get());
    // An async operation lands at a moment of the scheduler's choosing.
    // The seed also picks how eager the async engines are: seeds divisible by 4 perform an
    // operation only when nothing else can make progress (the latest legal moment), which
    // exposes reads of data that has not landed; the others land operations early or in
    // between. A warp spinning on test_wait makes none (interpreter.h, spinning()).
    if (!ready.empty() && (!progress || L.rng() % 4 < L.config.seed % 4)) {
      auto [cl, op] = ready[L.rng() % ready.size()];
      perform(*cl, *op);
      continue;
    }
    if (runnable.empty()) {
      bool any_alive = false;
      for (Warp* w : warps) any_alive |= w->alive != 0;
      if (!any_alive) break;
      deadlock(L, batch);
    }
    // Odd seeds hand over to a warp woken by a completed mbarrier phase at once: the waiter
    // then runs before the arriving warp's next instruction, which exposes a stage released
    // before the work reading it retired.
    Warp* w = nullptr;
    if (L.phase_completed && (L.config.seed & 1)) {
      std::vector<Warp*> woken;
      for (Warp* r : runnable)
        for (std::uint32_t m = r->alive; m; m &= m - 1)
          if (r->wait[__builtin_ctz(m)].kind == Wait::Mbar) { woken.push_back(r); break; }
      if (!woken.empty()) w = woken[L.rng() % woken.size()];
    }
    L.phase_completed = false;
    if (!w) w = runnable[L.rng() % runnable.size()];
    step_warp(*w, 1 + static_cast<int>(L.rng() % 48));
    if (!w->alive) {
      Cta& cta = *w->cta;
      bool all = true;
      for (auto& o : cta.warps) all &= o->alive == 0;
      if (all) {
        cta.exited = true;
        tmem_leak_check(L, cta);
        check_cta_exit(*cta.cluster, cta);
        setmaxnreg_exit_check(L, cta);
      }
      cluster_barrier_on_exit(*cta.cluster);
    }
    if (L.steps - first_step > L.config.step_limit) step_limit_reached(L, *w, warps);
  }
  // Bulk stores nobody waited for still complete when the grid ends.
  for (Cluster* cl : batch)
    while (!cl->inflight.empty()) {
      auto op = cl->inflight.front();
      if (!op->performed && performable(*op)) perform(*cl, *op);
      forget(*cl, op.get());
    }
  L.current = nullptr;
}

bool uses_tcgen05(const Launch& L) {
  for (const Insn& in : *L.code)
    if (!in.src->parts.empty() && in.src->parts[0] == "tcgen05") return true;
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

void run_launch(Launch& L) {
  const LaunchConfig& c = L.config;
  L.rng.seed(c.seed);
  std::uint32_t nclusters[3];
  for (int i = 0; i < 3; ++i) nclusters[i] = c.grid[i] / c.cluster[i];
  std::vector<std::array<std::uint32_t, 3>> order;
  for (std::uint32_t z = 0; z < nclusters[2]; ++z)
    for (std::uint32_t y = 0; y < nclusters[1]; ++y)
      for (std::uint32_t x = 0; x < nclusters[0]; ++x) order.push_back({x, y, z});
  std::shuffle(order.begin(), order.end(), L.rng);
  // Clusters run in batches of the co-resident count: CTA rank r of each cluster in a batch sits
  // on the same SM, so they share its tensor memory and compete for its columns. Kernels without
  // tcgen05 have no shared state between CTAs here, and run one cluster at a time.
  const bool tmem = uses_tcgen05(L);
  const std::size_t per_batch = tmem ? static_cast<std::size_t>(resident_ctas_per_sm(L)) : 1;
  for (std::size_t i = 0; i < order.size(); i += per_batch) {
    std::vector<std::unique_ptr<Cluster>> owned;
    std::vector<Cluster*> batch;
    for (std::size_t j = i; j < std::min(order.size(), i + per_batch); ++j) {
      owned.push_back(make_cluster(L, order[j].data()));
      batch.push_back(owned.back().get());
    }
    if (tmem)
      for (std::size_t r = 0; r < batch.front()->ctas.size(); ++r) {
        auto sm = std::make_shared<TensorMemory>();
        for (Cluster* cl : batch) cl->ctas[r]->tmem = sm;
      }
    run_batch(L, batch);
  }
}

}  // namespace mgpu::emu
