// Data races between the threads of a cluster on shared memory (each CTA's own and, through
// distributed shared memory, its peers') (opt-in: LaunchConfig::detect_races,
// MGPU_EMU_RACES=1, `mgpu-tune emulate --races`), in the manner of FastTrack: every thread has
// a vector clock; barriers (bar.sync / barrier.sync, barrier.cluster), mbarrier phases
// (arrive releases, a successful test_wait/try_wait acquires) and warp collectives (shfl.sync,
// vote, elect, bar.warp.sync, .aligned instructions) order threads; each shared byte remembers
// its last write and last read as (thread, clock, pc). Two accesses race when one is a write,
// they come from different threads, and the earlier is not ordered before the later -- except
// that lanes of one warp writing the same value to a byte in one instruction do not race with
// each other (on_write's `Write`).
// TMA loads take part as writers too: each lands as one of kAgents pseudo-threads (after the
// CTA's threads) whose clock is the issuing thread's at the issue, and it releases into the
// mbarrier it completes; so a thread reading the old bytes not ordered before the issue (a stage
// refilled while its readers are not done), or reading the new ones without acquiring that
// mbarrier's phase, races with the load. Two loads writing the same bytes are not compared here
// (the async overlap checker reports them while both are in flight).
// Contract: never reports ordered accesses (no false positives from the model itself); keeps
// one reader per byte, so it can miss a race with an earlier reader. Atomics and the async
// proxy's reads (TMA stores, wgmma) are not thread accesses here: the hazard checkers cover those.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mgpu::emu {

class RaceDetector {
 public:
  using Clock = std::vector<std::uint32_t>;  // one entry per thread of the CTA

  // One detector per cluster: `ctas` CTAs of `cta_stride` thread slots each (the block's threads
  // rounded up to whole warps), thread t of CTA rank r being r * cta_stride + t, and each CTA's
  // `smem_bytes` of shared memory at byte r * smem_bytes + offset; then kAgents per CTA.
  static constexpr int kAgents = 4;
  RaceDetector(int ctas, int cta_stride, std::size_t smem_bytes);
  bool is_agent(int thread) const { return thread >= cta_threads_; }
  int cta_stride() const { return cta_stride_; }

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
  struct Write {
    int thread;
    std::uint32_t offset, bytes;
    int pc;
    std::uint64_t insn = 0, unchanged = 0;
  };
  Conflict on_write(const Write& w);
  Conflict on_write(int thread, std::uint32_t offset, std::uint32_t bytes, int pc) { return on_write(Write{thread, offset, bytes, pc}); }
  Conflict on_read(int thread, std::uint32_t offset, std::uint32_t bytes, int pc);

  // Synchronization: a release folds the thread's clock into `sync` and advances the thread;
  // an acquire folds `sync` into the thread's clock.
  void release(int thread, Clock& sync);
  void acquire(int thread, const Clock& sync);
  Clock snapshot(int thread) const { return Clock(vc(thread), vc(thread) + threads_); }
  // The pseudo-thread that performs an async write issued when the issuer's clock was `issue`:
  // it knows what the issuer knew then (and its own past), nothing else.
  int begin_agent(const Clock& issue);
  Clock empty_clock() const { return Clock(static_cast<std::size_t>(threads_), 0); }
  // Threads that synchronize together (a warp collective): all of them end up ordered after all.
  // A join of the same lanes of one warp that repeats one with nothing in between (no access,
  // release or acquire by any of them) is skipped: it would only advance their own counters,
  // which orders nothing new. Every .aligned instruction joins its warp (wgmma's fence, MMAs,
  // commit and wait), so without this the k-loop spent most of its time merging clocks.
  void join(const std::vector<int>& threads);

 private:
  struct Epoch {
    std::uint32_t clock = 0;
    std::int32_t pc = -1;
    std::uint16_t thread_plus1 = 0;  // 0: no access yet
  };
  bool ordered_before(const Epoch& e, int thread) const;
  // Whether `x` writes byte i with the value it holds and `e`, that byte's last write, is by
  // another lane of the same warp-instruction.
  bool same_value_same_instruction(const Write& x, const Epoch& e, std::uint32_t i) const;
  std::uint32_t* vc(int thread) { return &vc_[static_cast<std::size_t>(thread) * threads_]; }
  const std::uint32_t* vc(int thread) const { return &vc_[static_cast<std::size_t>(thread) * threads_]; }

  int cta_stride_;
  int cta_threads_;                // the CTAs' thread slots; agents follow them
  int threads_;                    // cta_threads_ + the agents
  int next_agent_ = 0;
  int agents_;
  std::vector<std::uint32_t> vc_;  // threads x threads
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
