// The A-fragment registers of an in-flight wgmma.mma_async (A from registers). PTX ISA
// 9.7.15.7.3 "wgmma.wait_group":
//   "Accessing the accumulator register or the input register containing the fragments of
//    matrix A of a wgmma.mma_async instruction without first performing a wgmma.wait_group
//    instruction that waits on a wgmma-group including that wgmma.mma_async instruction is
//    undefined behavior."
// "Accessing" covers reads as well as writes, so both are reported (ReportKind::AccumulatorEarly,
// the checker of the accumulator rule in the same sentence). A later wgmma.mma_async reading the
// same registers as its own A fragment is not reported: CUTLASS's RS mainloops issue several
// wgmma.mma_async with one A fragment in one batch (cute::gemm over (V,M) x (V,N) passes A(_,m)
// for every n), and both operations only read the registers.
//
// One warpgroup, m64n64k16 bf16: B in shared memory (no swizzle, K-major: LBO 128, SBO 256), A's
// fragment loaded into %r10..%r13 by the ISA figure "WGMMA .m64nNk16 register fragment layout for
// matrix A" (warp w rows 16w..16w+15; groupID = lane / 4, threadID_in_group = lane % 4; a0,a1 row
// groupID, columns 2*tig + {0,1}; a2,a3 8 rows down; a4..a7 the same 8 columns right), the
// accumulators %f0..%f31 from C (the same figure for D), and D checked against float64.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/emu/device.h"
#include "core/emu/exec/scalar.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

using emu_test::all;
using emu_test::clean;
using emu_test::count_seeds;
using emu_test::kSeeds;

constexpr int kN = 64;
constexpr std::uint32_t kA = 0, kB = 2048, kC = kB + 32 * kN;  // input byte offsets

std::pair<int, int> a_coord(int t, int j) {  // (row, column) of element j of thread t's A fragment
  const int warp = t / 32, lane = t % 32, group = lane / 4, tig = lane % 4;
  return {16 * warp + group + ((j / 2) % 2) * 8, 2 * tig + (j & 1) + (j >= 4 ? 8 : 0)};
}
std::pair<int, int> d_coord(int t, int r) {  // (row, column) of accumulator register r of thread t
  const int warp = t / 32, lane = t % 32, group = lane / 4, tig = lane % 4;
  return {16 * warp + group + ((r / 2) % 2) * 8, 8 * (r / 4) + 2 * tig + (r & 1)};
}

