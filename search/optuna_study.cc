#include "search/optuna_study.h"

#include <algorithm>

#include <fmt/format.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include "core/error.h"
#include "search/python_runtime.h"

namespace py = pybind11;

namespace mgpu::search {

using core::Error;
using core::ErrorKind;

namespace {
std::int64_t index_of(const CategoricalParam& p, std::int64_t value) {
  return std::find(p.choices.begin(), p.choices.end(), value) - p.choices.begin();
}
}  // namespace

struct OptunaStudy::Impl {
  bool ordinal = false;  // integer indices instead of categorical choices (CMA-ES)
  std::uint64_t seed = 0;
  py::module_ optuna;
  py::object study;
  std::map<int, py::object> pending;  // asked, not yet told
};

OptunaStudy::OptunaStudy(const std::string& sampler, std::uint64_t seed) {
  ensure_python();
  py::gil_scoped_acquire gil;
  import_or_explain("optuna", "python3-optuna");
  // numpy's generators, which Optuna's samplers seed, take 32-bit seeds: a larger one is a
  // ValueError inside Python, long after the command line was accepted.
  if (seed > kMaxOptunaSeed)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("seed {} is out of range: Optuna's samplers take seeds from 0 to {}", seed, kMaxOptunaSeed));
  impl_ = std::make_unique<Impl>();
  impl_->ordinal = sampler == "cmaes";
  impl_->seed = seed;
  impl_->optuna = py::module_::import("optuna");
  impl_->optuna.attr("logging").attr("set_verbosity")(impl_->optuna.attr("logging").attr("WARNING"));
  // constant_liar, multivariate and with_margin are "experimental" in Optuna 3.1: a warning per
  // study is noise on our stderr.
  py::module_::import("warnings").attr("filterwarnings")(
      "ignore", py::arg("category") = impl_->optuna.attr("exceptions").attr("ExperimentalWarning"));
  py::object samplers = impl_->optuna.attr("samplers");
  py::object s;
  try {
    if (sampler == "tpe")
      s = samplers.attr("TPESampler")(py::arg("seed") = seed, py::arg("constant_liar") = true,
                                      py::arg("multivariate") = true);
    else if (sampler == "cmaes") s = samplers.attr("CmaEsSampler")(py::arg("seed") = seed, py::arg("with_margin") = true);
    else if (sampler == "random") s = samplers.attr("RandomSampler")(py::arg("seed") = seed);
    else
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("unknown Optuna sampler '{}': choose tpe, cmaes or random", sampler));
    impl_->study = impl_->optuna.attr("create_study")(py::arg("direction") = "minimize",
                                                        py::arg("sampler") = s);
  } catch (const py::error_already_set& e) {
    throw Error(ErrorKind::Unavailable, fmt::format("Optuna could not start a {} study: {}", sampler, e.what()));
  }
}

OptunaStudy::~OptunaStudy() {
  if (!impl_) return;
  py::gil_scoped_acquire gil;
  impl_.reset();  // Python references drop with the GIL held
}

AskedTrial OptunaStudy::ask(const std::vector<CategoricalParam>& space) {
  py::gil_scoped_acquire gil;
  py::dict dists;
  py::object distributions = impl_->optuna.attr("distributions");
  for (const CategoricalParam& p : space) {
    if (impl_->ordinal)
      dists[py::str(p.name)] = distributions.attr("IntDistribution")(0, static_cast<int>(p.choices.size()) - 1);
    else
      dists[py::str(p.name)] = distributions.attr("CategoricalDistribution")(py::cast(p.choices));
  }
  py::object trial;
  try {
    trial = impl_->study.attr("ask")(py::arg("fixed_distributions") = dists);
  } catch (const py::error_already_set& e) {
    // A sampler can break down numerically (CMA-ES: "Eigenvalues did not converge" after its
    // step size overflows on a plateau); the caller decides how to go on without it.
    throw SamplerFailed(e.what());
  }
  AskedTrial out;
  out.number = trial.attr("number").cast<int>();
  py::dict params = trial.attr("params").cast<py::dict>();
  for (const CategoricalParam& p : space) {
    std::int64_t v = params[py::str(p.name)].cast<std::int64_t>();
    out.values[p.name] = impl_->ordinal ? p.choices.at(static_cast<size_t>(v)) : v;
  }
  impl_->pending[out.number] = trial;
  return out;
}

void OptunaStudy::enqueue(const std::map<std::string, std::int64_t>& values, const std::vector<CategoricalParam>& space) {
  py::gil_scoped_acquire gil;
  py::dict params;
  for (const CategoricalParam& p : space) {
    std::int64_t v = values.at(p.name);
    params[py::str(p.name)] = impl_->ordinal ? index_of(p, v) : v;  // CMA-ES works with indices
  }
  impl_->study.attr("enqueue_trial")(params);
}

void OptunaStudy::tell(int number, double value) {
  py::gil_scoped_acquire gil;
  auto it = impl_->pending.find(number);
  if (it == impl_->pending.end())
    throw Error(ErrorKind::InvalidInput, fmt::format("Optuna trial {} was never asked or already told", number));
  impl_->study.attr("tell")(it->second, value);
  impl_->pending.erase(it);
}

void OptunaStudy::tell_failed(int number) {
  py::gil_scoped_acquire gil;
  auto it = impl_->pending.find(number);
  if (it == impl_->pending.end())
    throw Error(ErrorKind::InvalidInput, fmt::format("Optuna trial {} was never asked or already told", number));
  py::object fail = impl_->optuna.attr("trial").attr("TrialState").attr("FAIL");
  impl_->study.attr("tell")(it->second, py::none(), py::arg("state") = fail);
  impl_->pending.erase(it);
}

void OptunaStudy::restart_cmaes_at(const std::map<std::string, std::int64_t>& x0,
                                   const std::vector<CategoricalParam>& space, double sigma0) {
  if (!impl_->ordinal) throw Error(ErrorKind::InvalidInput, "restart_cmaes_at: the study's sampler is not CMA-ES");
  if (!impl_->pending.empty())
    throw Error(ErrorKind::InvalidInput, "restart_cmaes_at: trials are still pending (tell them first)");
  py::gil_scoped_acquire gil;
  py::dict mean;
  for (const CategoricalParam& p : space) mean[py::str(p.name)] = index_of(p, x0.at(p.name));
  // A new study: Optuna's CMA-ES restores its state from the study's trials and would ignore
  // x0 in the old one. Its earlier trials were not CMA-ES's own, so CMA-ES loses nothing.
  py::object s = impl_->optuna.attr("samplers").attr("CmaEsSampler")(
      py::arg("x0") = mean, py::arg("sigma0") = sigma0, py::arg("seed") = (impl_->seed + 1) % (kMaxOptunaSeed + 1),
      py::arg("with_margin") = true);
  impl_->study = impl_->optuna.attr("create_study")(py::arg("direction") = "minimize", py::arg("sampler") = s);
}

std::string OptunaStudy::optuna_version() const {
  py::gil_scoped_acquire gil;
  return impl_->optuna.attr("__version__").cast<std::string>();
}

}  // namespace mgpu::search
