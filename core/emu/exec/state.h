// The virtual device's run-time state for one launch: global memory, clusters, CTAs with their
// shared memory (plus a shadow per byte for the checkers), warps with a register file laid out
// slot-major so converged lanes run as one loop, and the asynchronous operations in flight.
// Contract: lower layers (insns/, engines/) reach everything through a Warp; only
// exec/launch.cc creates and schedules these objects.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/emu/check/bank_conflicts.h"
#include "core/emu/check/memory_model.h"
#include "core/emu/check/race_detector.h"
#include "core/emu/check/report.h"
#include "core/emu/engines/mbarrier.h"
#include "core/emu/engines/tcgen05_desc.h"
#include "core/emu/engines/tmem.h"
#include "core/emu/engines/tensor_map.h"
#include "core/emu/exec/insn.h"
#include "core/emu/ptx/module.h"

namespace mgpu::emu {

struct Cta;
struct Cluster;
struct Launch;

// Device allocations (cuMemAlloc): bounds-checked, never reused while the device lives.
// Host memory can be mapped too, at its own address (unified addressing, as cuMemHostRegister
// and cuMemAllocManaged give on a GPU): kernels then read and write the host's bytes directly.
class GlobalMemory {
 public:
  enum class Kind : std::uint8_t { Device, Managed, Registered };
  std::uint64_t alloc(std::uint64_t bytes);
  // Managed memory (cuMemAllocManaged): host memory the device owns, mapped at its address.
  std::uint64_t alloc_managed(std::uint64_t bytes);
  // Registered host memory (cuMemHostRegister): [host, host + bytes) mapped at its own address.
  // "" or why not (overlaps a mapping, or the device's own address ranges).
  std::string map_host(std::uint8_t* host, std::uint64_t bytes);
  bool unmap_host(std::uint64_t addr);  // false: no registration starts at addr
  bool free(std::uint64_t addr);        // Device or Managed allocations only
  // Pointer to [addr, addr + bytes) inside one allocation, or nullptr.
  std::uint8_t* find(std::uint64_t addr, std::uint64_t bytes);
  // The kind and base of the mapping holding addr, or false.
  bool kind_of(std::uint64_t addr, Kind& kind, std::uint64_t* base = nullptr) const;
  std::uint64_t allocated_bytes() const { return live_bytes_; }

