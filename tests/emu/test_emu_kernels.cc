// Kernels run on the virtual device: nvcc's PTX for small CUDA kernels, the TMA/mbarrier/wgmma
// kernels the templates' primitives make, and the faulty variants each checker must catch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/emu/device.h"
#include "tests/emu/emu_test_util.h"
#include "core/emu/engines/tensor_map.h"
#include "core/half.h"

namespace mgpu::emu {
namespace {

using emu_test::has;
using emu_test::all;

std::string read_ptx(const char* name) {
  std::ifstream f(std::string(MGPU_EMU_PTX_DIR) + "/" + name + ".ptx");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Fixture : ::testing::Test {
  Device dev;
  std::uint64_t upload(const void* data, std::size_t bytes) {
    std::uint64_t a = dev.memory().alloc(bytes);
    std::memcpy(dev.memory().find(a, bytes), data, bytes);
    return a;
  }
  template <typename T>
  std::vector<T> download(std::uint64_t a, std::size_t n) {
    std::vector<T> v(n);
    std::memcpy(v.data(), dev.memory().find(a, n * sizeof(T)), n * sizeof(T));
    return v;
  }
  static LaunchConfig cfg(std::uint32_t grid, std::uint32_t block, std::uint64_t seed = 1) {
    LaunchConfig c;
    c.grid[0] = grid;
    c.block[0] = block;
    c.seed = seed;
    return c;
  }
};

TEST_F(Fixture, VectorAddWithPrintf) {
  LoadedModule& m = dev.load(read_ptx("basics"));
  const int n = 1000;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) { a[i] = float(i); b[i] = 0.5f * float(i); }
  std::uint64_t da = upload(a.data(), n * 4), db = upload(b.data(), n * 4), dc = dev.memory().alloc(n * 4);
  int nn = n;
  void* args[] = {&da, &db, &dc, &nn};
  LaunchResult r = dev.launch(m, "vector_add", cfg(8, 128), args);
  ASSERT_TRUE(r.ok) << all(r);
  auto c = download<float>(dc, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], 1.5f * float(i)) << i;
  EXPECT_EQ(r.printf_output, "n=1000 first=0.0\n");
}

TEST_F(Fixture, ShuffleReductionAndAtomics) {
  LoadedModule& m = dev.load(read_ptx("basics"));
  std::vector<int> in(256);
  long expect = 0;
  for (int i = 0; i < 256; ++i) { in[i] = i * 7 - 300; expect += in[i]; }
  std::uint64_t din = upload(in.data(), in.size() * 4);
  int zero = 0;
  std::uint64_t dout = upload(&zero, 4);
  void* args[] = {&din, &dout};
  LaunchResult r = dev.launch(m, "warp_sum", cfg(2, 128), args);
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_EQ(download<int>(dout, 1)[0], expect);
}

TEST_F(Fixture, SharedMemoryAndBarrier) {
  LoadedModule& m = dev.load(read_ptx("basics"));
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = i;
  std::uint64_t din = upload(in.data(), 1024), dout = dev.memory().alloc(1024);
  void* args[] = {&din, &dout};
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    LaunchResult r = dev.launch(m, "block_reverse", cfg(1, 256, seed), args);
    ASSERT_TRUE(r.ok) << all(r);
    auto out = download<int>(dout, 256);
    for (int i = 0; i < 256; ++i) ASSERT_EQ(out[i], 255 - i);
  }
}

TEST_F(Fixture, OutOfBoundsStoreFaultsNamingTheAddress) {
  LoadedModule& m = dev.load(read_ptx("basics"));
  std::uint64_t p = dev.memory().alloc(64 * 4);
  int n = 40;  // threads 24.. write past the 64-int allocation
  void* args[] = {&p, &n};
  LaunchResult r = dev.launch(m, "out_of_bounds", cfg(1, 64), args);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::OutOfBounds) << all(r);
  EXPECT_NE(r.reports[0].message.find("illegal address"), std::string::npos);
  EXPECT_GT(r.reports[0].where.line, 0);
}

