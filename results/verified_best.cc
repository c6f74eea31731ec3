#include "results/verified_best.h"

#include <map>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::results {
namespace {

// At most this many configs are named in a message; the count is always whole.
constexpr size_t kNamed = 5;

}  // namespace

std::string verification_of(Store& store, const TrialRow& row) {
  return std::string(verification_label(row, store.verification({row.verdict_config(), row.kernel_hash, row.problem_class})));
}

VerifiedBest verified_best(Store& store, bool include_model, const std::vector<TemplateId>& current) {
  VerifiedBest out;
  for (TrialRow& r : store.best(include_model, current, &out.failed)) {
    std::string label = verification_of(store, r);
    out.rows.push_back({std::move(r), std::move(label)});
  }
  return out;
}

void require_verified(const VerifiedBest& best) {
  std::vector<std::string> named;
  size_t unverified = 0;
  for (const LabelledRow& r : best.rows) {
    if (r.verification == "hardware" || r.verification == "virtual") continue;
    if (++unverified <= kNamed)
      named.push_back(fmt::format("{} {} {} ({})", r.row.tmpl.name, r.row.problem.key, r.row.config_json,
                                  r.verification));
  }
  if (unverified == 0) return;
  throw core::Error(core::ErrorKind::WrongResult,
                    fmt::format("--require-verified: {} of {} rows are not verified on hardware or on the virtual "
                                "device, nothing was written: {}{}",
                                unverified, best.rows.size(), fmt::join(named, "; "),
                                unverified > named.size() ? fmt::format("; and {} more", unverified - named.size())
                                                          : std::string()));
}

std::string skipped_note(Store& store, const std::vector<TrialRow>& failed) {
  if (failed.empty()) return "";
  std::map<std::string, const TrialRow*> configs;  // config -> one of its skipped rows
  for (const TrialRow& r : failed) configs.emplace(r.config_json, &r);
  std::vector<std::string> named;
  for (const auto& [config, r] : configs) {
    if (named.size() == kNamed) break;
    Verification v = store.verification({r->verdict_config(), r->kernel_hash, r->problem_class});
    named.push_back(fmt::format("{} at {}: {}", config, r->problem_class, v.failure ? v.failure->status : "failed"));
  }
  return fmt::format("{} rows skipped: failed verification on the virtual device ({} configs: {}{})", failed.size(),
                     configs.size(), fmt::join(named, "; "),
                     configs.size() > named.size() ? fmt::format("; and {} more", configs.size() - named.size())
                                                   : std::string());
}

}  // namespace mgpu::results
