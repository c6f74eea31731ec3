// Kernel evidence in the results store (schema 7, issue 19): kept once per kernel binary
// (kernel hash, backend, assembler), carried by merge, combined with the bank conflicts of the
// kernel's verification into the lints best and the report show; a schema-6 database is read
// as it is and migrated keeping every trial.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "core/sass/kernel_evidence.h"
#include "results/kernel_lints.h"
#include "results/merge.h"
#include "results/schema.h"
#include "results/store.h"

namespace mgpu::results {
namespace {

namespace fs = std::filesystem;

const TemplateId kTmpl{"matmul_sm90", "src1", "be1"};
const Environment kModel{"model:H100 SXM", "sm_90a", "9.0", 132, "", "", 0};
const ProblemRecord kProblem{"matmul", "m4096_n4096_k4096_bf16_bf16_kn", 4096, 4096, 4096, "bf16", "bf16", "kn"};
const std::string kBanks =
    "verified; shared-memory bank conflicts: 3584 extra wavefronts in 512 accesses (4096 wavefronts, ideal 512), "
    "worst PTX line 812 in $L__BB0_9: 3584 in 512 accesses";

class EvidenceStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mgpu-evidence-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// A kernel's evidence with `spills` bytes spilled and nothing else wrong.
EvidenceRecord spilling(const std::string& hash, int spills, const std::string& assembler = "ptxas") {
  core::KernelEvidence k;
  k.sass.function = "matmul";
  k.sass.has_main_loop = true;
  k.sass.main_loop.mma = 8;
  k.sass.main_loop.warpgroup_sync = 2;
  k.sass.whole.mma = 16;
  k.sass.whole.setmaxnreg = 2;
  k.ptx_has_setmaxnreg = true;
  k.spill_store_bytes = spills;
  return {hash, kTmpl.backend_hash, assembler, core::evidence_json(k), core::lints_json(core::lints(k)), ""};
}

TrialRecord model_trial(std::int64_t run, const std::string& hash, const std::string& source = "model",
                        const std::string& message = "") {
  TrialRecord t;
  t.run_id = run;
  t.tmpl = kTmpl;
  t.problem = kProblem;
  t.config_json = R"({"tile_m":128})";
  t.env = kModel;
  t.source = source;
  if (source == "model") t.median_ms = t.min_ms = t.mean_ms = 0.2;
  t.kernel_hash = hash;
  t.problem_class = "multi_tile";
  t.message = message;
  return t;
}

TEST_F(EvidenceStore, KeptOncePerKernelBackendAndAssembler) {
  Store s = Store::open(path("e.db"), OpenMode::ReadWrite);
  EXPECT_EQ(schema_version(s.db()), kSchemaVersion);
  s.record_evidence(spilling("aaaa", 0));
  s.record_evidence(spilling("aaaa", 64));  // the same binary again: the first record stands
  s.record_evidence(spilling("aaaa", 32, "nvjitlink"));
  ASSERT_TRUE(s.evidence("aaaa", "be1", "ptxas"));
  EXPECT_EQ(core::evidence_from_json(s.evidence("aaaa", "be1", "ptxas")->evidence).spill_store_bytes, 0);
  EXPECT_EQ(core::evidence_from_json(s.evidence("aaaa", "be1", "nvjitlink")->evidence).spill_store_bytes, 32);
  EXPECT_TRUE(s.evidence("aaaa", "be1"));      // any assembler
  EXPECT_FALSE(s.evidence("aaaa", "be2"));     // another toolchain: not this binary's SASS
  EXPECT_FALSE(s.evidence("bbbb", "be1"));
  EXPECT_FALSE(s.evidence("", "be1"));
  EXPECT_EQ(s.all_evidence().size(), 2u);
  EXPECT_FALSE(s.evidence("aaaa", "be1", "ptxas")->created_at.empty());
}

TEST_F(EvidenceStore, LintsCombineTheSassWithTheVerificationsBankCount) {
  Store s = Store::open(path("l.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "matmul", "0.1.0");
  s.record_evidence(spilling("aaaa", 96));
  s.record_trial(model_trial(run, "aaaa"));
  EXPECT_EQ(lints_text(kernel_lints(s, "aaaa", "be1")), "spills (banks not counted)");
  s.record_trial(model_trial(run, "aaaa", "emulate", kBanks));
  KernelLints k = kernel_lints(s, s.trials().front());
  EXPECT_TRUE(k.sass);
  EXPECT_TRUE(k.verified);
  ASSERT_EQ(k.lints.size(), 2u);
  EXPECT_EQ(k.lints[1].code, "bank-conflicts");
  EXPECT_EQ(lints_text(k), "spills, bank-conflicts (8.0-way)");
  // A clean kernel whose verification found no conflicts; one verified but never disassembled;
  // one with neither.
  s.record_evidence(spilling("cccc", 0));
  s.record_trial(model_trial(run, "cccc", "emulate", "verified"));
  EXPECT_EQ(lints_text(kernel_lints(s, "cccc", "be1")), "none");
  s.record_trial(model_trial(run, "dddd", "emulate", kBanks));
  EXPECT_EQ(lints_text(kernel_lints(s, "dddd", "be1")), "bank-conflicts (8.0-way) (no SASS evidence)");
  EXPECT_EQ(lints_text(kernel_lints(s, "eeee", "be1")), "not recorded");
  EXPECT_EQ(lints_text(kernel_lints(s, "", "be1")), "not recorded");
  // A failed verification is no count.
  TrialRecord failed = model_trial(run, "ffff", "emulate", kBanks);
  failed.status = "hazard";
  s.record_trial(failed);
  EXPECT_EQ(lints_text(kernel_lints(s, "ffff", "be1")), "not recorded");
}

TEST_F(EvidenceStore, MergeCarriesEvidenceOnce) {
  {
    Store a = Store::open(path("a.db"), OpenMode::ReadWrite);
    a.record_evidence(spilling("aaaa", 0));
    Store b = Store::open(path("b.db"), OpenMode::ReadWrite);
    b.record_evidence(spilling("aaaa", 0));
    b.record_evidence(spilling("bbbb", 8));
  }
  merge_databases({path("a.db"), path("b.db")}, path("out.db"));
  merge_databases({path("a.db"), path("b.db")}, path("out.db"));
  Store out = Store::open(path("out.db"), OpenMode::ReadOnly);
  EXPECT_EQ(out.all_evidence().size(), 2u);
  EXPECT_EQ(lints_text(kernel_lints(out, "bbbb", "be1")), "spills (banks not counted)");
}

TEST_F(EvidenceStore, ASchemaSixDatabaseIsReadAsItIsThenMigratedKeepingEverything) {
  {
    Store s = Store::open(path("v6.db"), OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", "matmul", "0.1.0");
    s.record_trial(model_trial(run, "aaaa"));
    s.record_trial(model_trial(run, "aaaa", "emulate", kBanks));
    s.db().exec("DROP TABLE kernel_evidence; ALTER TABLE problems DROP COLUMN fields; ALTER TABLE problems DROP COLUMN flops; PRAGMA user_version = 6");  // schema 6's shape
  }
  {
    Store old = Store::open(path("v6.db"), OpenMode::ReadOnly);  // read as it is, never migrated
    EXPECT_EQ(schema_version(old.db()), 6);
    EXPECT_EQ(old.trials().size(), 2u);
    EXPECT_FALSE(old.evidence("aaaa", "be1"));
    EXPECT_TRUE(old.all_evidence().empty());
    EXPECT_EQ(lints_text(kernel_lints(old, "aaaa", "be1")), "bank-conflicts (8.0-way) (no SASS evidence)");
  }
  Store s = Store::open(path("v6.db"), OpenMode::ReadWrite);
  EXPECT_EQ(schema_version(s.db()), kSchemaVersion);
  auto rows = s.trials();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel_hash, "aaaa");
  EXPECT_EQ(rows[0].median_ms, 0.2);
  EXPECT_EQ(rows[1].message, kBanks);
  EXPECT_TRUE(s.integrity_ok());
  s.record_evidence(spilling("aaaa", 0));
  EXPECT_EQ(lints_text(kernel_lints(s, rows[0])), "bank-conflicts (8.0-way)");
}

}  // namespace
}  // namespace mgpu::results
