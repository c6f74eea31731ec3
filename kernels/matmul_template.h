// The matmul template for a target, behind one face: its search space, the problems it can
// run, the validity rules, and the builder. Contract: matmul_template(arch) returns the
// template compiled for that arch, or throws Error{Unavailable} when none exists yet;
// configs are core::TuningConfig (checked against space() by check_config(), which throws
// Error{InvalidInput}); run_time_params() are parameters that change kernel arguments only,
// so configs differing only in them share one binary.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch.h"
#include "core/built_kernel.h"
#include "core/tuning_config.h"
#include "kernels/matmul_common/cost_model.h"
#include "kernels/matmul_common/launch_math.h"
#include "kernels/matmul_problem.h"
#include "kernels/problem_class.h"
#include "kernels/rejection.h"

namespace mgpu::kernels {

class MatmulTemplate {
 public:
  virtual ~MatmulTemplate() = default;
  virtual std::string_view name() const = 0;
  // Hash of the sources that shape the kernels this template builds (results provenance).
  virtual std::string_view source_hash() const = 0;
  virtual const core::ArchSpec& arch() const = 0;
  virtual core::ParamSpace space() const = 0;
  virtual core::TuningConfig default_config() const = 0;
  virtual std::vector<std::string> run_time_params() const = 0;
  virtual void check_problem(const MatmulProblem& p) const = 0;   // throws InvalidInput
  // check_problem() as a predicate (the proxy searches of kernels/problem_class.h take one).
  bool accepts(const MatmulProblem& p) const;
  virtual void check_config(const core::TuningConfig& c) const = 0;  // names, types; throws InvalidInput
  virtual std::optional<Rejection> why_invalid(const MatmulProblem& p, const core::TuningConfig& c) const = 0;
  // Every config of space() with its verdict for `p` (nullptr: valid), in enumerate()'s order;
  // `stop`, when set, ends the walk early. The template keeps its own parsed config and updates
  // the parameters that changed, so a walk of millions of configs costs their validity rules.
  virtual void walk(const MatmulProblem& p, const std::function<void(const core::TuningConfig&, const Rejection*)>& visit,
                    const std::atomic<bool>* stop = nullptr) const = 0;
  // The configs of space() valid for at least one of `problems`, in enumerate()'s order (a
  // search's candidates; verify --all's configs, valid somewhere). Empty when stopped.
  std::vector<core::TuningConfig> valid_configs(const std::vector<MatmulProblem>& problems,
                                                const std::atomic<bool>* stop = nullptr) const;
  // check_config() and why_invalid() together: throws Error{InvalidInput} "invalid config
  // (rule): reason" for a config the user asked for by hand.
  void require_valid(const MatmulProblem& p, const core::TuningConfig& c) const;
  virtual core::BuiltKernel build(const MatmulProblem& p, const core::TuningConfig& c) const = 0;
  // Launch: what the launch arithmetic (kernels/matmul_common/launch_math.h) needs of the
  // config; from it, the grid size for `sm_count` SMs and the kernel's scalar arguments after
  // the descriptors (and workspace).
  virtual mgpu_lm_matmul launch_consts(const core::TuningConfig& c) const = 0;
  virtual unsigned grid(const MatmulProblem& p, const core::TuningConfig& c, int sm_count) const = 0;
  virtual std::vector<std::int32_t> scalar_args(const MatmulProblem& p, const core::TuningConfig& c) const = 0;
  // The global workspace the config's kernel takes for `p` (0: none; then BuiltKernel's
  // takes_workspace is false): the launcher allocates it zero-filled and may reuse it for any
  // number of launches of this (problem, config). Part of the config's resources.
  // `sm_count`: the SMs the launch's grid is sized for (grid()), as a stream-K workspace holds
  // partials per CTA.
  virtual std::int64_t workspace_bytes(const MatmulProblem& p, const core::TuningConfig& c, int sm_count) const = 0;
  // What a launch of the config's kernel for `p` on `sm_count` SMs does that neither the binary
  // nor the problem fixes, as one canonical text: the tiles each cluster computes, in order,
  // the clusters' sequences sorted. Two configs with one binary, one problem and one signature
  // run the same work, cluster for cluster, up to which cluster runs which sequence -- an order
  // the virtual device's scheduler draws at random anyway -- so one verification stands for both.
  virtual std::string launch_signature(const MatmulProblem& p, const core::TuningConfig& c, int sm_count) const = 0;
  // The extents (M, N, K) the kernels' tile grids and K loops are counted in, over the whole
  // default space: problems with the same counts for every one of them run the same padded
  // grids, so they share a best config (shape-suite bucketing).
  virtual std::vector<std::array<int, 3>> grid_units() const = 0;
  // How a config's kernel tiles the output and pipelines K: what its problem classes and
  // verification proxies are computed from (kernels/problem_class.h).
  virtual KernelShape kernel_shape(const core::TuningConfig& c) const = 0;
  // The analytic estimate of the kernel's time on `device`, in milliseconds ("model").
  virtual double predict_ms(const MatmulProblem& p, const core::TuningConfig& c, const core::DeviceSpec& device) const = 0;
  // The estimate with its terms, and with the penalties of the compiled kernel's lints
  // (issue 19; kernels/matmul_common/cost_model.h): a default KernelDefects (no evidence)
  // gives predict_ms()'s estimate.
  virtual Prediction predict(const MatmulProblem& p, const core::TuningConfig& c, const core::DeviceSpec& device,
                             const KernelDefects& defects) const = 0;
};

const MatmulTemplate& matmul_template(const core::ArchSpec& arch);

}  // namespace mgpu::kernels
