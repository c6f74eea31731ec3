// Verification as best and export show it (issue 17): every row labelled hardware / virtual /
// none, a config the virtual device failed never ranked or exported, require_verified refusing
// unverified rows. Databases are written by hand with Store::record_trial: emulate trials with
// a kernel hash and problem class, and model / cuda rows carrying the same key.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "results/export.h"
#include "results/store.h"
#include "results/verified_best.h"

namespace mgpu::results {
namespace {

namespace fs = std::filesystem;

const TemplateId kTmpl{"matmul_sm90", "src1", "be1"};
const Environment kH100{"NVIDIA H100 80GB HBM3", "sm_90a", "9.0", 132, "580.159.04", "13.0", 1980};
const Environment kModel{"model:H100 SXM", "sm_90a", "9.0", 132, "", "", 1980};
const ProblemRecord kProblem{"matmul", "m512_n512_k512_bf16_bf16_kn", 512, 512, 512, "bf16", "bf16", "kn"};

std::string cfg(int tile_n) { return fmt::format(R"({{"tile_m":128,"tile_n":{}}})", tile_n); }
std::string hash(int tile_n) { return fmt::format("kernel{}", tile_n); }
constexpr const char* kClass = "multi_tile";

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ResultsVerification : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mgpu-verified-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_.emplace(Store::open(path("r.db"), OpenMode::ReadWrite));
    run_ = store_->begin_run("tune", "matmul --device model", "0.1.0");
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  std::string path(const char* name) const { return (dir_ / name).string(); }

  // A timed row (model prediction or cuda measurement) of the config with tile_n, keyed like
  // the virtual device's trials of it.
  void timed(int tile_n, double ms, const std::string& source = "model") {
    TrialRecord t;
    t.run_id = run_;
    t.tmpl = kTmpl;
    t.problem = kProblem;
    t.config_json = cfg(tile_n);
    t.env = source == "cuda" ? kH100 : kModel;
    t.source = source;
    t.median_ms = t.min_ms = t.mean_ms = ms;
    t.noise = 0.001;
    t.samples_ms = {ms};
    if (source == "cuda") t.verification_error = 0.002;
    t.kernel_hash = hash(tile_n);
    t.problem_class = kClass;
    store_->record_trial(t);
  }
  // A virtual-device trial of that config: no times, the checker's report in the message.
  void emulated(int tile_n, const std::string& status) {
    TrialRecord t;
    t.run_id = run_;
    t.tmpl = kTmpl;
    t.problem = kProblem;
    t.config_json = cfg(tile_n);
    t.env = {"virtual sm_90a", "sm_90a", "9.0", 132, "", "", 0};
    t.source = "emulate";
    t.status = status;
    if (status == "ok" || status == "wrong_result") t.verification_error = status == "ok" ? 0.001 : 0.5;
    t.message = status == "ok" ? "" : fmt::format("{}: a stage released before the wgmma reading it retired", status);
    t.kernel_hash = hash(tile_n);
    t.problem_class = kClass;
    store_->record_trial(t);
  }

  fs::path dir_;
  std::optional<Store> store_;
  std::int64_t run_ = 0;
};

TEST_F(ResultsVerification, AConfigTheVirtualDeviceFailedNeverRanksTheNextFastestDoes) {
  timed(64, 0.010);  // the fastest prediction, but its kernel races
  emulated(64, "ok");
  emulated(64, "hazard");  // one bad schedule of several fails the key
  timed(128, 0.020);
  emulated(128, "ok");
  timed(256, 0.030);
  std::vector<TrialRow> failed;
  std::vector<TrialRow> best = store_->best(true, {}, &failed);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config_json, cfg(128));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].config_json, cfg(64));
  EXPECT_EQ(failed[0].source, "model");
  std::string note = skipped_note(*store_, failed);
  EXPECT_NE(note.find("1 rows skipped: failed verification on the virtual device"), std::string::npos) << note;
  EXPECT_NE(note.find(cfg(64) + " at multi_tile: hazard"), std::string::npos) << note;
  EXPECT_EQ(skipped_note(*store_, {}), "");
}

TEST_F(ResultsVerification, AMeasuredRowWhoseKernelFailedVirtuallyDoesNotRankEither) {
  // The GPU compared it with cuBLAS and it matched this time; the virtual device found a race:
  // a race is a race even when one run got lucky.
  timed(64, 0.010, "cuda");
  emulated(64, "deadlock");
  timed(128, 0.020, "cuda");
  std::vector<TrialRow> failed;
  std::vector<TrialRow> best = store_->best(false, {}, &failed);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config_json, cfg(128));
  EXPECT_EQ(failed.size(), 1u);
}

