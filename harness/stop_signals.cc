#include "harness/stop_signals.h"

#include <csignal>

namespace mgpu::harness {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
  g_interrupted = true;
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

const std::atomic<bool>& stop_requested() { return g_interrupted; }

int stop_exit_code() { return 128 + (g_signal ? g_signal.load() : SIGINT); }

}  // namespace mgpu::harness
