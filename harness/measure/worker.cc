#include "harness/measure/worker.h"

#include <sys/prctl.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/external_tool.h"
#include "core/signal_safe_pids.h"

namespace mgpu::harness {
namespace {

// The running workers, for kill_running_workers() in a signal handler.
core::SignalSafePids<256> g_workers;

}  // namespace

void kill_running_workers() { g_workers.signal(SIGTERM, /*group=*/false); }

WorkerProcess::WorkerProcess(std::vector<std::string> command, double timeout_s, std::vector<std::string> environment)
    : command_(std::move(command)), environment_(std::move(environment)), timeout_s_(timeout_s) {
  // A worker that dies while we write to it must not kill us with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
}

WorkerProcess::~WorkerProcess() { stop(false); }

void WorkerProcess::start() {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
    throw core::Error(core::ErrorKind::IO, fmt::format("cannot create worker pipes: {}", std::strerror(errno)));
  // Everything the child needs is built before fork(): between fork and exec a threaded
  // process may only make async-signal-safe calls.
  std::vector<char*> argv;
  for (std::string& s : command_) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const std::string& o : environment_) overridden |= o.compare(0, name.size() + 1, std::string(name) + "=") == 0;
    if (!overridden) env.emplace_back(entry);
  }
  for (const std::string& o : environment_) env.push_back(o);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw core::Error(core::ErrorKind::IO, fmt::format("cannot fork a worker: {}", std::strerror(errno)));
  if (pid == 0) {
    // The worker dies with the thread that started it: a `kill -9` of mgpu-tune (or the OOM
    // killer) left it running its trial alone for minutes, a core busy for nothing. (Each
    // worker is owned by the thread that starts it and stopped before that thread ends.)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent was gone before prctl took hold
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  pid_ = pid;
  g_workers.add(pid);
  stop_forwarded_ = false;
  to_child_ = in[1];
  from_child_ = out[0];
  pending_.clear();
}

void WorkerProcess::stop(bool kill_first) {
  if (pid_ < 0) return;
  if (to_child_ >= 0) close(to_child_);  // EOF on stdin: a healthy worker exits
  // SIGTERM before SIGKILL: the worker's handler kills the tool it may be running (ptxas in a
  // group of its own), which a SIGKILL of the worker alone would leave behind.
  if (kill_first) kill(pid_, SIGTERM);
  int status = 0;
  auto wait_ms = [&](int ms) {
    for (int i = 0; i < ms / 10 && waitpid(pid_, &status, WNOHANG) == 0; ++i) usleep(10000);
    return waitpid(pid_, &status, WNOHANG) != 0;
  };
  if (!wait_ms(kill_first ? 500 : 2000)) {
    kill(pid_, SIGTERM);
    if (!wait_ms(500)) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  if (from_child_ >= 0) close(from_child_);
  g_workers.remove(pid_);
  pid_ = -1;
  to_child_ = from_child_ = -1;
}

Measurement WorkerProcess::failure(TrialStatus status, const std::string& why) const {
  Measurement m;
  m.status = status;
  m.source = source_;
  m.message = why;
  return m;
}

Measurement WorkerProcess::run(const TrialRequest& request) {
  source_ = request.measurer;
  if (pid_ < 0) start();  // first use, or a replacement for a failed worker
  std::string line = nlohmann::json(request).dump() + "\n";
  if (write(to_child_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    stop(true);
    ++restarts_;
    return failure(TrialStatus::Fault, "the worker died before taking the request");
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
  for (;;) {
    if (size_t nl = pending_.find('\n'); nl != std::string::npos) {
      std::string reply = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      try {
        Measurement m = nlohmann::json::parse(reply).get<Measurement>();
        if (m.source.empty()) m.source = source_;  // a reply to a request the worker could not read
        // Its CUDA context is lost after a fault, and may be after an env_error (a launch ended by
        // a lowered step limit): start afresh next time.
        if (m.status == TrialStatus::Fault || m.status == TrialStatus::EnvError) {
          stop(true);
          ++restarts_;
        }
        return m;
      } catch (const std::exception& e) {
        stop(true);
        ++restarts_;
        return failure(TrialStatus::Fault, fmt::format("the worker's reply is garbled: {}", e.what()));
      }
    }
    int left_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left_ms <= 0) {
      stop(true);
      ++restarts_;
      return failure(TrialStatus::Timeout, fmt::format("no result within {:.1f} s; the worker was killed", timeout_s_));
    }
    // A stop of this process reaches the worker as a terminal's Ctrl-C would (a `kill -INT` of
    // this process alone would not): it ends the worker, and with it any tool it runs. Its
    // failure then says nothing about the config; the caller knows it was stopped.
    if (core::tool_stop_requested() && !stop_forwarded_) {
      kill(pid_, SIGTERM);
      stop_forwarded_ = true;
    }
    pollfd pfd{from_child_, POLLIN, 0};
    int ready = poll(&pfd, 1, std::min(left_ms, 100));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the deadline check above fires
    char buf[65536];
    ssize_t n = read(from_child_, buf, sizeof buf);
    if (n > 0) {
      pending_.append(buf, static_cast<size_t>(n));
      continue;
    }
    // EOF: the worker is gone. Say how it ended.
    int status = 0;
    waitpid(pid_, &status, 0);
    close(to_child_);
    close(from_child_);
    g_workers.remove(pid_);
    pid_ = -1;
    to_child_ = from_child_ = -1;
    ++restarts_;
    if (WIFSIGNALED(status))
      return failure(TrialStatus::Fault, fmt::format("the worker was killed by signal {} ({})", WTERMSIG(status),
                                                     strsignal(WTERMSIG(status))));
    return failure(TrialStatus::Fault, fmt::format("the worker exited with status {} mid-trial", WEXITSTATUS(status)));
  }
}

}  // namespace mgpu::harness
