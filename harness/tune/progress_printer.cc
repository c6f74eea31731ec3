#include "harness/tune/progress_printer.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace mgpu::harness {
namespace {

// h:mm:ss in 64 bits (an ETA of 10^9 trials is past 2^31 seconds); beyond ten years, a word.
std::string clock_text(double s) {
  if (!(s < 10.0 * 365 * 86400)) return "over ten years";
  const std::int64_t total = static_cast<std::int64_t>(s + 0.5);
  return total >= 3600 ? fmt::format("{}:{:02d}:{:02d}", total / 3600, total / 60 % 60, total % 60)
                       : fmt::format("{}:{:02d}", total / 60, total % 60);
}

}  // namespace

int ProgressPrinter::terminal_width() {
  winsize w{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    int n = std::atoi(c);
    if (n > 0) return n;
  }
  return 80;
}

std::string ProgressPrinter::summary(const Progress& p) {
  std::string eta;
  if (p.done > 0 && p.done < p.target && p.elapsed_s > 0)
    eta = fmt::format("  ETA {}", clock_text(p.elapsed_s / p.done * (p.target - p.done)));
  // A T4 landscape's kernel has no FLOP rate here: its time is the figure.
  std::string best = p.verified_failed
                         ? fmt::format("  {} verified, {} failed on the virtual device", p.verified_failed->first,
                                       p.verified_failed->second)
                     : !p.best ? std::string("  no result yet")
                     : p.best->tflops > 0 ? fmt::format("  best {:.1f} TFLOP/s {}", p.best->tflops, p.best->config.to_json())
                                          : fmt::format("  best {:.4f} ms {}", p.best->median_ms, p.best->config.to_json());
  return fmt::format("[{}] {}{}/{} trials{}{}", clock_text(p.elapsed_s), p.context.empty() ? "" : p.context + " ",
                     p.done, p.target, eta, best);
}

void ProgressPrinter::operator()(const Progress& p) {
  if (verbosity_ == Verbosity::Quiet) return;
  if (verbosity_ == Verbosity::Verbose && p.trial) {
    const TrialEvent& t = *p.trial;
    std::string result = t.status == "ok" ? fmt::format("{:.4f} ms", t.median_ms) : t.status;
    std::string times = fmt::format("measured in {:.0f} ms", t.measure_ms);
    if (t.compile_wait_ms >= 1) times += fmt::format(", waited {:.0f} ms for the batch's compiles", t.compile_wait_ms);
    if (drawn_) std::fputs("\r\x1b[K", stderr);
    fmt::print(stderr, "trial {}: {} {} ({}){}\n", p.done, t.config_json, result, times,
               t.message.empty() ? "" : ": " + t.message);
  }
  std::string line = summary(p);
  if (terminal_) {
    int width = terminal_width() - 1;  // the cursor's column: a full line would wrap
    if (width > 3 && static_cast<int>(line.size()) > width) line = line.substr(0, width - 3) + "...";
    fmt::print(stderr, "\r{}\x1b[K", line);
    drawn_ = true;
  } else {
    // A line per trial, or per `every` trials for long runs (about 100 lines a run), and the last.
    int every = std::max(1, p.target / 100);
    if (p.done == printed_for_ || (p.done % every != 0 && p.done < p.target)) return;
    fmt::print(stderr, "{}\n", line);
    printed_for_ = p.done;
  }
  std::fflush(stderr);
}

void ProgressPrinter::finish() {
  if (drawn_) fmt::print(stderr, "\n");
  drawn_ = false;
}

}  // namespace mgpu::harness