 private:
  struct Block {
    std::uint64_t size;
    std::unique_ptr<std::uint8_t[]> data;  // null for registered host memory
    std::uint8_t* bytes;                   // data.get(), or the registered host bytes
    Kind kind;
  };
  std::map<std::uint64_t, Block> blocks_;
  std::uint64_t next_ = 0;
  std::uint64_t live_bytes_ = 0;
  std::uint64_t last_base_ = 0, last_size_ = 0;
  std::uint8_t* last_data_ = nullptr;
};

// Per shared-memory byte: who wrote it last, for the proxy-fence and uninitialized checkers.
// `epoch` is the CTA's fence.proxy.async count when the write happened (Cta::proxy_fence_gen):
// a fence executed later in any thread has a larger number.
struct SmemShadow {
  // kMbarrier: the byte is part of an initialized (not invalidated) mbarrier object.
  static constexpr std::uint8_t kInit = 1, kGeneric = 2, kMbarrier = 4;
  std::uint8_t flags = 0;
  std::uint16_t writer = 0;   // thread index in the CTA (generic writes); kRemoteWriter: another CTA's thread
  std::uint32_t epoch = 0;    // Cta::proxy_fence_gen at the time of the write
  static constexpr std::uint16_t kRemoteWriter = 0xFFFF;
};

// Why a lane waits (it re-executes its instruction when the condition may hold).
struct Wait {
  enum Kind : std::uint8_t { None, Converge, Bar, Mbar, WgmmaGroups, BulkGroups, ClusterBar, Registers, TmemAlloc, TmemPeer, TmemPairAlloc,
              TmemPermit };
  Kind kind = None;
  std::uint32_t object = 0;  // barrier id, or mbarrier shared::cluster address (TmemPeer: 1 for relinquish_alloc_permit)
  std::uint64_t value = 0;   // generation / parity / group count / columns
};

// An asynchronous operation in flight (TMA, bulk store, wgmma, tcgen05.mma / commit).
struct AsyncOp {
  enum Kind : std::uint8_t { TmaLoad, TmaStore, Wgmma, Tcgen05Mma, Tcgen05Commit };
  Kind kind;
  bool performed = false;
  Where issued;          // for reports
  virtual ~AsyncOp() = default;
  explicit AsyncOp(Kind k) : kind(k) {}
};

struct TmaLoadOp : AsyncOp {
  TmaLoadOp() : AsyncOp(TmaLoad) {}
  Cta* issuer = nullptr;
  TensorMap map;
  std::int32_t coords[5] = {0, 0, 0, 0, 0};
  std::uint32_t dst = 0;       // shared offset in each destination CTA
  std::uint32_t mbar = 0;      // shared offset of the mbarrier in each destination CTA
  std::uint32_t cta_mask = 0;  // destination CTA ranks
  // .cta_group::2: the bytes of destination r complete on the mbarrier of the CTA of r's pair
  // whose rank has bit 0 = pair_bit (PTX ISA 9.7.9.25: "the mbarrier ... can be in shared memory
  // of either the same CTA as the shared memory destination dstMem or in its peer-CTA").
  bool pair = false;
  int pair_bit = 0;
  // Per destination rank: the phase its mbarrier was in when the load was issued (kNoPhase: not
  // initialized then). Bytes must complete in that phase; landing in a later one means the phase
  // completed without them (its expect_tx did not count them).
  static constexpr std::uint64_t kNoPhase = ~std::uint64_t{0};
  std::uint64_t issue_phase[16];
  // Race detection: the issuing thread's clock at the issue (its own CTA's detector), for the
  // load's bytes landing in that CTA (check/race_detector.h, agents).
  RaceDetector::Clock issue_clock;
  int barrier_rank(int r) const { return pair ? (r & ~1) | pair_bit : r; }
};

struct BulkGroup;
struct TmaStoreOp : AsyncOp {
  TmaStoreOp() : AsyncOp(TmaStore) {}
  TensorMap map;
  std::int32_t coords[5] = {0, 0, 0, 0, 0};
  std::uint32_t src = 0;  // shared offset
  Cta* cta = nullptr;
  bool read_done = false;
  // Global-memory race detection (check/memory_model.h): the issuing thread's clock at the issue
  // (the store's writes know what it knew), and the clock its writes release at completion,
  // which a cp.async.bulk.wait_group (not .read) of the issuing thread acquires.
  RaceDetector::Clock issue_clock, done;
};

struct WgmmaOp : AsyncOp {
  WgmmaOp() : AsyncOp(Wgmma) {}
  const Insn* insn = nullptr;
  Cta* cta = nullptr;
  std::uint64_t desc_a = 0, desc_b = 0;
  bool a_in_regs = false;
  std::uint32_t arrived = 0, retired = 0;  // warps (bit = warp index in the warpgroup)
  bool scale_d[4] = {true, true, true, true};
  std::vector<float> d_in[4];    // accumulator values at issue, per warp, [reg][lane]
  std::vector<float> a_regs[4];  // A fragment values when A comes from registers
  std::vector<float> d_out[4];   // results, written to registers at retirement
  std::vector<std::int32_t> d_slots;  // accumulator register slots (same in every warp)
  // The CTA's fence.proxy.async state when the last warp issued it (Cta::proxy_fenced), and the
  // latest fence of any thread of the warpgroup then: the shared operands' generic writes must
  // be fenced before the issue, not merely before the scheduler performs it.
  std::vector<std::uint32_t> fenced;
  std::uint32_t issuer_fence = 0;
  std::shared_ptr<WgmmaOp> chain[4];  // the earlier op whose result is this op's D (same registers)
  int group = 0;                 // warpgroup index in the CTA
  // Shared bytes read, [lo, hi) for A (when in shared memory) and B, for the overlap checks.
  std::uint32_t smem_lo[2] = {0, 0}, smem_hi[2] = {0, 0};
  bool reads(std::uint32_t lo, std::uint32_t hi) const {
    for (int i = 0; i < 2; ++i)
      if (lo < smem_hi[i] && hi > smem_lo[i]) return true;
    return false;
  }
};

// tcgen05.mma (PTX ISA 9.7.16 "tcgen05.mma"): issued by one thread, performed at a moment of the
// scheduler's choosing after the same thread's earlier MMAs; it reads shared memory (and tensor
// memory, for A there) and writes tensor memory until a tcgen05.commit covering it arrives
// (only then may the program know it is done), so it stays in the cluster's in-flight list
// until that arrival.
struct Tcgen05MmaOp : AsyncOp {
  Tcgen05MmaOp() : AsyncOp(Tcgen05Mma) {}
  int group = 1;                        // cta_group::1 or ::2
  Cta* ctas[2] = {nullptr, nullptr};    // the CTA, or the pair (even rank first)
  Tcgen05InstrDesc idesc;
  MatrixDescriptor a, b;
  std::uint32_t d_addr = 0;             // D in tensor memory
  bool a_tmem = false;                  // A in tensor memory ([a-tmem]) instead of shared memory
  std::uint32_t a_addr = 0;             // its tensor memory address when a_tmem
  bool accumulate = true;               // enable-input-d
  std::shared_ptr<Tcgen05MmaOp> prev;   // the issuing thread's previous MMA while it is unperformed
  // Cta::proxy_fenced of each CTA at the issue, and the issuing thread's latest fence (its CTA
  // only): the operands must be fenced for the async proxy before the issue.
  std::vector<std::uint32_t> fenced[2];
  std::uint32_t issuer_fence = 0;
  const Cta* issuer = nullptr;
  std::uint32_t smem_lo[2] = {0, 0}, smem_hi[2] = {0, 0};  // A (when in shared memory) and B, in each CTA
  bool reads(const Cta* c, std::uint32_t lo, std::uint32_t hi) const {
    if (c != ctas[0] && c != ctas[1]) return false;
    for (int i = 0; i < 2; ++i)
      if (lo < smem_hi[i] && hi > smem_lo[i]) return true;
    return false;
  }
  int rows_per_cta() const { return idesc.m / group; }
  // D occupies lanes [0, rows_per_cta) and columns [col, col + N) of each CTA's tensor memory.
  bool writes_tmem(const Cta* c, std::uint32_t lane_lo, std::uint32_t lane_hi, std::uint32_t col_lo, std::uint32_t col_hi) const {
    if (c != ctas[0] && c != ctas[1]) return false;
    const std::uint32_t d0 = tmem_column(d_addr), d1 = d0 + static_cast<std::uint32_t>(idesc.n);
    const std::uint32_t l0 = tmem_lane(d_addr), l1 = l0 + static_cast<std::uint32_t>(rows_per_cta());
    return lane_lo < l1 && lane_hi > l0 && col_lo < d1 && col_hi > d0;
  }
  // A in tensor memory: K = 16 16-bit elements, two to a 32-bit column, so 8 columns from
  // a_addr over lanes [0, rows_per_cta) of each CTA (engines/tcgen05_engine.cc has the layout).
  static constexpr std::uint32_t kATmemColumns = 8;
  bool reads_tmem(const Cta* c, std::uint32_t lane_lo, std::uint32_t lane_hi, std::uint32_t col_lo, std::uint32_t col_hi) const {
    if (!a_tmem || (c != ctas[0] && c != ctas[1])) return false;
    const std::uint32_t a0 = tmem_column(a_addr), a1 = a0 + kATmemColumns;
    const std::uint32_t l0 = tmem_lane(a_addr), l1 = l0 + static_cast<std::uint32_t>(rows_per_cta());
    return lane_lo < l1 && lane_hi > l0 && col_lo < a1 && col_hi > a0;
  }
};

// tcgen05.commit (PTX ISA 9.7.16 "tcgen05.commit"): one arrival on an mbarrier (of each CTA of the mask with
// .multicast::cluster) once all prior async tcgen05 operations of the issuing thread completed.
struct Tcgen05CommitOp : AsyncOp {
  Tcgen05CommitOp() : AsyncOp(Tcgen05Commit) {}
  Cta* issuer = nullptr;
  std::vector<std::shared_ptr<Tcgen05MmaOp>> ops;  // the thread's MMAs since its previous commit
  std::shared_ptr<Tcgen05CommitOp> prev;           // the thread's previous commit while it has not arrived
  std::uint32_t mbar = 0;                          // shared offset in each receiving CTA
  std::uint32_t cta_mask = 0;                      // ranks receiving the arrival
  // Race detection: the issuing thread's clock at the commit; the arrival releases it into its
  // own CTA's mbarrier (what the thread did before the commit happens before the waiters go on).
  RaceDetector::Clock issue_clock;
};

struct BulkGroup {
  std::vector<std::shared_ptr<AsyncOp>> ops;
};

struct Warp {
  Cta* cta = nullptr;
  int index = 0;              // warp index in the CTA
  int lanes = 32;             // threads present (the last warp of a CTA may be partial)
  std::uint32_t alive = 0;    // lanes not exited
  std::uint32_t pc[32] = {};
  Wait wait[32];
  std::vector<std::uint64_t> regs;   // [slot * 32 + lane]
  std::vector<WgmmaOp*> inflight;      // per slot: the unretired wgmma whose accumulator it is
  std::vector<WgmmaOp*> a_held;        // per slot: the latest unretired wgmma reading it as an A fragment
  std::vector<std::uint8_t> local;     // per-thread local memory, [lane * local_bytes + offset]
  // wgmma bookkeeping (PTX ISA 9.7.15.6/7: groups are per warp)
  std::uint64_t wgmma_issued = 0;
  std::vector<std::shared_ptr<WgmmaOp>> wgmma_open;
  std::deque<std::vector<std::shared_ptr<WgmmaOp>>> wgmma_groups;
  // bulk async-groups of the lanes that issue TMA stores (per thread in the ISA)
  std::vector<std::shared_ptr<AsyncOp>> bulk_open[32];
  std::deque<BulkGroup> bulk_groups[32];
  // wgmma.fence (PTX ISA 9.7.15.6): reg_touched[slot] == reg_epoch when an ordinary instruction
  // read or wrote the register since the warp's last wgmma.fence; wgmma_fenced: any fence yet.
  std::vector<std::uint32_t> reg_touched;
  std::uint32_t reg_epoch = 1;
  bool wgmma_fenced = false;
  std::uint32_t setmaxnreg_count = 0;  // setmaxnreg instructions this warp executed
  std::uint64_t steps = 0;                // warp-instructions this warp has run
  // The last mbarrier.test_wait that found its phase incomplete (interpreter.h, spinning()).
  struct Poll {
    std::uint32_t pc = UINT32_MAX, object = 0;
    std::uint64_t value = 0, at = 0;  // parity or state; `steps` when it failed
    bool repeated = false;            // the failure before it was the same poll
  } poll;
  std::uint64_t cluster_arrival[32] = {};  // barrier.cluster: generation the lane arrived in, + 1 (0: not arrived)
  std::uint64_t cluster_acquired[32] = {}; // barrier.cluster generation when the lane's last wait returned (0: none)
  std::int32_t maxnreg = 0;
  // tcgen05 (PTX ISA 9.7.16 "tcgen05.ld", "tcgen05.wait"): destination registers of loads not yet
  // waited for (per slot), and the values each will receive, [slot] -> per-lane bits.
  std::vector<std::uint8_t> tmem_pending;
  std::vector<std::pair<int, std::vector<std::uint32_t>>> tmem_loads;
  // Per issuing lane: the last MMA, the MMAs no commit covers yet, the last commit.
  std::shared_ptr<Tcgen05MmaOp> tc_last_mma[32];
  std::vector<std::shared_ptr<Tcgen05MmaOp>> tc_uncommitted[32];
  std::shared_ptr<Tcgen05CommitOp> tc_last_commit[32];

