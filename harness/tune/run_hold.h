// What a tuning run holds in the database while it works: its run row (open until finish())
// and the claim of the config under way. A run that leaves by an exception (a full disk, a row
// the store refuses) gives both back, best effort: the error already raised is the one to
// report, and a dead process's claims would be reclaimed later anyway.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "results/claims.h"
#include "results/store.h"

namespace mgpu::harness {

class RunHold {
 public:
  RunHold(results::Store& store, results::Claims& claims, std::int64_t run) : store_(store), claims_(claims), run_(run) {}
  RunHold(const RunHold&) = delete;
  RunHold& operator=(const RunHold&) = delete;
  ~RunHold() {
    if (finished_) return;
    try {
      release();
      store_.end_run(run_);
    } catch (const std::exception&) {
    }
  }
  void hold(const std::string& config) { held_ = config; }
  void release() {
    if (held_.empty()) return;
    claims_.release(held_);
    held_.clear();
  }
  void finish() {
    store_.end_run(run_);
    finished_ = true;
  }

 private:
  results::Store& store_;
  results::Claims& claims_;
  std::int64_t run_;
  std::string held_;
  bool finished_ = false;
};

}  // namespace mgpu::harness
