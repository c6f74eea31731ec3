// Confirming a search's winners on the GPU: the few best are re-timed with the strict stopping
// rule, interleaved (one pass over the contenders at a time, alternating direction, so a slow
// drift of clock or temperature hits them alike: A B C, C B A, ...), until the ranking is
// settled. Contract: confirm() measures every finalist at least `min_passes` times (unless
// stopped or every measurement of a finalist fails); after each later pass a contender whose
// fastest time is slower than the leader's slowest is out (the ranges no longer overlap), and
// the passes end when one contender is left, when two passes in a row ranked the contenders
// alike, at `max_passes`, or once `budget_s` is spent (checked between measurements). Each
// finalist's confirmed time is the median of its strict times; one never timed keeps its search
// time. The first lease spent 200 of 250 s on three fixed passes over the top ten.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mgpu::harness {

struct ConfirmOptions {
  int min_passes = 2;
  int max_passes = 5;
  double budget_s = 60;
};

struct Finalist {
  std::string config;  // canonical JSON
  double ms = 0;       // the search's time, then the confirmed median
  std::vector<double> strict_ms;
};

struct Confirmation {
  std::vector<Finalist> ranked;  // fastest first, by confirmed time
  int passes = 0, measurements = 0;
  double seconds = 0;
  std::string ended_because;  // "settled", "one contender left", "max passes", "time budget", "stopped"
};

// measure(config, first_of_config) -> the strict median in ms, or nullopt when it failed.
using StrictMeasure = std::function<std::optional<double>(const std::string& config, bool first)>;
using SecondsNow = std::function<double()>;  // a monotonic clock (a test passes a fake)

Confirmation confirm(std::vector<Finalist> finalists, const StrictMeasure& measure, const ConfirmOptions& o,
                     const std::atomic<bool>& interrupted, const SecondsNow& now);

// The wall-time cap for one strict measurement: the budget checked between measurements cannot
// cut one short, and a short kernel rarely meets the strict noise bound, so each would run to
// the strict rule's cap (10 s: an H200 lease spent 10.6 s of a 5 s budget on one measurement).
// Capped at an equal share of `min_passes` passes over the finalists, at least `floor_s`, at most
// `strict_cap_s`.
double measurement_cap_s(const ConfirmOptions& o, std::size_t finalists, double strict_cap_s, double floor_s = 0.5);

}  // namespace mgpu::harness