  std::uint64_t& reg(int slot, int lane) { return regs[static_cast<std::size_t>(slot) * 32 + lane]; }
  int thread(int lane) const;  // thread index in the CTA
  int race_thread(int lane) const;  // its index in the cluster's race detector
  Launch& launch() const;
};

struct NamedBarrier {
  std::uint32_t arrived = 0;   // threads arrived in this generation
  std::uint32_t expected = 0;  // thread count of this generation (0: not started)
  std::uint64_t generation = 0;
  RaceDetector::Clock acc, released;  // race detection: the arrivals' clocks, the last generation's
  // bar.red: the reduction over this generation's arrivals, and the last generation's result.
  std::uint32_t red_popc = 0;
  bool red_and = true, red_or = false;
  std::uint64_t red_result = 0;
};

// Race detection's view of an mbarrier: the clocks released into the current phase, and those
// of the last completed phase (what a successful wait acquires).
struct MbarClocks {
  RaceDetector::Clock pending, completed;
};

// Whether an mbarrier's initialization is visible to the other CTAs of the cluster (PTX ISA
// 9.7.13.15.x mbarrier.init, 9.7.13.4 fence.mbarrier_init): the initializing thread makes it so
// with fence.mbarrier_init.release.cluster (or a stronger fence) before a barrier.cluster.arrive,
// or with a releasing barrier.cluster.arrive; a thread of another CTA may use the mbarrier once
// its barrier.cluster.wait has seen that arrival's phase complete.
struct MbarInit {
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  int thread = -1;                    // the initializing thread
  bool fenced = false;                // it executed fence.mbarrier_init (or stronger) since
  std::uint64_t published = kNever;   // the cluster barrier generation its publishing arrival was in
  bool visible_to(std::uint64_t acquired) const { return published != kNever && acquired > published; }
};

struct WarpGroupQueue {
  std::deque<std::shared_ptr<WgmmaOp>> ops;  // ops[i] is issue number base + i
  std::uint64_t base = 0;
};

struct Cta {
  Cluster* cluster = nullptr;
  int rank = 0;               // %cluster_ctarank
  int id[3] = {0, 0, 0};      // %ctaid
  int sm = 0;                 // the virtual SM it is resident on (%smid)
  std::vector<std::uint8_t> smem;
  std::vector<SmemShadow> shadow;
  std::vector<std::unique_ptr<Warp>> warps;
  std::unordered_map<std::uint32_t, MBarrier> mbarriers;  // by shared offset
  NamedBarrier bars[16];
  std::vector<WarpGroupQueue> warpgroups;
  std::uint32_t threads = 0;
  bool exited = false;
  std::int64_t registers_in_use = 0;  // setmaxnreg accounting
  // Per warpgroup, the setmaxnreg instructions (pc) its warps executed, in order: the i-th of
  // every warp must be the same instruction (PTX ISA setmaxnreg: .sync.aligned over the warpgroup).
  std::vector<std::vector<std::uint32_t>> setmaxnreg_log;
  // fence.proxy.async (PTX ISA 9.7.13.4.x, membar/fence .proxy): the fences executed in this CTA
  // so far, and per thread the value of that count right after its latest fence (0: none).
  std::uint32_t proxy_fence_gen = 0;
  std::vector<std::uint32_t> proxy_fenced;
  // Race detection (when the launch detects races): the cluster's detector, where this CTA's
  // threads start (race_thread_base + thread) and its shared memory (race_byte_base + offset).
  RaceDetector* races = nullptr;
  int race_thread_base = 0;
  std::uint32_t race_byte_base = 0;
  std::unordered_map<std::uint32_t, MbarClocks> mbar_clocks;
  std::unordered_map<std::uint32_t, MbarInit> mbar_init;  // by shared offset
  std::shared_ptr<TensorMemory> tmem;   // its SM's tensor memory (shared with co-resident CTAs)
  bool tmem_permit_relinquished = false;  // tcgen05.relinquish_alloc_permit executed (engines/tmem.h: the permit)
  std::uint64_t tc_collective = 0;        // cta_group::2 deallocs this CTA's warp performed
  std::uint64_t tc_relinquished = 0;      // cta_group::2 relinquish_alloc_permits this CTA's warp performed
  std::uint32_t tc_alloc_req = 0;         // columns a cta_group::2 alloc of this CTA waits for (0: none)
  int tc_alloc_result = -1;               // the column the pair's allocation got, for the waiting warp
  int tc_alloc_warp = -1;                 // the warp that asked
  // An mbarrier of this CTA completed a phase: what its arrivals released becomes acquirable.
  void mbar_phase_completed(std::uint32_t offset);