TEST_F(Fixture, BarrierReachedByHalfTheBlockDeadlocks) {
  LoadedModule& m = dev.load(read_ptx("basics"));
  std::uint64_t p = dev.memory().alloc(64 * 4);
  void* args[] = {&p};
  LaunchResult r = dev.launch(m, "diverged_sync", cfg(1, 64), args);
  ASSERT_FALSE(r.ok);
  EXPECT_TRUE(r.reports[0].kind == ReportKind::Deadlock) << all(r);
}

TEST_F(Fixture, RaceDetectorFindsTheMissingBarrierAndOnlyIt) {
  LoadedModule& m = dev.load(read_ptx("basics"));
  std::vector<int> in(256);
  for (int i = 0; i < 256; ++i) in[i] = i;
  std::uint64_t din = upload(in.data(), 1024), dout = dev.memory().alloc(1024);
  void* args[] = {&din, &dout};
  LaunchConfig c = cfg(1, 256, 1);
  c.detect_races = true;
  LaunchResult ok = dev.launch(m, "block_reverse", c, args);
  ASSERT_TRUE(ok.ok) << all(ok);
  EXPECT_TRUE(ok.reports.empty()) << all(ok);
  LaunchResult racy = dev.launch(m, "racy_reverse", c, args);
  ASSERT_TRUE(racy.ok) << all(racy);
  ASSERT_TRUE(has(racy, ReportKind::Race)) << all(racy);
  EXPECT_NE(all(racy).find("no barrier orders them"), std::string::npos) << all(racy);
  c.detect_races = false;  // opt-in: without it the same kernel runs silently
  EXPECT_FALSE(has(dev.launch(m, "racy_reverse", c, args), ReportKind::Race));
}

TEST_F(Fixture, ShuffleByALaneOutsideItsMembermaskFaults) {
  LoadedModule& m = dev.load(read_ptx("basics"));
  std::uint64_t p = dev.memory().alloc(32 * 4);
  void* args[] = {&p};
  LaunchResult r = dev.launch(m, "shfl_outside_mask", cfg(1, 32), args);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::NotConverged) << all(r);
  EXPECT_NE(r.reports[0].message.find("lanes 0xffff0000 execute it outside its membermask 0x0000ffff"), std::string::npos) << all(r);
}

// --- TMA and mbarrier ---------------------------------------------------------------------

struct Async : Fixture {
  LoadedModule* m = nullptr;
  std::vector<std::uint16_t> host_in;
  std::uint64_t din = 0, dout = 0;
  alignas(64) std::uint8_t map_in[128], map_out[128];
  void SetUp() override {
    m = &dev.load(read_ptx("async"));
    host_in.resize(64 * 64);
    for (int i = 0; i < 64 * 64; ++i) host_in[i] = core::to_bf16(float(i % 251) - 100.0f);
    din = upload(host_in.data(), host_in.size() * 2);
    dout = dev.memory().alloc(host_in.size() * 2);
    std::memset(dev.memory().find(dout, host_in.size() * 2), 0, host_in.size() * 2);
    encode(map_in, din);
    encode(map_out, dout);
  }
  static void encode(std::uint8_t* map, std::uint64_t base) {
    std::uint64_t dims[2] = {64, 64}, strides[1] = {128};
    std::uint32_t box[2] = {64, 64}, es[2] = {1, 1};
    ASSERT_EQ(encode_tensor_map(map, 9 /*BFLOAT16*/, 2, base, dims, strides, box, es, 0, 3 /*128B*/, 0), "");
  }
  LaunchResult roundtrip(int expect_bytes, int parity, int c0, int c1, int touch, int fence, std::uint64_t seed = 1) {
    void* args[] = {map_in, map_out, &expect_bytes, &parity, &c0, &c1, &touch, &fence};
    return dev.launch(*m, "tma_roundtrip", cfg(1, 128, seed), args);
  }
};

TEST_F(Async, TmaRoundTripThroughSwizzledSharedMemory) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    LaunchResult r = roundtrip(8192, 0, 0, 0, 1, 1, seed);
    ASSERT_TRUE(r.ok) << all(r);
    EXPECT_TRUE(r.reports.empty()) << all(r);
    auto out = download<std::uint16_t>(dout, 64 * 64);
    for (int i = 0; i < 64 * 64; ++i) ASSERT_EQ(core::from_bf16(out[i]), core::from_bf16(host_in[i]) + 1.0f) << i;
  }
}

