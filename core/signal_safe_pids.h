// A fixed table of child process ids that a signal handler may read: lock-free atomic slots, no
// allocation. Contract: add() takes a free slot (false when all N are taken: the child still
// runs, only a signal-time kill misses it); remove() frees the slot holding that pid; signal()
// sends `sig` to every pid held -- to its process group when `group` -- and is async-signal-safe.
// Used for the external tools (core/external_tool.cc) and the measurement workers
// (harness/measure/worker.cc) that a stop must not leave running.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>

namespace mgpu::core {

template <int N>
class SignalSafePids {
 public:
  static_assert(std::atomic<pid_t>::is_always_lock_free);

  bool add(pid_t pid) {
    for (std::atomic<pid_t>& s : slots_) {
      pid_t expected = 0;
      if (s.compare_exchange_strong(expected, pid)) return true;
    }
    return false;
  }
  void remove(pid_t pid) {
    for (std::atomic<pid_t>& s : slots_) {
      pid_t expected = pid;
      if (s.compare_exchange_strong(expected, 0)) return;
    }
  }
  void signal(int sig, bool group) const {
    for (const std::atomic<pid_t>& s : slots_)
      if (const pid_t pid = s.load(); pid > 0) ::kill(group ? -pid : pid, sig);
  }

 private:
  std::atomic<pid_t> slots_[N] = {};
};

}  // namespace mgpu::core
