// Data races between the threads of a cluster on shared memory (each CTA's own and, through
// distributed shared memory, its peers') (opt-in: LaunchConfig::detect_races,
// MGPU_EMU_RACES=1, `mgpu-tune emulate --races`), in the manner of FastTrack: every thread has
// a vector clock; barriers (bar.sync / barrier.sync, barrier.cluster), mbarrier phases
// (arrive releases, a successful test_wait/try_wait acquires) and bar.warp.sync (PTX ISA
// 9.7.13.2; no other warp collective -- shfl.sync, vote, elect, .aligned instructions -- orders
// memory, and the warp is not a scope, 8.5) order threads; each shared byte remembers
// its last write and last read as (thread, clock, pc). Two accesses race when one is a write,
// they come from different threads, and the earlier is not ordered before the later -- except
// that lanes of one warp writing the same value to a byte in one instruction do not race with
// each other (on_write's `Write`), and that two morally strong accesses (PTX ISA 8.7: both
// strong -- .relaxed/.acquire/.release/.volatile or atomic --, each of a scope that includes the
// other thread, overlapping completely) do not race (their `order`, memory_order.h).
// TMA loads take part as writers too: each lands as one of kAgents pseudo-threads (after the
// CTA's threads) whose clock is the issuing thread's at the issue, and it releases into the
// mbarrier it completes; so a thread reading the old bytes not ordered before the issue (a stage
// refilled while its readers are not done), or reading the new ones without acquiring that
// mbarrier's phase, races with the load. Two loads writing the same bytes are not compared here
// (the async overlap checker reports them while both are in flight). kGlobalAgents more per CTA
// stand for the async proxy's global-memory accesses (TMA stores writing global memory, TMA loads
// reading it; check/memory_model.h).
// Beyond the cluster: global memory synchronizes threads of different clusters (release/acquire
// patterns, fence.sc; check/memory_model.h). A thread's clock is this cluster's vector plus its
// Knowledge of other clusters (per cluster serial, that cluster's vector, shared and immutable),
// empty unless such synchronization happened -- so kernels whose clusters never synchronize
// pay nothing for it. A thread's proxy-fenced clock (what it knows was followed by a
// fence.proxy.async covering global memory on the way to it) is kept beside it, likewise only
// once such a fence ran.
// Contract: never reports accesses ordered by what it models (barriers, mbarrier phases,
// bar.warp.sync, release and acquire patterns, fence.sc); keeps one reader per byte, so it can
// miss a race with an earlier reader, and one write per byte, so a later morally strong write
// hides an earlier one (global memory keeps more: memory_model.h). Causality through observation
// order (PTX ISA 8.9.5: a strong read that observed a write orders what follows it at that
// address) is global memory's only: a weak access of a shared flag's location after a relaxed
// read that saw the flag is reported here (a false alarm). The async proxy's reads of shared
// memory (TMA stores, wgmma) are not thread accesses here: the hazard checkers cover those.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mgpu::emu {

class RaceDetector {
 public:
  // What a thread knows of other clusters: per cluster serial (ascending), that cluster's clock
  // (one entry per thread slot of its detector), and what of it is proxy-fenced (a
  // fence.proxy.async covering global memory lies between those events and the thread). Parts
  // are immutable and shared.
  using Part = std::shared_ptr<const std::vector<std::uint32_t>>;
  using Parts = std::vector<std::pair<std::uint32_t, Part>>;
  struct Knowledge {
    Parts parts, fenced;
    bool empty() const { return parts.empty() && fenced.empty(); }
    static const std::vector<std::uint32_t>* find(const Parts& ps, std::uint32_t serial);
    static void merge(Parts& into, std::uint32_t serial, const Part& p);
    void merge(const Knowledge& k);
  };
  // A synchronization object's clock (a barrier's, an mbarrier phase's) or a thread's snapshot.
  struct Clock {
    std::vector<std::uint32_t> v;       // one entry per thread slot of this cluster
    Knowledge remote;                   // other clusters
    std::vector<std::uint32_t> fenced;  // this cluster's proxy-fenced part (empty: none)
    bool empty() const { return v.empty(); }
    void clear() { *this = Clock{}; }
    std::uint32_t operator[](std::size_t i) const { return v[i]; }
  };

  // One detector per cluster: `ctas` CTAs of `cta_stride` thread slots each (the block's threads
  // rounded up to whole warps), thread t of CTA rank r being r * cta_stride + t, and each CTA's
  // `smem_bytes` of shared memory at byte r * smem_bytes + offset; then kAgents per CTA, then
  // kGlobalAgents per CTA. `serial` names the cluster among those of its launch.
  static constexpr int kAgents = 4;
  static constexpr int kGlobalAgents = 2;
  RaceDetector(int ctas, int cta_stride, std::size_t smem_bytes, std::uint32_t serial = 0);
  bool is_agent(int thread) const { return thread >= cta_threads_; }
  int cta_stride() const { return cta_stride_; }
  int slots() const { return threads_; }
  std::uint32_t serial() const { return serial_; }

