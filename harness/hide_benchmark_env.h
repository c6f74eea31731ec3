// Google Benchmark (a shared library, initialized before any code of the executable) reads each
// of its flags' defaults from the environment at load time, and its --v flag's variable is `V`:
// a one-letter name users set for their own ends, which made every mgpu-tune and mgpu-bench
// command print "Environment variable V is expected to be a 32-bit integer" (round 19, F43).
// An executable's .preinit_array runs before its libraries' initializers, so `V` is hidden from
// the environment there and put back as the first thing main() does: Google Benchmark never sees
// it, and every child (the worker, ptxas, a pack build) gets the environment as it was given.
// benchmark::Initialize() reads the variables again: HiddenBenchmarkEnv hides `V` around it.
// Google Benchmark's own BENCHMARK_* variables are left to it. Include in the executable's main
// file with MGPU_HIDE_BENCHMARK_ENV() at namespace scope and restore_benchmark_env() first
// thing in main().
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace mgpu::harness::benchmark_env {

inline char* hidden = nullptr;
inline int hidden_index = -1;
inline char placeholder[] = "MGPU_HIDDEN_BENCHMARK_V=";

// No allocation and no libc state: libc itself is not initialized yet (`environ` is still null
// here), so the process's environment array handed to .preinit_array functions is edited in
// place; libc makes that same array `environ` afterwards.
inline void hide(int, char**, char** envp) {
  for (int i = 0; envp && envp[i]; ++i)
    if (std::strncmp(envp[i], "V=", 2) == 0) {
      hidden = envp[i];
      hidden_index = i;
      envp[i] = placeholder;
      return;
    }
}

}  // namespace mgpu::harness::benchmark_env

#define MGPU_HIDE_BENCHMARK_ENV()                                                          \
  __attribute__((section(".preinit_array"), used)) static void (*const mgpu_hide_benchmark_env)( \
      int, char**, char**) = &::mgpu::harness::benchmark_env::hide

namespace mgpu::harness {

inline void restore_benchmark_env() {
  using namespace benchmark_env;
  if (hidden && environ && environ[hidden_index] == placeholder) environ[hidden_index] = hidden;
}

// `V` is out of the environment while this lives (around benchmark::Initialize()).
class HiddenBenchmarkEnv {
 public:
  HiddenBenchmarkEnv() {
    if (const char* v = std::getenv("V")) {
      value_ = v;
      ::unsetenv("V");
    }
  }
  ~HiddenBenchmarkEnv() {
    if (value_) ::setenv("V", value_->c_str(), 1);
  }
  HiddenBenchmarkEnv(const HiddenBenchmarkEnv&) = delete;
  HiddenBenchmarkEnv& operator=(const HiddenBenchmarkEnv&) = delete;

 private:
  std::optional<std::string> value_;
};

}  // namespace mgpu::harness
