// The attention kernel's launch preparation (kernels/attention/device_run.h) through the CUDA
// driver API on the virtual device -- the code path a GPU runs, with the driver swapped -- for
// a ragged causal GQA problem and an f16 head-dim-128 one: within tolerance, no findings.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "kernels/attention/device_run.h"

namespace mgpu::kernels::attention {
namespace {

class AttentionOnTheVirtualDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::setenv("MGPU_CUDA_DRIVER", MGPU_VCUDA_LIB, 1); }
};

AttentionProblem problem(std::int64_t h, std::int64_t kvh, std::int64_t sq, std::int64_t skv, std::int64_t d, bool causal,
                         DType t) {
  AttentionProblem p;
  p.batch = 2;
  p.heads = h;
  p.kv_heads = kvh;
  p.seq_q = sq;
  p.seq_kv = skv;
  p.head_dim = d;
  p.causal = causal;
  p.dtype = t;
  return p;
}

void expect_clean(const AttentionRun& r) {
  EXPECT_TRUE(r.compared);
  EXPECT_TRUE(r.comparison.ok) << r.comparison.describe();
  ASSERT_FALSE(r.device_report.empty()) << "the driver loaded is not the virtual device";
  const nlohmann::json j = nlohmann::json::parse(r.device_report);
  EXPECT_TRUE(j.value("reports", nlohmann::json::array()).empty()) << r.device_report;
  EXPECT_EQ(r.spill_bytes, 0);
}

TEST_F(AttentionOnTheVirtualDevice, RaggedCausalGroupedQuery) {
  expect_clean(run_attention(problem(4, 2, 150, 230, 64, true, DType::BF16), {64, 64, 2}, 1));
}

TEST_F(AttentionOnTheVirtualDevice, HeadDim128F16) {
  expect_clean(run_attention(problem(2, 1, 100, 300, 128, false, DType::F16), {64, 128, 2}, 2));
}

}  // namespace
}  // namespace mgpu::kernels::attention
