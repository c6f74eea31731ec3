// Global memory between all threads of a launch, by the PTX memory consistency model (PTX ISA 8):
// data races on global memory between threads of any CTAs (and of one CTA), and the
// synchronization that memory operations themselves establish -- release/acquire patterns
// through a location (global, or shared: the same rules hold there), fence.sc order -- which
// orders shared-memory accesses too. Opt-in with the race detector (LaunchConfig::detect_races).
//
// The model, as the ISA states it:
//   - Operation types (8.4): ld/st are weak unless .relaxed/.acquire/.release/.volatile/.mmio
//     (strong; .volatile and .mmio are relaxed at .sys scope); atom and red are strong, .relaxed
//     and .gpu unless they say otherwise (check/memory_order.h).
//   - Morally strong (8.7): two operations each strong, each of a scope that includes the other
//     thread (8.5: .cta = the same CTA, .cluster = the same cluster, .gpu/.sys = everyone here),
//     through the same proxy, overlapping completely. Two conflicting accesses (overlapping bytes,
//     one a write, different threads) that are neither morally strong nor ordered by causality
//     order are a data race (8.7.1): reported as `race`.
//   - Release and acquire patterns (8.8): a release operation on M, or a release/acq_rel/sc
//     fence followed by a strong write on M; an acquire operation on M, or a strong read of M
//     followed by an acquire/acq_rel/sc fence. A release pattern synchronizes with an acquire
//     pattern when the acquire's read observes the release's write, directly or through atomic
//     read-modify-writes of M (observation order, 8.9.2), and the first operation of one and
//     the last of the other are morally strong (8.9.4). What the release makes visible is what
//     its thread knew at its first instruction; the acquire makes it visible after its last
//     (so a fence's knowledge, or the knowledge a strong read observed, is taken at the fence).
//     red's read never forms an acquire pattern (8.8).
//   - fence.sc (8.9.3, 8.9.4): morally strong fence.sc operations synchronize in the order they
//     run; membar.{cta,gl,sys} is fence.sc.{cta,gpu,sys} (membar/fence).
//   - Barriers, mbarriers, cluster barriers and warp collectives order global accesses too
//     (the cluster's RaceDetector clocks).
//   - The async proxy (8.6, cp.async.bulk): a TMA load reading global bytes that a generic store
//     wrote needs, besides causality order from that store to the load's issue, a
//     fence.proxy.async covering global memory (no state space, or .global) somewhere on that
//     path -- after the store in the writer, after the synchronization in the issuer, or in a
//     thread in between: otherwise `missing-proxy-fence`. A TMA store's writes are known to
//     others only through its completion (cp.async.bulk.wait_group without .read, which the
//     issuing thread then passes on); the completion's implicit generic-async proxy fence makes
//     them readable by generic loads then. Writes of TMA stores and TMA loads' reads are
//     accesses of kGlobalAgents pseudo-threads of the issuing cluster (check/race_detector.h).
//
// How it scales: vector clocks are per cluster (RaceDetector, as for shared memory), plus per
// thread what it learnt of other clusters (Knowledge: a shared, immutable clock per cluster
// serial), which stays empty while clusters never synchronize through memory -- today's matmul
// kernels, whose only global writes are TMA stores of disjoint tiles, pay for one shadow entry
// per 16 bytes they store and nothing per synchronization. Global memory is shadowed lazily in
// 4 KiB pages, only where the launch accesses it: a 16-byte entry (last write; another for the
// last read) per byte where generic accesses touch the page, per 16-byte granule where only the
// async proxy's whole granules do (TMA boxes; their rows are 16-byte aligned multiples of 16);
// a TMA load's read is remembered only on pages that already have a shadow (something in this
// launch accessed them generically or stored to them), so the operands a kernel only reads cost
// nothing. At the verification shapes (grids of up to ~16 CTAs) the clocks are the cluster
// detectors' own; a launch's global shadow is at most one byte per byte its TMA stores write
// (64 MiB for a 4096 x 4096 f32 output), 32 per byte generic accesses touch.
//
// Not covered: a race with any reader but a byte's last one (one reader per byte is kept); a
// TMA load's read of bytes nothing in the launch accessed before, racing with a later write of
// another thread; a generic read followed by an async write of the same bytes (judged by
// causality only, no proxy fence asked); fences with .sync_restrict/.op_restrict (they order no
// global memory; treated as not synchronizing); the release sequence of "a release operation
// on M followed by a strong write on M" (only the release itself synchronizes); mixed-size
// strong accesses are compared byte by byte (a partial overlap is never morally strong); two
// async accesses by the same pseudo-thread slot (reused round-robin) are not compared.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/emu/check/memory_order.h"
#include "core/emu/check/race_detector.h"

namespace mgpu::emu {

class MemoryModel {
 public:
  // `cta_stride`: thread slots per CTA in every cluster's detector (the same in a launch).
  explicit MemoryModel(int cta_stride) : stride_(cta_stride) {}

