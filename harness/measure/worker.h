// Crash containment: trials run in a worker process (`mgpu-tune worker`) that this side
// drives over a pipe, one JSON line per request and per reply. Contract: run() returns a
// Measurement for every request -- the worker's reply, or, when the worker crashed (fault,
// with the signal named), hung past `timeout_s` (timeout; the worker is killed), or exited
// (fault), a Measurement saying so. A failed worker is replaced by a fresh one on the next
// request, so one bad config never ends a run.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "harness/measure/measurement.h"
#include "harness/measure/trial_request.h"

namespace mgpu::harness {

// Sends SIGTERM to every worker process started here that is still running (each kills its
// tools and dies). Async-signal-safe: a second stop signal, which ends this process at once,
// calls it so that no worker runs on, orphaned, after the command has ended.
void kill_running_workers();

class WorkerProcess {
 public:
  // `command`: the worker's argv, e.g. {"/path/mgpu-tune", "worker"}.
  // `environment`: "NAME=value" entries set for the worker on top of this process's own (e.g.
  // MGPU_CUDA_DRIVER for a virtual-device worker beside a GPU one).
  explicit WorkerProcess(std::vector<std::string> command, double timeout_s = 60.0,
                         std::vector<std::string> environment = {});
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  Measurement run(const TrialRequest& request);
  int restarts() const { return restarts_; }
  pid_t pid() const { return pid_; }

 private:
  void start();
  void stop(bool kill_first);
  Measurement failure(TrialStatus status, const std::string& why) const;

  std::vector<std::string> command_;
  std::vector<std::string> environment_;
  double timeout_s_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  bool stop_forwarded_ = false;  // this process's stop was passed on to the worker (SIGTERM)
  std::string pending_;  // bytes read past the last reply line
  int restarts_ = 0;
  std::string source_;
};

}  // namespace mgpu::harness
