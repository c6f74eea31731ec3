// An OpTemplate that forwards every call to another (`real`): a test's faulty twin derives from it
// and overrides only what it breaks (usually build_mlir), so the twin is the real template in all
// else -- its name, hash, space, problems, verification problems and launch preparation.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/op_template.h"

namespace mgpu::test {

class ForwardingOpTemplate : public kernels::OpTemplate {
 public:
  explicit ForwardingOpTemplate(const kernels::OpTemplate& real) : real_(real) {}
  std::string_view op() const override { return real_.op(); }
  std::string_view name() const override { return real_.name(); }
  std::string_view source_hash() const override { return real_.source_hash(); }
  const core::ArchSpec& arch() const override { return real_.arch(); }
  std::string_view description() const override { return real_.description(); }
  std::vector<kernels::ProblemFlag> problem_flags() const override { return real_.problem_flags(); }
  kernels::Problem problem(const std::map<std::string, std::string>& v) const override { return real_.problem(v); }
  kernels::Problem problem_from_key(std::string_view key) const override { return real_.problem_from_key(key); }
  core::ParamSpace space() const override { return real_.space(); }
  core::TuningConfig default_config() const override { return real_.default_config(); }
  std::optional<kernels::Rejection> why_invalid(const kernels::Problem& p, const core::TuningConfig& c) const override {
    return real_.why_invalid(p, c);
  }
  std::string build_mlir(const kernels::Problem& p, const core::TuningConfig& c) const override {
    return real_.build_mlir(p, c);
  }
  std::string kernel_name() const override { return real_.kernel_name(); }
  double predict_ms(const kernels::Problem& p, const core::TuningConfig& c, const core::DeviceSpec& d) const override {
    return real_.predict_ms(p, c, d);
  }
  std::vector<kernels::Problem> kernel_problems() const override { return real_.kernel_problems(); }
  std::vector<std::string> kernel_fields() const override { return real_.kernel_fields(); }
  std::vector<kernels::VerificationProblem> verification_problems(const kernels::Problem& p, const core::TuningConfig& c,
                                                                  int sm_count) const override {
    return real_.verification_problems(p, c, sm_count);
  }
  std::unique_ptr<kernels::PreparedRun> prepare(const kernels::Problem& p, const core::TuningConfig& c, std::uint64_t seed,
                                                const std::string& ptx, const std::string& cubin,
                                                int sm_count) const override {
    return real_.prepare(p, c, seed, ptx, cubin, sm_count);
  }

 protected:
  const kernels::OpTemplate& real() const { return real_; }

 private:
  const kernels::OpTemplate& real_;
};

}  // namespace mgpu::test