TEST_F(Async, MissingProxyFenceBeforeTmaStoreIsReported) {
  LaunchResult r = roundtrip(8192, 0, 0, 0, 1, /*fence=*/0);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::ProxyFence)) << all(r);
  EXPECT_NE(all(r).find("no fence.proxy.async"), std::string::npos);
}

TEST_F(Async, ExpectTxTooSmallIsReported) {
  LaunchResult r = roundtrip(4096, 0, 0, 0, 0, 1);
  EXPECT_TRUE(has(r, ReportKind::BarrierMisuse)) << all(r);
  EXPECT_NE(all(r).find("more bytes than its expect_tx announced"), std::string::npos) << all(r);
}

TEST_F(Async, ExpectTxTooLargeDeadlocksNamingTheBarrier) {
  LaunchResult r = roundtrip(16384, 0, 0, 0, 0, 1);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
  EXPECT_NE(r.reports[0].message.find("tx-count 8192 bytes"), std::string::npos) << all(r);
}

TEST_F(Async, WaitingForAPhaseNobodyCompletesDeadlocksNamingTheBarrier) {
  LaunchResult r = roundtrip(8192, 2, 0, 0, 0, 1);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
  EXPECT_NE(r.reports[0].message.find("parity 1 (current phase 1, 1 of 1 arrivals pending"), std::string::npos) << all(r);
}

TEST_F(Async, ParityOffByOneReadsTheTileBeforeItLands) {
  // Parity 1 on a fresh barrier names the phase before the first, which counts as complete:
  // the wait passes at once and the store reads the tile before TMA wrote it. Seed 4 lands
  // async operations at the latest legal moment.
  LaunchResult r = roundtrip(8192, 1, 0, 0, 0, 1, /*seed=*/4);
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_TRUE(has(r, ReportKind::Uninitialized)) << all(r);
  EXPECT_NE(all(r).find("a TMA store reads shared offset"), std::string::npos) << all(r);
}

TEST_F(Async, TmaStoreEntirelyOutsideTheTensorIsReported) {
  LaunchResult r = roundtrip(8192, 0, 0, 64, 0, 1);
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_TRUE(has(r, ReportKind::TmaOutOfBounds)) << all(r);
  // A note, not a finding: `emulate` and `verify` pass such a run.
  EXPECT_TRUE(report_kind_note(ReportKind::TmaOutOfBounds));
  EXPECT_EQ(count_findings(r.reports), 0u) << all(r);
  std::vector<Report> with_one = r.reports;
  with_one.push_back(Report{ReportKind::Race, Where{}, "x"});
  EXPECT_EQ(count_findings(with_one), 1u);
}

// --- wgmma ---------------------------------------------------------------------------------

struct Wgmma : Async {
  std::vector<std::uint16_t> a, b;
  std::uint64_t da = 0, db = 0, dd = 0;
  alignas(64) std::uint8_t map_a[128], map_b[128];
  void SetUp() override {
    Async::SetUp();
    a.resize(64 * 64);
    b.resize(64 * 64);
    for (int i = 0; i < 64 * 64; ++i) {
      a[i] = core::to_bf16(float((i * 7) % 13) - 6.0f);
      b[i] = core::to_bf16(float((i * 5) % 11) * 0.25f - 1.0f);
    }
    da = upload(a.data(), a.size() * 2);
    db = upload(b.data(), b.size() * 2);
    dd = dev.memory().alloc((64 * 64 + 128) * 4);
    encode(map_a, da);
    encode(map_b, db);
  }
  LaunchResult run(int swizzle_code, int early_read, std::uint64_t seed = 1) {
    void* args[] = {map_a, map_b, &dd, &swizzle_code, &early_read};
    return dev.launch(*m, "wgmma_tile", cfg(1, 128, seed), args);
  }
  double max_error() {
    auto d = download<float>(dd, 64 * 64);
    double worst = 0;
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        double ref = 0;
        for (int k = 0; k < 64; ++k) ref += double(core::from_bf16(a[i * 64 + k])) * core::from_bf16(b[j * 64 + k]);
        double e = std::fabs(d[i * 64 + j] - ref);
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
      }
    return worst;
  }
};