struct WgmmaAInFlight : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  std::vector<double> A, B, C;  // 64x16, 16xN (B[k][n]), 64xN

  static std::string acc() {
    std::string s = "{";
    for (int r = 0; r < kN / 2; ++r) s += (r ? ", %f" : "%f") + std::to_string(r);
    return s + "}";
  }
  // wgmma with A = %r10..%r13, scale-d from `pred` (%p1 true).
  static std::string mma(const std::string& pred = "%p1") {
    return "  wgmma.mma_async.sync.aligned.m64n" + std::to_string(kN) + "k16.f32.bf16.bf16 " + acc() +
           ", {%r10, %r11, %r12, %r13}, %rd1, " + pred + ", 1, 1, 0;\n";
  }
  static constexpr const char* kFence = "  wgmma.fence.sync.aligned;\n";
  static constexpr const char* kCommit = "  wgmma.commit_group.sync.aligned;\n";
  static std::string wait(int n) { return "  wgmma.wait_group.sync.aligned " + std::to_string(n) + ";\n"; }

  static std::string kernel(const std::string& name, const std::string& middle) {
    std::string s = ".visible .entry " + name + "(.param .u64 pin, .param .u64 pout)\n{\n"
                    "  .reg .pred %p<4>;\n  .reg .b32 %r<32>;\n  .reg .b64 %rd<16>;\n  .reg .f32 %f<36>;\n"
                    "  .shared .align 1024 .b8 sm[" + std::to_string(32 * kN) + "];\n"
                    "  ld.param.u64 %rd2, [pin];\n  ld.param.u64 %rd3, [pout];\n"
                    "  mov.u32 %r20, 1;\n  setp.ne.u32 %p1, %r20, 0;\n"
                    "  mov.u32 %r1, %tid.x;\n  shl.b32 %r2, %r1, 2;\n  cvt.u64.u32 %rd4, %r2;\n"
                    "  add.s64 %rd5, %rd2, " + std::to_string(kB) + ";\n  add.s64 %rd5, %rd5, %rd4;\n"
                    "  mov.u32 %r3, sm;\n  add.u32 %r4, %r3, %r2;\n";
    for (int i = 0; i < 32 * kN / 512; ++i)
      s += "  ld.global.u32 %r5, [%rd5+" + std::to_string(512 * i) + "];\n  st.shared.u32 [%r4+" + std::to_string(512 * i) + "], %r5;\n";
    s += "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
         "  shl.b32 %r6, %r1, 4;\n  cvt.u64.u32 %rd6, %r6;\n  add.s64 %rd7, %rd2, %rd6;\n";
    for (int i = 0; i < 4; ++i) s += "  ld.global.u32 %r" + std::to_string(10 + i) + ", [%rd7+" + std::to_string(kA + 4 * i) + "];\n";
    s += "  mul.wide.u32 %rd8, %r1, " + std::to_string(2 * kN) + ";\n  add.s64 %rd9, %rd2, %rd8;\n  add.s64 %rd9, %rd9, " +
         std::to_string(kC) + ";\n  add.s64 %rd10, %rd3, %rd8;\n";
    for (int r = 0; r < kN / 2; ++r) s += "  ld.global.f32 %f" + std::to_string(r) + ", [%rd9+" + std::to_string(4 * r) + "];\n";
    const std::uint64_t desc = ((128u >> 4) << 16) | (std::uint64_t{256u >> 4} << 32);
    s += "  shr.u32 %r7, %r3, 4;\n  cvt.u64.u32 %rd1, %r7;\n  or.b64 %rd1, %rd1, " + std::to_string(desc) + ";\n";
    s += middle;
    for (int r = 0; r < kN / 2; ++r) s += "  st.global.f32 [%rd10+" + std::to_string(4 * r) + "], %f" + std::to_string(r) + ";\n";
    return s + "  ret;\n}\n";
  }

  void SetUp() override {
    A.assign(64 * 16, 0);
    B.assign(16 * kN, 0);
    C.assign(64 * kN, 0);
    for (int i = 0; i < 64 * 16; ++i) A[i] = (i * 7 % 17 - 8) / 4.0;
    for (int i = 0; i < 16 * kN; ++i) B[i] = (i * 5 % 13 - 6) / 2.0;
    for (int mm = 0; mm < 64; ++mm)
      for (int j = 0; j < kN; ++j) C[mm * kN + j] = ((mm - j) % 9) / 8.0;
    // The write is `mov.b32 %r11, 0`: it changes the A fragment, and the twin shows D is
    // computed from the value the operation was issued with.
    const std::string write = "  mov.b32 %r11, 0;\n", read = "  mov.b32 %r21, %r11;\n";
    m = &dev.load(".version 8.0\n.target sm_90a\n.address_size 64\n" +
                  kernel("write_in_flight", kFence + mma() + kCommit + write + wait(0)) +
                  kernel("write_after_wait", kFence + mma() + kCommit + wait(0) + write) +
                  kernel("read_in_flight", kFence + mma() + kCommit + read + wait(0)) +
                  kernel("read_after_wait", kFence + mma() + kCommit + wait(0) + read) +
                  // Two operations reading one A fragment (D = C + A x B + A x B), in one group ...
                  kernel("shared_a_one_group", kFence + mma() + mma() + kCommit + wait(0)) +
                  // ... and in two groups, the first retired (wait_group 1) while the second still
                  // holds the registers: a write there is still early, after wait_group 0 it is not.
                  kernel("shared_a_two_groups", kFence + mma() + kCommit + mma() + kCommit + wait(1) + wait(0) + write) +
                  kernel("shared_a_write_after_first_retired", kFence + mma() + kCommit + mma() + kCommit + wait(1) + write + wait(0)));
  }

  std::vector<std::uint8_t> input() const {
    std::vector<std::uint8_t> in(kC + 128 * (kN / 2) * 4, 0);
    for (int t = 0; t < 128; ++t)
      for (int j = 0; j < 8; ++j) {
        auto [mm, k] = a_coord(t, j);
        const std::uint16_t h = f32_to_bf16_rn(static_cast<float>(A[mm * 16 + k]));
        std::memcpy(&in[kA + t * 16 + 2 * j], &h, 2);  // register j / 2, half j % 2
      }
    for (int k = 0; k < 16; ++k)
      for (int j = 0; j < kN; ++j) {
        const std::uint16_t h = f32_to_bf16_rn(static_cast<float>(B[k * kN + j]));
        std::memcpy(&in[kB + (j / 8) * 256 + (k / 8) * 128 + (j % 8) * 16 + (k % 8) * 2], &h, 2);
      }
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < kN / 2; ++r) {
        auto [mm, j] = d_coord(t, r);
        const float c = static_cast<float>(C[mm * kN + j]);
        std::memcpy(&in[kC + (t * (kN / 2) + r) * 4], &c, 4);
      }
    return in;
  }

  LaunchResult launch(const char* name, std::uint64_t seed, std::vector<float>* d = nullptr) {
    const std::vector<std::uint8_t> in = input();
    std::uint64_t din = dev.memory().alloc(in.size());
    std::memcpy(dev.memory().find(din, in.size()), in.data(), in.size());
    const std::size_t out_bytes = 128 * (kN / 2) * 4;
    std::uint64_t dout = dev.memory().alloc(out_bytes);
    std::memset(dev.memory().find(dout, out_bytes), 0, out_bytes);
    LaunchConfig c;
    c.block[0] = 128;
    c.seed = seed;
    c.detect_races = true;
    void* args[] = {&din, &dout};
    LaunchResult r = dev.launch(*m, name, c, args);
    if (d) {
      d->resize(128 * (kN / 2));
      std::memcpy(d->data(), dev.memory().find(dout, out_bytes), out_bytes);
    }
    return r;
  }

  // D == C + times * (A x B) in every register of every thread.
  void expect_d(const std::vector<float>& d, int times, const std::string& what) const {
    int bad = 0;
    for (int t = 0; t < 128 && bad < 8; ++t)
      for (int r = 0; r < kN / 2 && bad < 8; ++r) {
        auto [mm, j] = d_coord(t, r);
        double want = C[mm * kN + j];
        for (int i = 0; i < times; ++i)
          for (int k = 0; k < 16; ++k) want += A[mm * 16 + k] * B[k * kN + j];
        if (static_cast<double>(d[t * (kN / 2) + r]) != want) {
          ADD_FAILURE() << what << ": thread " << t << " d" << r << " = D[" << mm << "][" << j << "] is " << d[t * (kN / 2) + r]
                        << ", float64 reference " << want;
          ++bad;
        }
      }
  }

  // An AccumulatorEarly report naming %r11 as an A fragment of the in-flight wgmma.mma_async.
  static bool a_report(const LaunchResult& r) {
    for (const auto& x : r.reports)
      if (x.kind == ReportKind::AccumulatorEarly && x.message.find("register %r11 ") != std::string::npos &&
          x.message.find("A fragment of the wgmma.mma_async at pc") != std::string::npos)
        return true;
    return false;
  }
  // The only report is that one (nothing else changes in the faulty kernels).
  static bool only_a_report(const LaunchResult& r) { return r.ok && r.reports.size() == 1 && a_report(r); }
};

