#include "search/optuna_study.h"

#include <fmt/format.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include "core/error.h"
#include "search/python_runtime.h"

namespace py = pybind11;

namespace mgpu::search {

using core::Error;
using core::ErrorKind;

struct OptunaStudy::Impl {
  py::module_ optuna;
  py::object study;
  std::map<int, py::object> pending;  // asked, not yet told
};

OptunaStudy::OptunaStudy(const std::string& sampler, std::uint64_t seed) {
  ensure_python();
  py::gil_scoped_acquire gil;
  import_or_explain("optuna", "python3-optuna");
  impl_ = std::make_unique<Impl>();
  impl_->optuna = py::module_::import("optuna");
  impl_->optuna.attr("logging").attr("set_verbosity")(impl_->optuna.attr("logging").attr("WARNING"));
  py::object samplers = impl_->optuna.attr("samplers");
  py::object s;
  if (sampler == "tpe") s = samplers.attr("TPESampler")(py::arg("seed") = seed);
  else if (sampler == "cmaes") s = samplers.attr("CmaEsSampler")(py::arg("seed") = seed);
  else if (sampler == "random") s = samplers.attr("RandomSampler")(py::arg("seed") = seed);
  else
    throw Error(ErrorKind::InvalidInput,
                fmt::format("unknown Optuna sampler '{}': choose tpe, cmaes or random", sampler));
  impl_->study = impl_->optuna.attr("create_study")(py::arg("direction") = "minimize",
                                                      py::arg("sampler") = s);
}

OptunaStudy::~OptunaStudy() {
  if (!impl_) return;
  py::gil_scoped_acquire gil;
  impl_.reset();  // Python references drop with the GIL held
}

AskedTrial OptunaStudy::ask(const std::vector<CategoricalParam>& space) {
  py::gil_scoped_acquire gil;
  py::dict dists;
  py::object categorical = impl_->optuna.attr("distributions").attr("CategoricalDistribution");
  for (const CategoricalParam& p : space) dists[py::str(p.name)] = categorical(py::cast(p.choices));
  py::object trial = impl_->study.attr("ask")(py::arg("fixed_distributions") = dists);
  AskedTrial out;
  out.number = trial.attr("number").cast<int>();
  for (auto [k, v] : trial.attr("params").cast<py::dict>())
    out.values[k.cast<std::string>()] = v.cast<std::int64_t>();
  impl_->pending[out.number] = trial;
  return out;
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

std::string OptunaStudy::optuna_version() const {
  py::gil_scoped_acquire gil;
  return impl_->optuna.attr("__version__").cast<std::string>();
}

}  // namespace mgpu::search
