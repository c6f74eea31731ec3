#include "harness/stop_signals.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <ctime>
#include <cstring>

#include <fmt/format.h>

#include "core/external_tool.h"
#include "harness/cli.h"
#include "harness/measure/worker.h"

namespace mgpu::harness {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};

// What a process ending at a stop signal must not leave running: its tools and its workers.
// Async-signal-safe.
void end_children() {
  core::kill_running_tools();
  kill_running_workers();  // they would run on, orphaned, and print into the terminal
}

std::atomic<long long> g_first_ns{0};  // when the first stop came (CLOCK_MONOTONIC)
std::atomic<pid_t> g_first_sender{0};  // its sender, when kill() sent it (SI_USER); else 0

long long monotonic_ns() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe (POSIX.1-2008)
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

extern "C" void on_stop_signal(int sig, siginfo_t* info, void*) {
  const pid_t sender = info && info->si_code == SI_USER ? info->si_pid : 0;
  // The first signal lets the work under way finish; a second one ends the process now, as
  // with no handler: a call blocked where no stop is checked (opening a FIFO that no writer
  // opens) would otherwise be unkillable but by SIGKILL. The same signal again from the same
  // process within half a second is the same request, not a second one: GNU timeout sends it to
  // the process and then to its process group, which holds us too. A terminal's Ctrl-C comes from the kernel (no sender): pressed twice, it ends us.
  // So is the same signal passed on by our parent within that half second (nightly.sh's trap
  // forwards what it gets, and Slurm's time limit signals the whole group: mgpu-bench got it twice
  // and ended at once, leaving its pack build folder and no word, battery round 20, F50).
  if (g_interrupted) {
    const pid_t parent = getppid();
    const bool same_sender = sender > 0 && sender == g_first_sender;
    const bool parent_passing_on = (sender > 0 && sender == parent) || (g_first_sender > 0 && g_first_sender == parent);
    if ((same_sender || parent_passing_on) && sig == g_signal && monotonic_ns() - g_first_ns < 500'000'000LL) return;
    end_children();
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_first_ns = monotonic_ns();
  g_first_sender = sender;
  g_signal = sig;
  g_interrupted = true;
}

extern "C" void on_stop_signal_kill_tools(int sig) {
  end_children();
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void install_tool_killing_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal_kill_tools;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction before {};
    if (sigaction(sig, nullptr, &before) == 0 && before.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_sigaction = on_stop_signal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  // An external tool under way (ptxas, nvdisasm) is killed at the first stop, not waited for.
  core::set_tool_stop_flag(&g_interrupted);
}

void ignore_broken_pipes() { signal(SIGPIPE, SIG_IGN); }

void ignore_file_size_limit() { signal(SIGXFSZ, SIG_IGN); }

bool reader_gone(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return false;
  // A pipe's write end polls POLLERR once no reader is left; a socket whose peer closed, POLLHUP.
  struct pollfd p {fd, POLLOUT, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

const std::atomic<bool>& stop_requested() { return g_interrupted; }

int stop_exit_code() { return 128 + (g_signal ? g_signal.load() : SIGINT); }

void exit_if_stopped(const std::string& what_was_done) {
  if (!g_interrupted) return;
  fmt::print(stderr, "mgpu-tune: stopped by SIG{}: {}\n", sigabbrev_np(stop_exit_code() - 128), what_was_done);
  throw ExitWith{stop_exit_code()};
}

std::function<void()> deferring_stops(std::string done, std::function<void()> work) {
  return [done = std::move(done), work = std::move(work)] {
    install_stop_handlers();
    work();
    exit_if_stopped(done);
  };
}

}  // namespace mgpu::harness