TEST_F(WgmmaAInFlight, AFragmentWrittenBeforeTheWaitGroupIsReportedUnderEverySchedule) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch("write_in_flight", s); }, only_a_report, &example), kSeeds) << example;
  LaunchResult r = launch("write_in_flight", 1);
  ASSERT_EQ(r.reports.size(), 1u) << all(r);
  const Report& x = r.reports[0];
  EXPECT_NE(x.message.find("register %r11 written while it is an A fragment"), std::string::npos) << all(r);
  EXPECT_NE(x.message.find("PTX line "), std::string::npos) << all(r);
  EXPECT_NE(x.message.find("a wgmma.wait_group waiting on its wgmma-group must retire it"), std::string::npos) << all(r);
}

TEST_F(WgmmaAInFlight, AFragmentWrittenAfterTheWaitGroupIsCleanUnderEveryScheduleAndDIsRight) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch("write_after_wait", s); }, clean, &example), kSeeds) << example;
  std::vector<float> d;
  LaunchResult r = launch("write_after_wait", 1, &d);
  ASSERT_TRUE(clean(r)) << all(r);
  expect_d(d, 1, "C + A x B");
}

// "Accessing": the ISA text does not limit the rule to writes, so a read is reported too.
TEST_F(WgmmaAInFlight, AFragmentReadBeforeTheWaitGroupIsReportedUnderEverySchedule) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch("read_in_flight", s); }, only_a_report, &example), kSeeds) << example;
  LaunchResult r = launch("read_in_flight", 1);
  EXPECT_NE(all(r).find("register %r11 read while it is an A fragment"), std::string::npos) << all(r);
}

TEST_F(WgmmaAInFlight, AFragmentReadAfterTheWaitGroupIsCleanUnderEverySchedule) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch("read_after_wait", s); }, clean, &example), kSeeds) << example;
}

TEST_F(WgmmaAInFlight, TwoMmasSharingOneAFragmentInFlightTogetherAreClean) {
  for (const char* k : {"shared_a_one_group", "shared_a_two_groups"}) {
    std::string example;
    EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch(k, s); }, clean, &example), kSeeds) << k << ": " << example;
    std::vector<float> d;
    LaunchResult r = launch(k, 1, &d);
    ASSERT_TRUE(clean(r)) << k << ": " << all(r);
    expect_d(d, 2, std::string(k) + ": C + A x B + A x B");
  }
}

// The earlier of two sharers retired (wait_group 1), the later still in flight: the registers
// stay held until the wait_group that retires the later one.
TEST_F(WgmmaAInFlight, AFragmentStaysHeldByTheLaterSharerAfterTheEarlierRetires) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch("shared_a_write_after_first_retired", s); }, only_a_report, &example),
            kSeeds)
      << example;
}

}  // namespace
}  // namespace mgpu::emu
