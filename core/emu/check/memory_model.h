// Global memory between all threads of a launch, by the PTX memory consistency model (PTX ISA 8):
// data races on global memory between threads of any CTAs (and of one CTA), and the
// synchronization that memory operations themselves establish -- release/acquire patterns
// through a location (global, or shared: the same rules hold there), fence.sc order -- which
// orders shared-memory accesses too. Opt-in with the race detector (LaunchConfig::detect_races).
//
// The model, as the ISA states it:
//   - Operation types (8.4): ld/st are weak unless .relaxed/.acquire/.release/.volatile/.mmio
//     (strong; .volatile and .mmio are relaxed at .sys scope); atom and red are strong, .relaxed
//     and .gpu unless they say otherwise (check/memory_order.h). An atomic is a write only "if
//     [it results] in a write": an atom.cas whose comparison fails is a (strong) read.
//   - Morally strong (8.7): two operations each strong, each of a scope that includes the other
//     thread (8.5: .cta = the same CTA, .cluster = the same cluster, .gpu/.sys = everyone here),
//     through the same proxy, overlapping completely. Two conflicting accesses (overlapping bytes,
//     one a write, different threads) that are neither morally strong nor ordered by causality
//     order are a data race (8.7.1): reported as `race`. Each byte keeps its last write and, once
//     it is written strongly (or a write does not order the one before it), up to kHistory
//     earlier ones that a later access must still be ordered after -- a later morally strong
//     write does not hide an earlier one (Side).
//   - Observation and causality (8.9.2, 8.9.5): a strong read (or an atomic's read) that is
//     morally strong with the byte's last write reads its value, so that write -- and the writes
//     before it whose value atomics each read in turn -- precede it in observation order; "X
//     precedes Z in observation order, and Z precedes Y in proxy-preserved base causality order"
//     (Z and Y to the same address, generic proxy) puts X before Y in causality order. So a weak
//     access after a relaxed spin that saw a flag, at the flag's location, does not race with
//     the flag's store (taken as the same location: address and size); other locations need a
//     release and acquire pattern.
//   - Release and acquire patterns (8.8): a release operation on M, a release operation on M
//     followed by a strong write on M ("st.release [M]; st.relaxed [M]"), or a release/acq_rel/sc
//     fence followed by a strong write on M; an acquire operation on M, a strong read of M
//     followed by an acquire operation on M, or a strong read of M followed by an
//     acquire/acq_rel/sc fence. A release pattern synchronizes with an acquire
//     pattern when the acquire's read observes the release's write, directly or through atomic
//     read-modify-writes of M (observation order, 8.9.2), and the first operation of one and
//     the last of the other are morally strong (8.9.4). What the release makes visible is what
//     its thread knew at its first instruction; the acquire makes it visible after its last
//     (so a fence's knowledge, or the knowledge a strong read observed, is taken at the fence).
//     red's read never forms an acquire pattern (8.8).
//   - The lanes of a warp are threads (8.9.1: program order "does not relate operations from
//     different threads"; 8.5: "the warp is not a scope"), and one instruction's lanes access a
//     location in no specified order: a lane's read never acquires what another lane of the same
//     instruction released there, nor observes its write (the device runs lanes in ascending
//     order; in another execution that lane comes first).
//   - fence.sc (8.9.3, 8.9.4): morally strong fence.sc operations synchronize in the order they
//     run; membar.{cta,gl,sys} is fence.sc.{cta,gpu,sys} (membar/fence).
//   - Barriers, mbarriers, cluster barriers and bar.warp.sync ("also guarantee memory ordering
//     among threads participating in barrier", 9.7.13.2) order global accesses too (the
//     cluster's RaceDetector clocks); no other warp collective does (shfl.sync, vote.sync,
//     elect.sync and .aligned instructions only wait for each other).
//   - ld.global.nc (8.1: "The memory consistency model does not apply to texture (including
//     ld.global.nc)"; ld.global.nc: "the data should be read-only within the kernel's process"):
//     reading a byte any access of the launch wrote through it is `non-coherent-read`, whatever
//     orders the two; it is judged as a weak read besides.
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
// (64 MiB for a 4096 x 4096 f32 output), 32 per byte generic accesses touch. Side records (a
// byte's earlier writes and their observers) exist only for bytes written strongly, observed by
// a strong read, or written by unordered threads (a flag, a counter), found through a bit of the
// byte's write entry; weak stores of data that are each written once cost nothing more.
//
// Not covered: a race with any reader but a byte's last one (one reader per byte is kept); a
// race with a write more than kHistory (8) writes back of its byte (the oldest are forgotten);
// a TMA load's read of bytes nothing in the launch accessed before, racing with a later write of
// another thread; a generic read followed by an async write of the same bytes (judged by
// causality only, no proxy fence asked); fences with .sync_restrict/.op_restrict (they order no
// global memory; treated as not synchronizing); mixed-size strong accesses are compared byte by
// byte (a partial overlap is never morally strong), and "the same address" of 8.9.5 is taken as
// the same location, so a mixed-size access after an observing read is judged by causality
// alone (stricter than the letter); two async accesses by the same pseudo-thread slot (reused
// round-robin) are not compared; lanes of one instruction run in ascending order, and only
// synchronization and observation through a location are kept from depending on it (a race
// that needs another lane order to show is not sought); ld.global.nc is checked only against
// the writes the shadow holds (the race detector on); shared memory (RaceDetector) keeps one
// write per byte and has no observation rule.
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
    bool read = false, write = false;  // atom: both (a failed cas: read); red, st: write; ld: read
    bool atomic = false;               // atom or red: a write that read the value it replaces (8.9.2)
    std::uint16_t order = 0;           // order_bits (size = the element size); kAsync for TMA
    std::uint64_t insn = 0;            // the warp-instruction (same-value rule, RaceDetector::Write)
    std::uint64_t unchanged = 0;       // bit i: byte i already holds the value written
    bool existing_pages_only = false;  // a TMA load's read: remembered only where shadowed already
    std::uint32_t elem = 0;            // the size of one element (8.2.4), 0: the whole access -- a byte's "address" (8.9.5)
  };
  struct Conflict {
    enum Kind : std::uint8_t { None, Race, ProxyFence, NonCoherent };
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
  // The first byte of [addr, addr + bytes) that something in this launch wrote, with its last
  // write (kind NonCoherent), or none: what an ld.global.nc must not read (8.1).
  Conflict written(std::uint64_t addr, std::uint32_t bytes) const;
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
  // `insn` names the warp-instruction (0: none): its lanes are threads whose same-location
  // accesses run in no specified order, so a lane's read never takes what another lane of the
  // same instruction released there.
  void strong_access(const Thread& t, std::uint64_t key, std::uint32_t bytes, const MemOrder& o, bool reads, bool writes, bool rmw,
                     std::uint64_t insn = 0);
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
  // A release pattern in a location's release sequence, and the warp-instruction whose write put
  // it there (0: an earlier one).
  struct Link {
    Shared c;
    std::uint64_t insn = 0;
  };
  struct SyncVar {
    std::uint32_t bytes = 0;
    std::vector<Link> from;  // the release sequence the location's current value heads
  };
  // A release operation on a location, which the thread's later strong writes of it carry too
  // (8.8: "a release or acquire-release operation on M followed by a strong write on M").
  struct Released {
    std::uint64_t key;
    std::uint32_t bytes;
    Shared c;
  };
  struct ThreadState {
    Shared frontier;                              // its last release fence (null: none)
    std::vector<Released> released;               // its last release operation per location
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
  static void link(SyncVar& v, const Shared& add, std::uint64_t insn);
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
  // A conflict of `kind` with the access `e` remembers, at byte `addr`.
  static Conflict conflict_with(Conflict::Kind kind, bool earlier_was_write, const Epoch& e, std::uint64_t addr);

  // More than the last write of a byte, where it matters (bytes written strongly): its earlier
  // writes that a later access must still be checked against, and the strong reads that observed
  // each. A byte has them when its write epoch carries kSide (a bit no order_bits field uses).
  static constexpr std::uint16_t kSide = 1u << 15;
  static constexpr std::size_t kHistory = 8;  // writes remembered per byte (the oldest go first)
  struct Observer {                           // a strong read that observed the write (8.9.2)
    std::uint32_t serial_plus1;
    std::uint32_t clock;
    std::uint16_t slot;
    std::uint16_t size;                       // its element's size and address: "the same address" (8.9.5),
    std::uint64_t addr;                       // taken as the same location (both: no mixed sizes)
  };
  struct Record {
    Epoch e;                                  // without kSide
    bool linked = false;                      // an atomic whose read observed the record before it (8.9.2)
    std::uint64_t insn = 0;                   // the warp-instruction that wrote it (0: unknown or none)
    std::vector<Observer> seen;
  };
  struct Side {
    std::vector<Record> writes;               // oldest first; the last is the byte's current write
  };
  Side& make_side(std::uint64_t byte, const Epoch& current, std::uint64_t insn);

  int stride_;
  std::unordered_map<std::uint64_t, Page> pages_;
  std::uint64_t last_number_ = ~0ull;
  Page* last_page_ = nullptr;
  std::unordered_map<std::uint64_t, Side> side_;  // by byte address
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
