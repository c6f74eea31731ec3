#include "harness/measure/emulator_verifier.h"

#include <cstdlib>
#include <filesystem>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cuda_context.h"
#include "core/cuda_driver.h"
#include "core/emu/environment.h"
#include "core/error.h"
#include "core/sass/bank_conflicts.h"
#include "harness/version.h"
#include "harness/measure/cuda_measurer.h"
#include "kernels/matmul_run/device_run.h"

namespace mgpu::harness {

namespace {

// Every config of a problem sees the same inputs (kernels::matmul_inputs' seed 1).
constexpr std::uint64_t kInputSeed = 1;

}  // namespace

std::string find_virtual_device_library() {
  if (const char* env = std::getenv("MGPU_CUDA_DRIVER"); env && *env) return env;
  std::filesystem::path dir = std::filesystem::path(executable_path()).parent_path();
  for (const char* rel : {"libmgpu_vcuda.so", "core/emu/libmgpu_vcuda.so", "../lib/libmgpu_vcuda.so", "lib/libmgpu_vcuda.so"}) {
    std::filesystem::path p = dir / rel;
    if (std::filesystem::exists(p)) return std::filesystem::canonical(p).string();
  }
  return "";
}

namespace {

// The status a fatal finding gives a trial: a hang and an unimplemented instruction are told
// apart from a fault.
TrialStatus fatal_status(const std::string& kind) {
  if (kind == "deadlock" || kind == "step-limit") return TrialStatus::Deadlock;
  if (kind == "unsupported") return TrialStatus::Unsupported;
  return TrialStatus::Fault;
}

}  // namespace

LaunchFindings last_launch_findings() {
  LaunchFindings f;
  const std::string last = core::CudaDriver::get().last_emulated_launch();
  if (last.empty()) return f;
  f.report = nlohmann::json::parse(last);
  for (const auto& r : f.report.value("reports", nlohmann::json::array())) {
    std::string line = fmt::format("{}: {} (PTX line {})", r.value("kind", "?"), r.value("message", ""), r.value("line", -1));
    (r.value("note", false) ? f.notes : f.hazards).push_back(line);
  }
  return f;
}

void LaunchFindings::fail(Measurement& m) const {
  std::string found;
  for (const auto& h : hazards) found += (found.empty() ? "" : "; ") + h;
  m.status = TrialStatus::Hazard;
  m.message = fmt::format("{} finding(s) of the virtual device's checkers: {}", hazards.size(), found);
}

void LaunchFindings::describe_pass(Measurement& m) const {
  if (!notes.empty()) m.message = fmt::format("verified; {} note(s): {}", notes.size(), notes.front());
  // Issue 19: the shared-memory bank conflicts of the kernel's generic loads and stores (a
  // cost, not a finding), with the worst PTX line, kept with the verification; a clean
  // count is kept too, so "no conflicts" is a measured fact, not an absent line.
  const nlohmann::json banks = report.value("bank_conflicts", nlohmann::json::object());
  if (banks.value("accesses", 0) > 0) {
    nlohmann::json worst;
    for (const auto& l : banks.value("lines", nlohmann::json::array()))
      if (worst.is_null() || l.value("conflicts", 0) > worst.value("conflicts", 0)) worst = l;
    // The phrase parse_bank_conflicts() reads back (lints, the cost model): keep it so.
    core::SharedBankConflicts b{banks.value("conflicts", std::int64_t{0}), banks.value("accesses", std::int64_t{0}),
                                banks.value("wavefronts", std::int64_t{0}), banks.value("ideal", std::int64_t{0})};
    m.message += fmt::format("{}shared-memory bank conflicts: {}", m.message.empty() ? "verified; " : "; ",
                             core::bank_conflict_text(b));
    if (b.conflicts > 0)
      m.message += fmt::format(", worst PTX line {} in {}: {} in {} accesses", worst.value("line", -1),
                               worst.value("region", std::string("?")), worst.value("conflicts", 0),
                               worst.value("accesses", 0));
  }
}

void explain_launch_failure(Measurement& m, const core::CudaError& e) {
  m.status = e.is_fault() ? TrialStatus::Fault : TrialStatus::LaunchError;
  m.message = e.what();
  std::string last = core::CudaDriver::get().last_emulated_launch();
  if (last.empty()) return;
  nlohmann::json j = nlohmann::json::parse(last);
  if (j.value("reports", nlohmann::json::array()).empty()) return;
  const auto& first = j["reports"][0];
  std::string kind = first.value("kind", "");
  if (e.is_fault()) m.status = fatal_status(kind);
  m.message += ": " + kind + ": " + first.value("message", "");
  // A step limit the user lowered below the default proves nothing about the kernel (a
  // correct one may need more steps): no verdict, so it is not stored as the kernel's
  // failure for every later run to trust; a run without the setting verifies it.
  if (kind == "step-limit" && emu::step_limit_from_environment() < emu::default_step_limit()) {
    m.status = TrialStatus::EnvError;
    m.message += fmt::format(" (MGPU_EMU_STEP_LIMIT={} is below the default {}: not a verdict on the kernel; "
                             "verify without it)", emu::step_limit_from_environment(), emu::default_step_limit());
  }
}

namespace {

// One launch under scheduler seed `seed`, verified against `want`; the output's bytes land in `got`.
Measurement run_once(const TrialRequest& req, const kernels::MatmulTemplate& t, const core::BuiltKernel& kernel, const std::string& ptx,
                     const std::vector<double>& want, std::uint64_t seed, std::vector<std::uint8_t>& got) {
  Measurement m;
  m.source = "emulate";
  const kernels::MatmulProblem& p = req.problem;
  try {
    setenv("MGPU_EMU_SEED", std::to_string(seed).c_str(), 1);  // read by the virtual device at each launch
    kernels::PreparedMatmul run(t, p, req.config, kInputSeed, ptx, "", req.sm_count, &kernel);
    run.launch();
    got = run.output_bytes();  // synchronizes
    const LaunchFindings found = last_launch_findings();
    const double rel = kernels::relative_error(got, p.out_dtype, want);
    if (!found.hazards.empty()) {
      m.verification_error = rel;
      found.fail(m);
    } else if (judge_verification(m, rel, p.out_dtype, "a float64 reference")) {
      found.describe_pass(m);
    }
    return m;
  } catch (const core::CudaError& e) {
    explain_launch_failure(m, e);
    return m;
  }
}

}  // namespace

std::uint64_t schedule_seed(int i) {
  static constexpr std::uint64_t kOrder[4] = {1, 4, 2, 3};
  return 4 * static_cast<std::uint64_t>(i / 4) + kOrder[i % 4];
}

Measurement run_schedules(int seeds, const std::function<Measurement(std::uint64_t seed, std::vector<std::uint8_t>& bytes)>& once,
                          const std::function<std::string(std::size_t at, const std::vector<std::uint8_t>& first,
                                                          const std::vector<std::uint8_t>& got)>& differs) {
  seeds = std::max(1, seeds);
  // Schedules one after another; the first that fails is the verdict (a fault loses the
  // context, as on a GPU, so nothing could run after it anyway). Every schedule must also
  // give the first one's output bit for bit: a kernel whose result depends on which CTA ran
  // first (a reduction summed in arrival order) is not reproducible, however close it is.
  std::vector<std::uint8_t> first, got;
  Measurement m;
  for (int i = 0; i < seeds; ++i) {
    m = once(schedule_seed(i), got);
    if (m.status == TrialStatus::Ok && i > 0 && got != first) {
      std::size_t at = 0;
      while (at < got.size() && at < first.size() && got[at] == first[at]) ++at;
      m.status = TrialStatus::WrongResult;
      m.message = fmt::format("not reproducible: {}: the output depends on the order the CTAs ran in", differs(at, first, got));
    }
    if (m.status != TrialStatus::Ok) {
      if (seeds > 1) m.message = fmt::format("schedule {} (seed {}) of {}: {}", i + 1, schedule_seed(i), seeds, m.message);
      return m;
    }
    if (i == 0) first = got;
  }
  if (seeds > 1) {
    std::string notes = m.message.rfind("verified; ", 0) == 0 ? m.message.substr(10) : m.message;
    m.message = fmt::format("verified under {} schedules{}{}", seeds, notes.empty() ? "" : "; ", notes);
  }
  return m;
}

Measurement verify_on_emulator(const TrialRequest& req, const kernels::MatmulTemplate& t, const core::BuiltKernel& kernel,
                               const std::string& ptx) {
  Measurement m;
  m.source = "emulate";
  try {
    if (!core::CudaDriver::get().emulated())
      throw core::Error(core::ErrorKind::Unavailable, "the CUDA driver loaded is not the virtual device");
    core::CudaContext::primary();
    const std::vector<double> want = kernels::matmul_reference(req.problem, kernels::matmul_inputs(req.problem, kInputSeed));
    const kernels::MatmulProblem& p = req.problem;
    return run_schedules(
        req.seeds, [&](std::uint64_t seed, std::vector<std::uint8_t>& got) { return run_once(req, t, kernel, ptx, want, seed, got); },
        [&](std::size_t at, const std::vector<std::uint8_t>& first, const std::vector<std::uint8_t>& got) {
          const std::size_t e = at / static_cast<std::size_t>(kernels::size_in_bytes(p.out_dtype));
          return fmt::format("C[{}][{}] is {} under schedule 1 (seed {}) and {} under this one", e / p.n, e % p.n,
                             kernels::read_out(first, e, p.out_dtype), schedule_seed(0), kernels::read_out(got, e, p.out_dtype));
        });
  } catch (const core::CudaError& e) {
    m.status = e.is_fault() ? TrialStatus::Fault : TrialStatus::LaunchError;
    m.message = e.what();
    return m;
  } catch (const core::Error& e) {
    m.status = e.kind() == core::ErrorKind::Unavailable ? TrialStatus::EnvError : TrialStatus::LaunchError;
    m.message = e.what();
    return m;
  }
}

}  // namespace mgpu::harness
