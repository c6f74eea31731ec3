// The autotuning community's T4 "tuning results" format (AutoTuningAssociation, schema 1.x):
// { "schema_version", "metadata": {"timeunit"}, "results": [ { "configuration": {...},
//   "times": {"compilation", "runtimes": [...], ...}, "invalidity", "correctness",
//   "measurements": [{"name","value","unit"}], "objectives": [...] } ] }.
// Contract: read_t4() reads a plain or gzip-compressed file (told apart by gzip's magic bytes;
// a .gz name must hold gzip), parsing as it decompresses, and throws Error{InvalidInput} naming
// the file and what is wrong: not JSON, a truncated or damaged gzip file (garbage after its
// data included), more than 1 GiB of text once decompressed, a schema_version that is not 1.x
// (or none), no results, a result without a configuration, a time that is not a finite number
// of 0 or more, an unknown time unit (s, ms, us, ns, or their long names). Times are converted
// to milliseconds: a measurement's own "unit" when it has one, metadata.timeunit otherwise (and
// for "times"), milliseconds when neither says. Parameter values:
// integers (and booleans, as 0/1) stay numbers; other numbers and strings become strings
// (TuningConfig holds integers or strings). A result
// is valid when its invalidity is "correct" (or absent) and its correctness is not 0; its
// objective is the median of its runtimes (the "time" measurement when none are listed).
// write_t4() writes schema 1.0.0 in milliseconds (gzip-compressed when the path ends in .gz),
// atomically; read_t4(write_t4(x)) gives x back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tuning_config.h"

namespace mgpu::results {

struct T4Result {
  core::TuningConfig config;
  std::vector<double> runtimes_ms;      // the benchmark's individual runs
  double compile_ms = 0;
  std::optional<double> time_ms;        // the "time" measurement as recorded (when a number)
  std::string invalidity = "correct";   // correct | compile | runtime | constraints | ...
  bool correct = true;
  std::string timestamp;

  bool valid() const { return invalidity == "correct" && correct; }
  std::optional<double> objective_ms() const;  // median runtime; nullopt when not valid
  double cost_ms() const;                      // compile + every benchmark run
};

struct T4File {
  std::string schema_version = "1.0.0";
  std::vector<T4Result> results;
};

T4File read_t4(const std::string& path);
void write_t4(const T4File& file, const std::string& path);
// True when `path` starts like a SQLite database (our results store) rather than T4 JSON.
bool is_sqlite_file(const std::string& path);

}  // namespace mgpu::results