  // A conflicting earlier access, or none.
  struct Conflict {
    bool found = false;
    bool earlier_was_write = false;
    int thread = -1;
    int pc = -1;
  };
  // One thread's write. `insn` names the warp-instruction it is part of (one id per execution of
  // an instruction by a warp; 0: none); bit i of `unchanged` says byte i already holds the value
  // written. Lanes of a warp writing a byte in one instruction are unordered (PTX ISA 8, memory
  // consistency model: no program order between threads); when they write the same value every
  // outcome the model allows (a read "returns the value committed by some write") is that value,
  // so such a pair is not reported. Different values, or another instruction, still race.
  // `order`: the access's memory order (memory_order.h; 0 for a weak access).
  struct Write {
    int thread;
    std::uint32_t offset, bytes;
    int pc;
    std::uint64_t insn = 0, unchanged = 0;
    std::uint16_t order = 0;
  };
  Conflict on_write(const Write& w);
  Conflict on_write(int thread, std::uint32_t offset, std::uint32_t bytes, int pc) { return on_write(Write{thread, offset, bytes, pc}); }
  Conflict on_read(int thread, std::uint32_t offset, std::uint32_t bytes, int pc, std::uint16_t order = 0);

  // Synchronization: a release folds the thread's clock into `sync` and advances the thread;
  // an acquire folds `sync` into the thread's clock.
  void release(int thread, Clock& sync);
  void acquire(int thread, const Clock& sync);
  Clock snapshot(int thread) const;
  // The pseudo-thread that performs an async write issued when the issuer's clock was `issue`:
  // it knows what the issuer knew then (and its own past), nothing else. begin_global_agent
  // takes one of the global-memory agents instead.
  int begin_agent(const Clock& issue);
  int begin_global_agent(const Clock& issue);
  Clock empty_clock() const { return Clock{std::vector<std::uint32_t>(static_cast<std::size_t>(threads_), 0), {}, {}}; }
  // Threads that synchronize together (bar.warp.sync): all of them end up ordered after all.
  // A join of the same lanes of one warp that repeats one with nothing in between (no access,
  // release or acquire by any of them) is skipped: it would only advance their own counters,
  // which orders nothing new (a bar.warp.sync in a loop with no memory access between).
  void join(const std::vector<int>& threads);

  // --- Beyond the cluster (check/memory_model.h) ---
  // Whether `thread` has seen event `clock` of thread slot `slot` of the cluster `serial`
  // (program order for its own slot), and whether a proxy fence lies on the way.
  bool knows(int thread, std::uint32_t serial, int slot, std::uint32_t clock) const;
  bool fenced_knows(int thread, std::uint32_t serial, int slot, std::uint32_t clock) const;
  std::uint32_t now(int thread) const { return vc(thread)[thread]; }
  // Everything `thread` knows, this cluster's part included (a release into global memory).
  Knowledge knowledge(int thread) const;
  void import(int thread, const Knowledge& k);  // an acquire of what another thread released
  void tick(int thread);                        // the thread's own clock moves on (after a release)
  void note_event(int thread) { ++events_[thread]; }  // an access the join skip must not overlook
  // fence.proxy.async covering global memory: what the thread knows is fenced from now on.
  void proxy_fence(int thread);

 private:
  struct Epoch {
    std::uint32_t clock = 0;
    std::int32_t pc = -1;
    std::uint16_t thread_plus1 = 0;  // 0: no access yet
    std::uint16_t order = 0;         // memory_order.h (0: weak)
  };
  bool ordered_before(const Epoch& e, int thread) const;
  // Whether the access of `order` by `thread` and the earlier one `e` at byte index `i` of the
  // access are morally strong (PTX ISA 8.7).
  bool morally_strong(std::uint16_t order, int thread, const Epoch& e, std::uint32_t i) const;
  // Whether `x` writes byte i with the value it holds and `e`, that byte's last write, is by
  // another lane of the same warp-instruction.
  bool same_value_same_instruction(const Write& x, const Epoch& e, std::uint32_t i) const;
  std::uint32_t* vc(int thread) { return &vc_[static_cast<std::size_t>(thread) * threads_]; }
  const std::uint32_t* vc(int thread) const { return &vc_[static_cast<std::size_t>(thread) * threads_]; }
  int begin_agent_slot(int a, const Clock& issue);

  int cta_stride_;
  int cta_threads_;                // the CTAs' thread slots; agents follow them
  int threads_;                    // cta_threads_ + the agents
  std::uint32_t serial_;
  int next_agent_ = 0, next_global_agent_ = 0;
  int agents_, global_agents_;
  std::vector<std::uint32_t> vc_;  // threads x threads
  std::vector<Knowledge> remote_;  // per thread: what it knows of other clusters
  std::vector<std::vector<std::uint32_t>> fenced_;  // per thread: its proxy-fenced clock of this cluster (empty: none)
  std::vector<std::uint64_t> events_;      // per thread: accesses, releases and acquires so far
  std::vector<std::uint64_t> joined_at_;   // per thread: events_ right after its last join
  std::vector<std::uint64_t> joined_key_;  // per thread: that join's warp and lanes (0: none)
  std::vector<Epoch> write_, read_;
  struct Span {
    int thread;
    std::uint32_t lo, hi;
  };
  std::uint64_t insn_ = 0;          // the warp-instruction whose writes insn_writes_ holds
  std::vector<Span> insn_writes_;
};

}  // namespace mgpu::emu
