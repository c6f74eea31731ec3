// One mbarrier object's state machine (PTX ISA 9.7.13.15 "Parallel Synchronization and
// Communication Instructions: mbarrier"). A phase completes when its pending arrival count
// and its tx-count are both zero; completion starts the next phase with the pending count
// reset to the expected count. Contract: operations return what the ISA says they return and
// record misuse as text in `error` (the caller turns it into a report) instead of guessing.
#pragma once

#include <cstdint>
#include <string>

namespace mgpu::emu {

class MBarrier {
 public:
  // mbarrier.init: expected count in [1, 2^20 - 1] (PTX ISA: "count ... range [1, 2^20-1]").
  void init(std::uint32_t count);
  bool initialized() const { return initialized_; }
  void invalidate() { initialized_ = false; }

  // mbarrier.expect_tx / the expect-tx part of arrive.expect_tx: tx-count += bytes.
  bool expect_tx(std::uint32_t bytes, std::string& error);
  // complete-tx (by TMA/bulk copies): tx-count -= bytes; may complete the phase.
  bool complete_tx(std::uint32_t bytes, std::string& error);
  // arrive(count): pending -= count; may complete the phase. Returns the state token (the
  // phase the arrival counted in).
  std::uint64_t arrive(std::uint32_t count, std::string& error);
  // arrive_drop(count): an arrival that also lowers the expected count of this and every later
  // phase by count (a thread leaving the pipeline for good).
  std::uint64_t arrive_drop(std::uint32_t count, std::string& error);

  // test_wait / try_wait with a token or a parity: has the phase completed?
  bool phase_complete_parity(std::uint32_t parity) const { return (phase_ & 1u) != (parity & 1u); }
  bool phase_complete_token(std::uint64_t token) const { return phase_ != token; }

  std::uint64_t phase() const { return phase_; }
  std::uint32_t pending() const { return pending_; }
  std::uint32_t expected() const { return expected_; }
  std::int64_t tx_count() const { return tx_; }
  std::uint64_t completions() const { return phase_; }

 private:
  void maybe_complete();
  bool initialized_ = false;
  std::uint32_t expected_ = 0, pending_ = 0;
  std::int64_t tx_ = 0;
  std::uint64_t phase_ = 0;
};

}  // namespace mgpu::emu