  Where where(const Warp* w = nullptr, int lane = -1, int pc = -1) const;
};

struct Cluster {
  Launch* launch = nullptr;
  int id[3] = {0, 0, 0};
  std::uint32_t serial = 0;   // its place in the launch's dispatch order (Launch::cluster_order)
  std::uint64_t steps = 0;    // warp-instructions its warps ran (the step limit is per cluster)
  std::vector<std::unique_ptr<Cta>> ctas;  // by rank
  // Async operations not yet retired: the scheduler performs those not `performed` at moments
  // of its choosing; the overlap checker looks at all of them (a performed wgmma or TMA store
  // may still be reading on a GPU until the wait that retires it).
  std::vector<std::shared_ptr<AsyncOp>> inflight;
  NamedBarrier barrier;  // barrier.cluster arrive/wait (its clocks: every CTA's arrivals)
  std::unique_ptr<RaceDetector> races;  // when the launch detects races (check/race_detector.h)
  std::uint32_t cluster_threads = 0;
};

// Warp-instructions one cluster may run before it is a StepLimit finding (an endless loop, a
// spin on a wait that never completes). The emulator runs about 3.3M a second of a plain loop,
// so a lone hanging cluster ends in some 6 s (n resident clusters spinning together: n times
// that); our matmul kernels need at most ~38K per cluster in `verify` and 1.3M at 4096^3 under
// `matmul --device emulate`, 15x below.
inline constexpr std::uint64_t kDefaultStepLimit = 20'000'000;

// MGPU_EMU_STEP_LIMIT overrides it (environment.h).

struct LaunchConfig {
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint32_t cluster[3] = {1, 1, 1};
  std::uint32_t dynamic_smem = 0;
  std::uint64_t seed = 1;
  std::uint64_t step_limit = kDefaultStepLimit;  // warp-instructions per cluster before StepLimit
  bool detect_races = false;                     // check/race_detector.h (costs memory and time)
  std::uint32_t resident_ctas = 0;               // CTAs per SM running together (0: from the launch's resources)
  std::uint32_t sms = 0;                         // virtual SMs (0: 148 for an sm_100a module, else 132)
};

// Why a launch of these dimensions cannot run, or "" when it can: CUDA's limits (grid x up to
// 2^31-1, y and z up to 65535; blocks up to 1024 x 1024 x 64 and 1024 threads; every
// dimension at least 1), and the most CTAs the virtual device takes in one launch
// (kMaxLaunchCtas: 2^20 empty CTAs run in seconds; more would take its memory and days).
inline constexpr std::uint64_t kMaxLaunchCtas = std::uint64_t{1} << 20;
std::string launch_shape_error(const LaunchConfig& c);

// Everything one launch needs; lives while the launch runs.
struct Launch {
  const ptx::Module* module = nullptr;
  const ptx::Kernel* kernel = nullptr;
  const std::vector<Insn>* code = nullptr;
  GlobalMemory* global = nullptr;
  std::vector<std::uint8_t> params;                     // the kernel parameter buffer
  std::vector<std::uint64_t> global_vars;               // device addresses of .global variables
  std::vector<std::uint32_t> shared_vars;               // shared offsets of .shared variables
  std::vector<std::uint32_t> local_vars;                // local offsets of per-thread variables
  std::uint32_t local_bytes = 0;
  std::uint32_t static_smem = 0;                        // dynamic shared memory starts here
  std::uint32_t smem_bytes = 0;                         // static + dynamic
  LaunchConfig config;
  std::mt19937_64 rng;
  std::vector<Report> reports;                          // non-fatal findings
  std::string printf_output;
  std::uint64_t steps = 0;          // warp-instructions
  std::uint64_t thread_steps = 0;   // thread-instructions (active lanes of each)
  std::vector<BankTally> banks_by_pc;  // shared-memory bank conflicts per instruction (sized at the first access)
  bool phase_completed = false;     // an instruction just completed an mbarrier phase
  int tcgen05_group = 0;            // the .cta_group of the first tcgen05 instruction run (1 or 2)
  // Clusters by serial (dispatch order): their %clusterid, for reports naming another cluster's
  // thread; and the global-memory model when races are detected (check/memory_model.h).
  std::vector<std::array<std::uint32_t, 3>> cluster_order;
  std::unique_ptr<MemoryModel> memory;
  std::uint32_t sms = 132;          // virtual SMs of this launch (LaunchConfig::sms)

  void report(ReportKind kind, Where where, std::string message);  // non-fatal: recorded once per pc
  [[noreturn]] void fault(ReportKind kind, Where where, std::string message);
};

}  // namespace mgpu::emu