  // A thread (or agent) of a cluster.
  struct Thread {
    RaceDetector* rd;
    int slot;
  };
  struct Access {
    std::uint64_t addr = 0;
    std::uint32_t bytes = 0;
    int pc = -1;
    bool read = false, write = false;  // atom: both; red, st: write; ld: read
    std::uint16_t order = 0;           // order_bits (size = the element size); kAsync for TMA
    std::uint64_t insn = 0;            // the warp-instruction (same-value rule, RaceDetector::Write)
    std::uint64_t unchanged = 0;       // bit i: byte i already holds the value written
    bool existing_pages_only = false;  // a TMA load's read: remembered only where shadowed already
  };
  struct Conflict {
    enum Kind : std::uint8_t { None, Race, ProxyFence };
    Kind kind = None;
    bool earlier_was_write = false;
    std::uint32_t serial = 0;  // the earlier access: its cluster, thread slot, pc and order
    int slot = -1;
    int pc = -1;
    std::uint16_t order = 0;
    std::uint64_t addr = 0;    // the first byte in conflict
    bool found() const { return kind != None; }
  };
  // Checks a global access against the earlier accesses of its bytes and remembers it. The first
  // conflict comes back (one per access).
  Conflict access(const Thread& t, const Access& a);
  // Whether any byte of [addr, addr + bytes) is shadowed (a TMA load's read would be remembered).
  bool shadowed(std::uint64_t addr, std::uint64_t bytes) const;
  int cta_rank(int slot, const RaceDetector& rd) const { return rd.is_agent(slot) ? -1 : slot / stride_; }
  int stride() const { return stride_; }

  // --- Synchronization through a location (8.8, 8.9.2, 8.9.4) ---
  // A key names a location: a global address, or shared_key() for shared memory.
  static std::uint64_t shared_key(std::uint32_t serial, int rank, std::uint32_t offset) {
    return (1ull << 63) | (static_cast<std::uint64_t>(serial) << 22) | (static_cast<std::uint64_t>(rank) << 18) | offset;
  }
  // A strong access of `bytes` at `key` by `t`, after its race check: the read part first
  // (acquire, or remember for a later fence; `reads` false for red), then the write part (rmw:
  // an atom/red continues the release sequence; any other write starts a new one). A weak write
  // (or an async one) ends the release sequences of the locations it overlaps: invalidate().
  void strong_access(const Thread& t, std::uint64_t key, std::uint32_t bytes, const MemOrder& o, bool reads, bool writes, bool rmw);
  void invalidate(std::uint64_t key, std::uint32_t bytes);
  // fence.sc / fence.acq_rel / fence.acquire / fence.release / membar at `scope` by `t`.
  void fence(const Thread& t, Scope scope, bool acquire, bool release, bool sc);

 private:
  struct Contribution {
    RaceDetector::Knowledge k;  // what the releasing thread knew at its pattern's first instruction
    std::uint32_t serial = 0;   // the releasing thread's cluster and CTA rank
    int rank = 0;
    Scope scope = Scope::Gpu;   // the narrower of its first operation's and its write's scope
  };
  using Shared = std::shared_ptr<const Contribution>;
  struct SyncVar {
    std::uint32_t bytes = 0;
    std::vector<Shared> from;  // the release sequence the location's current value heads
  };
  struct ThreadState {
    Shared frontier;                              // its last release fence (null: none)
    // Observed by strong reads that were no acquire: for an acquire fence, or a later acquire
    // operation on the same location (8.8, second and third acquire forms).
    struct Pending {
      Shared c;
      Scope scope;
      std::uint64_t key;
    };
    std::vector<Pending> pending;
    std::vector<Shared> imported;                 // recently imported (a spin repeats them; held, so no address is reused)
  };
  // The scope level two threads share: .cta in one CTA, .cluster in one cluster, else .gpu.
  static Scope common(std::uint32_t s1, int r1, std::uint32_t s2, int r2) {
    return s1 != s2 ? Scope::Gpu : r1 != r2 ? Scope::Cluster : Scope::Cta;
  }
  bool compatible(const Contribution& c, const Thread& t, Scope scope) const;
  ThreadState& state(const Thread& t);
  void import(const Thread& t, const Shared& c);
  Shared contribution(const Thread& t, Scope scope, RaceDetector::Knowledge k) const;

  struct Epoch {
    std::uint32_t clock = 0;
    std::uint32_t serial_plus1 = 0;  // 0: no access
    std::int32_t pc = -1;
    std::uint16_t slot = 0;
    std::uint16_t order = 0;
  };
  static constexpr unsigned kPageBits = 12;
  static constexpr std::uint32_t kGranule = 16;
  // A 4 KiB page's last write and last read: per 16-byte granule until an access other than
  // whole granules of the async proxy touches it, then per byte (fine).
  struct Page {
    std::unique_ptr<Epoch[]> write, read;
    bool fine = false;
  };
  Page* page(std::uint64_t number, bool create);
  static void make_fine(Page& p);
  bool morally_strong(const Thread& t, std::uint16_t order, const Epoch& e) const;

  int stride_;
  std::unordered_map<std::uint64_t, Page> pages_;
  std::uint64_t last_number_ = ~0ull;
  Page* last_page_ = nullptr;
  std::map<std::uint64_t, SyncVar> vars_;
  std::unordered_map<std::uint64_t, ThreadState> threads_;  // by serial << 32 | slot
  std::unordered_map<std::uint64_t, RaceDetector::Knowledge> sc_;  // fence.sc order per scope instance
  // The warp-instruction whose global writes insn_writes_ holds (same-value rule).
  struct Span {
    std::uint32_t serial;
    int slot;
    std::uint64_t lo, hi;
  };
  std::uint64_t insn_ = 0;
  std::vector<Span> insn_writes_;
};

}  // namespace mgpu::emu