TEST_F(Wgmma, TileMatchesTheReference) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    LaunchResult r = run(1, 0, seed);
    ASSERT_TRUE(r.ok) << all(r);
    EXPECT_TRUE(r.reports.empty()) << all(r);
    EXPECT_LT(max_error(), 1e-3);
  }
}

TEST_F(Wgmma, DescriptorSwizzleThatDisagreesWithTheTensorMapGivesAWrongResult) {
  LaunchResult r = run(2 /*64B*/, 0);
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_GT(max_error(), 1.0);
}

TEST_F(Wgmma, AccumulatorReadBeforeWaitGroupIsReported) {
  LaunchResult r = run(1, 1);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::AccumulatorEarly)) << all(r);
  EXPECT_NE(all(r).find("no wgmma.wait_group has retired"), std::string::npos);
}

TEST_F(Async, APhaseCompletingBeforeItsWaiterLookedIsReported) {
  std::uint64_t dout1 = dev.memory().alloc(4);
  void* args[] = {&dout1};
  bool misuse_seen = false;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    LaunchResult r = dev.launch(*m, "missed_phase", cfg(1, 64, seed), args);
    // A racy kernel: in some schedules the waiter looks between the two completions and all
    // is well; in the others it was asleep in try_wait when the second phase completed (the
    // misuse report, then a deadlock naming the barrier).
    if (!r.ok) {
      EXPECT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
      EXPECT_NE(r.reports[0].message.find("for the phase of parity 0 (current phase 2"), std::string::npos) << all(r);
    }
    misuse_seen |= all(r).find("still waited to observe phase 0 (parity 0): it missed it") != std::string::npos;
  }
  EXPECT_TRUE(misuse_seen) << "no schedule of 8 exposed the missed phase";
}

// --- TMA multicast across a cluster --------------------------------------------------------

TEST_F(Async, MulticastLandsInEveryCtaOfTheMaskAndCompletesEachBarrier) {
  std::uint64_t dout2 = dev.memory().alloc(128 * 64 * 2);
  std::memset(dev.memory().find(dout2, 128 * 64 * 2), 0, 128 * 64 * 2);
  alignas(64) std::uint8_t map_out2[128];
  std::uint64_t dims[2] = {64, 128}, strides[1] = {128};
  std::uint32_t box[2] = {64, 64}, es[2] = {1, 1};
  ASSERT_EQ(encode_tensor_map(map_out2, 9, 2, dout2, dims, strides, box, es, 0, 3, 0), "");
  int mask = 3;
  void* args[] = {map_in, map_out2, &mask};
  LaunchConfig c = cfg(2, 128, 1);
  c.cluster[0] = 2;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    c.seed = seed;
    LaunchResult r = dev.launch(*m, "multicast", c, args);
    ASSERT_TRUE(r.ok) << all(r);
    EXPECT_TRUE(r.reports.empty()) << all(r);
    auto out = download<std::uint16_t>(dout2, 128 * 64);
    for (int rank = 0; rank < 2; ++rank)
      for (int i = 0; i < 64 * 64; ++i) ASSERT_EQ(out[rank * 64 * 64 + i], host_in[i]) << "rank " << rank << " element " << i;
  }
}

TEST_F(Async, MulticastMissingACtaDeadlocksThatCtaNamingItsBarrier) {
  std::uint64_t dout2 = dev.memory().alloc(128 * 64 * 2);
  alignas(64) std::uint8_t map_out2[128];
  std::uint64_t dims[2] = {64, 128}, strides[1] = {128};
  std::uint32_t box[2] = {64, 64}, es[2] = {1, 1};
  ASSERT_EQ(encode_tensor_map(map_out2, 9, 2, dout2, dims, strides, box, es, 0, 3, 0), "");
  int mask = 1;  // rank 1 expects the bytes too, but is not in the mask
  void* args[] = {map_in, map_out2, &mask};
  LaunchConfig c = cfg(2, 128, 1);
  c.cluster[0] = 2;
  LaunchResult r = dev.launch(*m, "multicast", c, args);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
  EXPECT_NE(r.reports[0].message.find("CTA (1,0,0) warp 0 lane 0: waits"), std::string::npos) << all(r);
  EXPECT_NE(r.reports[0].message.find("tx-count 8192 bytes"), std::string::npos) << all(r);
}