TEST_F(ResultsVerification, EachRowIsLabelledHardwareVirtualOrNone) {
  timed(64, 0.010, "cuda");
  timed(128, 0.020);
  emulated(128, "ok");
  timed(128, 0.021);  // a second prediction of the same key: still the one verdict
  VerifiedBest vb = verified_best(*store_, true);
  ASSERT_EQ(vb.rows.size(), 2u);  // the cuda winner and the model winner (different devices)
  for (const LabelledRow& r : vb.rows)
    EXPECT_EQ(r.verification, r.row.source == "cuda" ? "hardware" : "virtual") << r.row.config_json;
  EXPECT_NO_THROW(require_verified(vb));

  timed(256, 0.005);  // predicted fastest, never run on the virtual device
  vb = verified_best(*store_, true);
  ASSERT_EQ(vb.rows.size(), 2u);
  for (const LabelledRow& r : vb.rows)
    if (r.row.source == "model") {
      EXPECT_EQ(r.verification, "none");
    }
  try {
    require_verified(vb);
    FAIL() << "an unverified row was accepted";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::WrongResult);  // exit 1: the work failed, not bad input
    std::string m = e.what();
    EXPECT_NE(m.find("1 of 2 rows are not verified"), std::string::npos) << m;
    EXPECT_NE(m.find(cfg(256) + " (none)"), std::string::npos) << m;
    EXPECT_NE(m.find("nothing was written"), std::string::npos) << m;
  }
}

TEST_F(ResultsVerification, ExportsCarryTheLabelAndNeverTheFailedConfig) {
  timed(64, 0.010);
  emulated(64, "wrong_result");
  timed(128, 0.020);
  emulated(128, "ok");
  ProblemRecord other{"matmul", "m4096_n4096_k4096_bf16_bf16_kn", 4096, 4096, 4096, "bf16", "bf16", "kn"};
  TrialRecord unverified;
  unverified.run_id = run_;
  unverified.tmpl = kTmpl;
  unverified.problem = other;
  unverified.config_json = cfg(256);
  unverified.env = kModel;
  unverified.source = "model";
  unverified.median_ms = 0.5;
  store_->record_trial(unverified);

  EXPECT_EQ(export_json(*store_, path("json"), true), 2);
  nlohmann::json doc = nlohmann::json::parse(slurp(path("json") + "/model_h100_sxm__matmul_sm90.json"));
  EXPECT_EQ(doc["entries"][kProblem.key]["config"]["tile_n"], 128);  // not the faster, wrong 64
  EXPECT_EQ(doc["entries"][kProblem.key]["verification"], "virtual");
  EXPECT_EQ(doc["entries"][other.key]["verification"], "none");

  EXPECT_EQ(export_cpp(*store_, path("tuned.h"), true), 2);
  std::ofstream(path("use.cc")) << R"(#include "tuned.h"
using namespace mgpu_tuned;
static_assert(lookup_matmul_sm90("sm_90a", {512, 512, 512, "bf16", "bf16", "kn"})->tile_n == 128);
static_assert(lookup_matmul_sm90("sm_90a", {512, 512, 512, "bf16", "bf16", "kn"})->verification == "virtual");
static_assert(lookup_matmul_sm90("sm_90a", {4096, 4096, 4096, "bf16", "bf16", "kn"})->verification == "none");
int main() {}
)";
  std::string cmd = fmt::format("cd {} && c++ -std=c++17 -Wall -Wextra -Werror -c use.cc -o use.o 2> err.txt", dir_.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("err.txt")) << slurp(path("tuned.h"));

  // csv lists every trial (the failed one too, as data) and ends each row with its label.
  EXPECT_EQ(export_csv(*store_, path("t.csv"), true), 5);
  std::string csv = slurp(path("t.csv"));
  EXPECT_NE(csv.find(",message,verification\n"), std::string::npos);
  std::istringstream lines(csv);
  std::string line;
  std::map<std::string, int> labels;
  std::getline(lines, line);
  while (std::getline(lines, line)) ++labels[line.substr(line.rfind(',') + 1)];
  EXPECT_EQ(labels["failed"], 2);   // the model row and the emulate row of tile_n 64
  EXPECT_EQ(labels["virtual"], 2);  // ... of tile_n 128
  EXPECT_EQ(labels["none"], 1);     // tile_n 256
}

TEST_F(ResultsVerification, RequiringVerifiedRowsLeavesTheOutputsUntouched) {
  timed(64, 0.010);  // predicted, never verified
  std::ofstream(path("tuned.h")) << "// before\n";
  EXPECT_THROW(export_cpp(*store_, path("tuned.h"), true, {}, {}, {}, /*require_verified_rows=*/true), core::Error);
  EXPECT_EQ(slurp(path("tuned.h")), "// before\n");
  EXPECT_THROW(export_json(*store_, path("json"), true, {}, {}, nullptr, /*require_verified_rows=*/true), core::Error);
  EXPECT_FALSE(fs::exists(path("json")));
  emulated(64, "ok");
  EXPECT_EQ(export_cpp(*store_, path("tuned.h"), true, {}, {}, {}, true), 1);
  EXPECT_EQ(export_json(*store_, path("json"), true, {}, {}, nullptr, true), 1);
}

}  // namespace
}  // namespace mgpu::results
