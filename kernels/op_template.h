// One face for every op's kernel template, so the commands, the store and the exports need not
// know which op they serve. An op implements OpTemplate in kernels/<op>/ and registers it in
// kernels/op_registry.cc; nothing else changes for it.
//
// Contract: a Problem is the op's own problem in a form every layer can carry: the op's name,
// its canonical key (problem_from_key(key) gives it back), its fields in the op's order (for
// tables, JSON and the store), the flops its kernels do (for TFLOP/s) and the element types.
// problem() reads the command line's values by flag name and throws Error{InvalidInput} naming
// the flag; why_invalid() is empty exactly for the configs build() makes a correct kernel of;
// prepare() is the op's launch preparation: inputs drawn from a seed, buffers and descriptors made
// for whatever device the CUDA driver is (a GPU, or the virtual device), the result compared with
// the op's CPU reference within its tolerance.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/arch.h"
#include "core/tuning_config.h"
#include "kernels/rejection.h"

namespace mgpu::kernels {

struct Problem {
  std::string op;
  std::string key;
  std::vector<std::pair<std::string, std::string>> fields;  // name, value as text
  double flops = 0;
  double bytes = 0;  // device memory its inputs and outputs take
  std::string dtype, out_dtype;
  bool operator==(const Problem&) const = default;
};

// A problem parameter the command line offers as --name.
struct ProblemFlag {
  std::string name;           // "seq-q"
  std::string help;
  std::string default_value;  // as text; a switch's default is off
  bool is_switch = false;     // present or not (--causal)
  std::vector<std::string> choices;  // empty: any value problem() accepts
  std::int64_t min = 0, max = 0;     // max > 0: a whole number in [min, max]
};

// A class of problems a config is proven at on the virtual device: the problem run, and the
// class name stored with the verdict (a verification stands for every problem of its class).
struct VerificationProblem {
  std::string problem_class;
  Problem problem;
  int sm_count = 0;  // the SMs the launch's grid is sized for (prepare()); 0: the device's own
  // Non-empty: the class has no problem small enough for the virtual device (`problem` is then
  // the target itself, not to be run), and this says so; the config cannot be proven there.
  std::string unrunnable_why;
};

// The outputs of a launch against the op's CPU reference.
struct Comparison {
  bool ok = false;           // every element within its tolerance
  double error_ratio = 0;    // the worst element's error over its tolerance (<= 1 passes)
  std::string description;   // the worst element(s), for people
};

// One config's kernel made ready to launch on the driver's device: inputs drawn from a seed
// and uploaded, outputs poisoned, descriptors and arguments laid out, the module loaded.
class PreparedRun {
 public:
  virtual ~PreparedRun() = default;
  virtual void launch() = 0;  // asynchronous; any number of times (timing loops)
  // Synchronizes, then compares the last launch's outputs with the reference.
  virtual Comparison compare() = 0;
  // Synchronizes; the last launch's outputs as bytes (two schedules of a reproducible kernel
  // give the same), and where byte `at` lies, for people ("O[0][1][5][64]").
  virtual std::vector<std::uint8_t> output_bytes() = 0;
  virtual std::string describe_byte(std::size_t at) const = 0;
};

class OpTemplate {
 public:
  virtual ~OpTemplate() = default;
  virtual std::string_view op() const = 0;    // "attention": the command and the store's kernel column
  virtual std::string_view name() const = 0;  // "attention_sm90": the template, per arch
  virtual std::string_view source_hash() const = 0;
  virtual const core::ArchSpec& arch() const = 0;
  virtual std::string_view description() const = 0;  // one line for --help

  virtual std::vector<ProblemFlag> problem_flags() const = 0;
  virtual Problem problem(const std::map<std::string, std::string>& flag_values) const = 0;
  virtual Problem problem_from_key(std::string_view key) const = 0;

  virtual core::ParamSpace space() const = 0;
  virtual core::TuningConfig default_config() const = 0;
  // Names and domains (ParamSpace::check_member); throws Error{InvalidInput}.
  void check_config(const core::TuningConfig& c) const { space().check_member(c); }
  virtual std::optional<Rejection> why_invalid(const Problem& p, const core::TuningConfig& c) const = 0;
  // check_config() and why_invalid() together, for a config asked for by hand: throws
  // Error{InvalidInput} "invalid config (rule): reason".
  void require_valid(const Problem& p, const core::TuningConfig& c) const;

  // The kernel's MLIR module (through the MGPU backend), and the entry point it defines.
  virtual std::string build_mlir(const Problem& p, const core::TuningConfig& c) const = 0;
  virtual std::string kernel_name() const = 0;
  virtual double predict_ms(const Problem& p, const core::TuningConfig& c, const core::DeviceSpec& device) const = 0;
  // Problems that together build every kernel the template can (one per kernel-shaping choice:
  // for attention, each head dim, dtype and mask): where `verify <op> --all` proves the space.
  virtual std::vector<Problem> kernel_problems() const = 0;
  // The numeric problem fields whose value shapes the kernel (attention's head dim): a config
  // tuned at one value may not even build at another, so an exported lookup matches them
  // exactly, as it does the text fields and switches (dtypes, mask), and takes the nearest of
  // the other numbers (sizes).
  virtual std::vector<std::string> kernel_fields() const = 0;
  // Where config `c` is proven before it ranks for `p` on a device of `sm_count` SMs: each class
  // once. They must build the kernel `p` builds (a verification is keyed by the binary). The
  // classes may depend on the config and the device (a matmul's: how its tiles fall on `p` and
  // how many waves of CTAs the SMs run). Never empty.
  virtual std::vector<VerificationProblem> verification_problems(const Problem& p, const core::TuningConfig& c,
                                                                 int sm_count) const = 0;
  // Launch preparation of build_mlir(p, c) compiled (`cubin` may be empty: the driver loads the
  // PTX, as the virtual device does), its grid sized for `sm_count` SMs (0: the device's; a
  // verification problem gives its own). Errors: core::CudaError from the driver.
  virtual std::unique_ptr<PreparedRun> prepare(const Problem& p, const core::TuningConfig& c, std::uint64_t seed,
                                               const std::string& ptx, const std::string& cubin,
                                               int sm_count) const = 0;
};

// Reading problem() values: a whole number in [min, max] (decimal digits only), one of
// `choices`, or a switch ("true" when given). Each throws Error{InvalidInput} naming --flag.
std::int64_t flag_integer(const std::map<std::string, std::string>& values, const std::string& flag, std::int64_t min,
                          std::int64_t max);
std::string flag_choice(const std::map<std::string, std::string>& values, const std::string& flag,
                        const std::vector<std::string>& choices);
bool flag_switch(const std::map<std::string, std::string>& values, const std::string& flag);

}  // namespace mgpu::kernels