// --- a warp-specialized TMA -> wgmma pipeline ----------------------------------------------

struct Pipeline : Async {
  static constexpr int kSteps = 6;  // K = 384: each of the two stages is refilled twice
  std::vector<std::uint16_t> a, b;
  std::uint64_t dd = 0;
  alignas(64) std::uint8_t map_a[128], map_b[128];
  void SetUp() override {
    Async::SetUp();
    const int K = 64 * kSteps;
    a.resize(64 * K);
    b.resize(64 * K);
    for (int i = 0; i < 64 * K; ++i) {
      a[i] = core::to_bf16(float((i * 7) % 13) - 6.0f);
      b[i] = core::to_bf16(float((i * 5) % 11) * 0.25f - 1.0f);
    }
    std::uint64_t da = upload(a.data(), a.size() * 2), db = upload(b.data(), b.size() * 2);
    dd = dev.memory().alloc(64 * 64 * 4);
    for (auto [map, base] : {std::pair{map_a, da}, std::pair{map_b, db}}) {
      std::uint64_t dims[2] = {static_cast<std::uint64_t>(K), 64}, strides[1] = {static_cast<std::uint64_t>(K) * 2};
      std::uint32_t box[2] = {64, 64}, es[2] = {1, 1};
      ASSERT_EQ(encode_tensor_map(map, 9, 2, base, dims, strides, box, es, 0, 3, 0), "");
    }
  }
  LaunchResult run(int release_early, std::uint64_t seed, bool races = false) {
    int steps = kSteps;
    void* args[] = {map_a, map_b, &dd, &steps, &release_early};
    LaunchConfig c = cfg(1, 256, seed);
    c.detect_races = races;
    return dev.launch(*m, "pipelined", c, args);
  }
  double max_error() {
    const int K = 64 * kSteps;
    auto d = download<float>(dd, 64 * 64);
    double worst = 0;
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        double ref = 0;
        for (int k = 0; k < K; ++k) ref += double(core::from_bf16(a[i * K + k])) * core::from_bf16(b[j * K + k]);
        double e = std::fabs(d[i * 64 + j] - ref);
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
      }
    return worst;
  }
};

TEST_F(Pipeline, MatchesTheReferenceUnderEverySchedule) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    LaunchResult r = run(0, seed, /*races=*/seed % 2 == 0);
    ASSERT_TRUE(r.ok) << all(r);
    EXPECT_TRUE(r.reports.empty()) << "seed " << seed << ": " << all(r);
    EXPECT_LT(max_error(), 1e-2) << "seed " << seed;
  }
}

// Measured over seeds 1..200 with races on, as `verify` runs: the early release is reported under
// 199 of them (seed 122 lands nothing in the window), so `verify`'s two default schedules miss it
// with a probability of about 1 in 40,000. The assertion is the bar, 99% per schedule.
TEST_F(Pipeline, StageReleasedBeforeItsWgmmaRetiredIsReportedUnderNearlyEverySchedule) {
  int found = 0;
  std::string missed;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    LaunchResult r = run(1, seed, true);
    if (has(r, ReportKind::AsyncOverlap) || has(r, ReportKind::Race)) ++found;
    else if (missed.empty()) missed = "seed " + std::to_string(seed) + ": " + all(r);
  }
  EXPECT_GE(found, 198) << missed;
}

TEST_F(Pipeline, StageReleasedBeforeItsWgmmaRetiredIsReported) {
  // Odd seeds hand over to the producer as soon as a consumer's arrival frees the stage.
  LaunchResult r = run(1, 1);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::AsyncOverlap)) << all(r);
  EXPECT_NE(all(r).find("still reads (no wgmma.wait_group has retired it): the stage was released too early"), std::string::npos)
      << all(r);
}

}  // namespace
}  // namespace mgpu::emu
