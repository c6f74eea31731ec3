#include "core/external_tool.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/signal_safe_pids.h"

extern char** environ;

namespace mgpu::core {
namespace {

std::atomic<const std::atomic<bool>*> g_stop{nullptr};

// The process groups of the tools running now, for kill_running_tools() in a signal handler.
SignalSafePids<64> g_running;

// Holds the running tool's group in g_running while it lives.
class RunningTool {
 public:
  explicit RunningTool(pid_t pid) : pid_(pid) { g_running.add(pid); }
  ~RunningTool() { g_running.remove(pid_); }
  RunningTool(const RunningTool&) = delete;
  RunningTool& operator=(const RunningTool&) = delete;

 private:
  pid_t pid_;
};

}  // namespace

bool tool_stop_requested() {
  const std::atomic<bool>* stop = g_stop.load();
  return stop && stop->load();
}

void kill_running_tools() { g_running.signal(SIGKILL, /*group=*/true); }

double tool_time_limit_s() {
  const char* e = std::getenv("MGPU_TOOL_TIMEOUT");
  if (!e || !*e) return 600;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(e, &end);
  if (end == e || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v <= 0)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("MGPU_TOOL_TIMEOUT='{}' is no positive number of seconds (unset it for 600)", e));
  return v;
}

void set_tool_stop_flag(const std::atomic<bool>* flag) { g_stop = flag; }

int run_external_tool(const std::string& what, const std::string& program, const std::vector<std::string>& args,
                      const std::string& log_path, double limit_s, int* signal) {
  if (limit_s < 0) limit_s = tool_time_limit_s();
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  // A group of its own: a time-out kills the tool's children too (a wrapper script's ptxas),
  // and a Ctrl-C on the terminal reaches us, not the tool, so the stop is ours to handle.
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // Signal dispositions are inherited as before (an ignored SIGXFSZ stays ignored: a file-size
  // limit is the tool's EFBIG, not its death); handlers become the default at exec anyway.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw Error(ErrorKind::Unavailable, fmt::format("cannot run {} {}: {}", what, program, std::strerror(rc)));

  const RunningTool running(pid);
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      // The tool is done; a child it left behind in its group must not outlive it.
      ::kill(-pid, SIGKILL);
      if (signal) *signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + WTERMSIG(status);
    }
    if (r < 0 && errno != EINTR)
      throw Error(ErrorKind::Unavailable, fmt::format("cannot wait for {} {}: {}", what, program, std::strerror(errno)));
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool stopped = tool_stop_requested();
    if (stopped || waited >= limit_s) {
      // SIGTERM first, so a tool that cleans up on it does (gcc under a pack's build removes its
      // temporary files in TMPDIR: round 19, F36, SIGKILL left them); what is left of the group
      // after a grace of 2 s is killed.
      // (The group's other members are not waited for one by one: one that has exited may stay a
      // zombie member for as long as the process that inherited it does not reap it.)
      ::kill(-pid, SIGTERM);
      const auto asked = std::chrono::steady_clock::now();
      bool reaped = false;
      while (!reaped && std::chrono::steady_clock::now() - asked < std::chrono::seconds(2)) {
        reaped = ::waitpid(pid, &status, WNOHANG) == pid;
        if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (reaped) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // its children's clean-up
      ::kill(-pid, SIGKILL);
      while (!reaped && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (stopped) throw Error(ErrorKind::Unavailable, fmt::format("{} was stopped by a signal", what));
      throw Error(ErrorKind::Unavailable,
                  fmt::format("{} {} did not finish in {:g} s and was killed (a hung tool; MGPU_TOOL_TIMEOUT sets "
                              "the limit in seconds)",
                              what, program, limit_s));
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(4)) pause *= 2;  // at most ~5 ms late: ptxas runs ~0.1 s per kernel
  }
}

}  // namespace mgpu::core
