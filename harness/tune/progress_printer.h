// How a tuning run reports progress on stderr. Contract: on a terminal, one line redrawn in
// place that never exceeds the terminal's width (TIOCGWINSZ, else $COLUMNS, else 80); when
// stderr is a file or pipe (CI and Slurm logs), plain lines: one per trial, or one per
// `every` trials for long runs, plus the last, each with the elapsed time, trials done of the
// budget and the best so far. Quiet prints nothing; verbose adds a line per trial with its
// config, status, times and failure message. finish() ends a redrawn line.
#pragma once

#include <string>

#include "harness/tune/tuning_loop.h"

namespace mgpu::harness {

enum class Verbosity { Quiet, Normal, Verbose };

class ProgressPrinter {
 public:
  ProgressPrinter(Verbosity v, bool terminal) : verbosity_(v), terminal_(terminal) {}
  void operator()(const Progress& p);
  void finish();

  // The width a redrawn line may use on stderr's terminal.
  static int terminal_width();
  // The one-line summary (exposed for tests): "[1:05] 12/40 trials  best 512.3 TFLOP/s {...}".
  static std::string summary(const Progress& p);

 private:
  Verbosity verbosity_;
  bool terminal_;
  bool drawn_ = false;
  int printed_for_ = -1;  // `done` of the last plain line
};

}  // namespace mgpu::harness
