// An Optuna study driven from C++ through the embedded interpreter: ask for a point of a
// discrete space, tell its objective (minimized). Contract: the constructor imports optuna
// (Error{InvalidInput} naming python3-optuna when it is absent) and builds the sampler named
// `sampler` ("tpe", "cmaes", "random") seeded with `seed`; the same seed and the same tells
// give the same asks. TPE runs with constant_liar, so several asks may be pending at once, and
// multivariate (one joint density over the parameters, not one per parameter: on convolution
// on MI250X, 46 evaluations, its mean score went from -0.07 to +0.20 over 100 seeds).
// Parameters are categorical, except for CMA-ES, which needs numbers: there each parameter
// is an integer index into its choices (ordered as given), which CMA-ES can move along.
// ask() throws SamplerFailed when Optuna raises (the sampler broke down); the study is then done.
// CMA-ES runs with margin (Hamano et al. 2022, Optuna's with_margin), which keeps its integer
// coordinates from freezing on one value.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mgpu::search {

// ask() failed inside Optuna (a Python exception): the study cannot propose any more points.
struct SamplerFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CategoricalParam {
  std::string name;
  std::vector<std::int64_t> choices;
};

struct AskedTrial {
  int number = 0;
  std::map<std::string, std::int64_t> values;  // name -> chosen value
};

// The largest seed Optuna's samplers take (numpy's 32-bit seeds).
inline constexpr std::uint64_t kMaxOptunaSeed = 4294967295u;

class OptunaStudy {
 public:
  // seed > kMaxOptunaSeed or an unknown sampler: Error{InvalidInput}.
  OptunaStudy(const std::string& sampler, std::uint64_t seed);
  ~OptunaStudy();
  OptunaStudy(const OptunaStudy&) = delete;
  OptunaStudy& operator=(const OptunaStudy&) = delete;

  AskedTrial ask(const std::vector<CategoricalParam>& space);
  // Queues exact values for the next ask (Optuna's enqueue_trial): how a caller that had to
  // pick a point itself keeps the study informed of it.
  void enqueue(const std::map<std::string, std::int64_t>& values, const std::vector<CategoricalParam>& space);
  void tell(int number, double value);
  void tell_failed(int number);  // the trial could not be measured: Optuna prunes nothing from it
  // CMA-ES only: a fresh CMA-ES whose search distribution is centred on `x0` (values as asked)
  // with step size `sigma0` (in domain indices) takes over from the next ask, in a new study
  // (CMA-ES learns from its own trials only). Error{InvalidInput} for any other sampler or
  // while a trial is pending.
  void restart_cmaes_at(const std::map<std::string, std::int64_t>& x0, const std::vector<CategoricalParam>& space,
                        double sigma0);
  std::string optuna_version() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mgpu::search
