#include "core/emu/engines/mbarrier.h"

namespace mgpu::emu {

void MBarrier::init(std::uint32_t count) {
  initialized_ = true;
  expected_ = pending_ = count;
  tx_ = 0;
  phase_ = 0;
}

void MBarrier::maybe_complete() {
  if (pending_ == 0 && tx_ == 0) {
    ++phase_;
    pending_ = expected_;
  }
}

bool MBarrier::expect_tx(std::uint32_t bytes, std::string& error) {
  // PTX ISA: tx-count is in [-(2^20 - 1), 2^20 - 1]; expect-tx increments it.
  tx_ += bytes;
  if (tx_ > (1 << 20) - 1) {
    error = "tx-count " + std::to_string(tx_) + " exceeds 2^20-1";
    return false;
  }
  return true;
}

bool MBarrier::complete_tx(std::uint32_t bytes, std::string& error) {
  tx_ -= bytes;
  // PTX ISA 9.7.13.15.2: tx-count is in [-(2^20 - 1), 2^20 - 1] at both ends.
  if (tx_ < -((1 << 20) - 1)) {
    error = "tx-count " + std::to_string(tx_) + " is below -(2^20-1)";
    return false;
  }
  // A negative tx-count is legal while arrivals are pending (bytes may land before the
  // expect-tx that announces them); once every arrival is in, nothing can balance it.
  if (tx_ < 0 && pending_ == 0) {
    error = "phase " + std::to_string(phase_) + " received " + std::to_string(-tx_) +
            " more bytes than its expect_tx announced";
    tx_ = 0;
  }
  maybe_complete();
  return error.empty();
}

std::uint64_t MBarrier::arrive(std::uint32_t count, std::string& error) {
  std::uint64_t token = phase_;
  if (count > pending_) {
    error = "arrive of " + std::to_string(count) + " with only " + std::to_string(pending_) +
            " arrivals pending in phase " + std::to_string(phase_) + " (expected count " +
            std::to_string(expected_) + ")";
    pending_ = 0;
  } else {
    pending_ -= count;
  }
  if (pending_ == 0 && tx_ < 0) {
    error = "phase " + std::to_string(phase_) + " received " + std::to_string(-tx_) +
            " more bytes than its expect_tx announced (tx-count " + std::to_string(tx_) + ")";
    tx_ = 0;
  }
  maybe_complete();
  return token;
}

std::uint64_t MBarrier::arrive_drop(std::uint32_t count, std::string& error) {
  if (count > expected_) {
    error = "arrive_drop of " + std::to_string(count) + " with an expected count of only " + std::to_string(expected_);
    count = expected_;
  }
  expected_ -= count;
  return arrive(count, error);
}

}  // namespace mgpu::emu
