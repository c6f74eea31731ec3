// Spec tests for tcgen05 on the virtual device, from the PTX ISA text (9.7.16): the shared
// memory descriptor (9.7.16.4.1, Table 40), the instruction descriptor (9.7.16.4.2, Table 42),
// tensor memory allocation (tcgen05.alloc: power of two in [32, 512], the address written to
// shared memory, lane 0 in bits 31-16), and tcgen05.st/ld .32x32b (thread t of the warp
// accesses lane base + t, register r column base + r; warp w may access lanes 32*(w%4)..+31).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/emu/device.h"
#include "tests/emu/emu_test_util.h"
#include "core/emu/engines/tcgen05_desc.h"
#include "core/emu/engines/tmem.h"

namespace mgpu::emu {
namespace {

using emu_test::all;

constexpr std::uint64_t kVersion = 1ull << 46;  // bits 46-48: the fixed value 0b001

TEST(Tcgen05SmemDescriptor, FieldsComeFromTheirBits) {
  // start 0x1230 >> 4, LBO 16 >> 4, SBO 1024 >> 4, 128-byte swizzle (2 << 61).
  MatrixDescriptor m;
  ASSERT_EQ(decode_tcgen05_smem_descriptor((0x1230 >> 4) | (1ull << 16) | (64ull << 32) | kVersion | (2ull << 61), m), "");
  EXPECT_EQ(m.start, 0x1230u);
  EXPECT_EQ(m.leading, 16u);
  EXPECT_EQ(m.stride, 1024u);
  EXPECT_EQ(m.base_offset, 0u);
  EXPECT_EQ(m.swizzle, Swizzle::B128);
}

TEST(Tcgen05SmemDescriptor, SwizzleCodesAreTheThreeBitsAt61) {
  // 0 = none, 2 = 128B, 4 = 64B, 6 = 32B; 1 = 128B with 32B atoms; 3, 5, 7 invalid.
  const std::pair<std::uint64_t, Swizzle> ok[] = {{0, Swizzle::None}, {2, Swizzle::B128}, {4, Swizzle::B64}, {6, Swizzle::B32}};
  for (auto [code, sw] : ok) {
    MatrixDescriptor m;
    EXPECT_EQ(decode_tcgen05_smem_descriptor(kVersion | (code << 61), m), "") << code;
    EXPECT_EQ(m.swizzle, sw) << code;
  }
  for (std::uint64_t code : {3, 5, 7}) {
    MatrixDescriptor m;
    EXPECT_NE(decode_tcgen05_smem_descriptor(kVersion | (code << 61), m).find("invalid"), std::string::npos) << code;
  }
  MatrixDescriptor m;
  EXPECT_NE(decode_tcgen05_smem_descriptor(kVersion | (1ull << 61), m).find("not modelled"), std::string::npos);
}

TEST(Tcgen05SmemDescriptor, AHopperDescriptorWithoutTheFixedBitsIsRefused) {
  MatrixDescriptor m;
  // A wgmma descriptor: 128B swizzle is 1 in bits 62-63 and bits 46-48 are 0.
  EXPECT_NE(decode_tcgen05_smem_descriptor((1ull << 62) | (64ull << 32), m).find("0b001"), std::string::npos);
  EXPECT_NE(decode_tcgen05_smem_descriptor(kVersion | (1ull << 52), m).find("sm_103a"), std::string::npos);
  EXPECT_EQ(decode_tcgen05_smem_descriptor(kVersion | (3ull << 49), m), "");
  EXPECT_EQ(m.base_offset, 3u);
}

TEST(Tcgen05InstrDescriptor, KindF16FieldsComeFromTheirBits) {
  // F32 D (1 << 4), BF16 A and B (1 << 7, 1 << 10), N = 64 (8 << 17), M = 128 (8 << 24).
  Tcgen05InstrDesc d;
  ASSERT_EQ(decode_tcgen05_instr_descriptor_f16(0x08100490u, d), "");
  EXPECT_EQ(d.m, 128);
  EXPECT_EQ(d.n, 64);
  EXPECT_EQ(d.d_type, Ty::F32);
  EXPECT_EQ(d.a_type, Ty::BF16);
  EXPECT_EQ(d.b_type, Ty::BF16);
  EXPECT_FALSE(d.transpose_a || d.transpose_b || d.negate_a || d.negate_b);
  // F16 inputs, transpose A and B, negate B, M = 256, N = 256.
  ASSERT_EQ(decode_tcgen05_instr_descriptor_f16((1u << 4) | (1u << 14) | (1u << 15) | (1u << 16) | (32u << 17) | (16u << 24), d), "");
  EXPECT_EQ(d.m, 256);
  EXPECT_EQ(d.n, 256);
  EXPECT_EQ(d.a_type, Ty::F16);
  EXPECT_TRUE(d.transpose_a && d.transpose_b && d.negate_b && !d.negate_a);
}

TEST(Tcgen05InstrDescriptor, SparseMixedAndReservedAreRefused) {
  Tcgen05InstrDesc d;
  EXPECT_NE(decode_tcgen05_instr_descriptor_f16(0x08100490u | 4u, d), "");           // sparse
  EXPECT_NE(decode_tcgen05_instr_descriptor_f16(0x08100410u | (2u << 7), d), "");    // atype TF32 under kind::f16
  EXPECT_NE(decode_tcgen05_instr_descriptor_f16(0x08100010u | (1u << 10), d), "");   // F16 A, BF16 B
  EXPECT_NE(decode_tcgen05_instr_descriptor_f16(0x08100490u | (1u << 23), d), "");   // reserved
  EXPECT_NE(decode_tcgen05_instr_descriptor_f16(0x08100490u | (1u << 30), d), "");   // max shift: .ws only
}

TEST(TensorMemory, ColumnCountsArePowersOfTwoFrom32To512) {
  for (std::uint64_t n : {32, 64, 128, 256, 512}) EXPECT_EQ(TensorMemory::check_columns(n), "") << n;
  for (std::uint64_t n : {0, 16, 48, 96, 1024}) EXPECT_NE(TensorMemory::check_columns(n), "") << n;
}

TEST(TensorMemory, AllocationsTakeFreeColumnsAndFailWhenNoneAreLeft) {
  TensorMemory t;
  Cta a, b;
  EXPECT_EQ(t.allocate(64, &a, 0, 1), 0);
  EXPECT_EQ(t.allocate(32, &b, 0, 2), 64);
  EXPECT_FALSE(t.can_allocate(512));
  EXPECT_EQ(t.allocate(512, &a, 0, 3), -1);
  EXPECT_TRUE(t.held_by(0, 64, &a));
  EXPECT_FALSE(t.held_by(0, 96, &a));
  EXPECT_NE(t.deallocate(64, 32, &a), "");  // b's columns
  EXPECT_EQ(t.deallocate(0, 64, &a), "");
  EXPECT_EQ(t.deallocate(64, 32, &b), "");
  EXPECT_EQ(t.allocate(512, &a, 0, 4), 0);
}

// Kernels: 64 threads; warp 0 allocates, each warp stores thread t's value (t * 16 + r) to
// register r of its lanes, loads them back, and writes what it read to out[t * 4 + r].
std::string st_ld_kernel(int alloc_cols, int ld_lane_of_warp1) {
  return ".version 8.7\n.target sm_100a\n.address_size 64\n"
         ".visible .entry k(.param .u64 pout)\n{\n"
         "  .shared .align 16 .b8 slot[16];\n"
         "  .reg .pred %p<4>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<8>;\n"
         "  ld.param.u64 %rd1, [pout];\n  mov.u32 %r1, %tid.x;\n  shr.u32 %r2, %r1, 5;\n  setp.eq.u32 %p1, %r2, 0;\n"
         "  mov.u32 %r3, slot;\n"
         "  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r3], " + std::to_string(alloc_cols) + ";\n"
         "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
         "  ld.shared.b32 %r4, [%r3];\n"
         "  setp.eq.u32 %p2, %r2, 1;\n  selp.u32 %r5, " + std::to_string(ld_lane_of_warp1) + ", 0, %p2;\n"
         "  shl.b32 %r5, %r5, 16;\n  add.u32 %r6, %r4, %r5;\n  add.u32 %r6, %r6, 32;\n"  // column 32 of the allocation
         "  shl.b32 %r10, %r1, 4;\n  add.u32 %r11, %r10, 1;\n  add.u32 %r12, %r10, 2;\n  add.u32 %r13, %r10, 3;\n"
         "  tcgen05.st.sync.aligned.32x32b.x4.b32 [%r6], {%r10, %r11, %r12, %r13};\n"
         "  tcgen05.wait::st.sync.aligned;\n"
         "  tcgen05.ld.sync.aligned.32x32b.x4.b32 {%r20, %r21, %r22, %r23}, [%r6];\n"
         "  tcgen05.wait::ld.sync.aligned;\n"
         "  mul.wide.u32 %rd2, %r1, 16;\n  add.s64 %rd3, %rd1, %rd2;\n  st.global.v4.b32 [%rd3], {%r20, %r21, %r22, %r23};\n"
         "  st.global.b32 [%rd1+1024], %r4;\n"
         "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
         "  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r4, " + std::to_string(alloc_cols) + ";\n"
         "  ret;\n}\n";
}

struct Tcgen05Isa : ::testing::Test {
  Device dev;
  std::uint64_t out = 0;
  LaunchResult run(const std::string& ptx) {
    LoadedModule& m = dev.load(ptx);
    out = dev.memory().alloc(2048);
    std::memset(dev.memory().find(out, 2048), 0, 2048);
    LaunchConfig c;
    c.block[0] = 64;
    void* args[] = {&out};
    return dev.launch(m, "k", c, args);
  }
  std::uint32_t word(int i) {
    std::uint32_t v;
    std::memcpy(&v, dev.memory().find(out + 4 * i, 4), 4);
    return v;
  }
};

TEST_F(Tcgen05Isa, StoreThenLoad32x32bRoundTripsThreadTLaneTRegisterRColumnR) {
  LaunchResult r = run(st_ld_kernel(64, 32));
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_TRUE(r.reports.empty()) << all(r);
  EXPECT_EQ(word(256), 0u);  // the first allocation of an empty tensor memory: lane 0, column 0
  for (int t = 0; t < 64; ++t)
    for (int reg = 0; reg < 4; ++reg) EXPECT_EQ(word(t * 4 + reg), std::uint32_t(t * 16 + reg)) << t << " " << reg;
}

TEST_F(Tcgen05Isa, AWarpAccessingAnotherWarpsLanesIsReported) {
  LaunchResult r = run(st_ld_kernel(64, 0));  // warp 1 at lane 0: lanes 32-63 are its own
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_NE(all(r).find("may access lanes [32, 64) only"), std::string::npos) << all(r);
}

TEST_F(Tcgen05Isa, ColumnsOutsideTheAllocationAreReported) {
  LaunchResult r = run(st_ld_kernel(32, 32));  // columns 32-35 of a 32-column allocation
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_NE(all(r).find("columns [32, 36) not all allocated by this CTA"), std::string::npos) << all(r);
}

TEST_F(Tcgen05Isa, AColumnCountThatIsNotAPowerOfTwoFaults) {
  LaunchResult r = run(st_ld_kernel(48, 32));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::TmemMisuse) << all(r);
  EXPECT_NE(r.reports[0].message.find("not a power of two in [32, 512]"), std::string::npos) << all(r);
}


// The shared address layout the 2-SM code relies on: a CTA's own shared::cta addresses carry
// its cluster rank in bits 24 and up (CUTLASS's Sm100MmaPeerBitMask 0xFEFFFFFF clears bit 24 to
// reach the even CTA), mapa changes only those bits, and a shared::cta access must name the
// executing CTA (PTX ISA 5.1.1).
std::string address_kernel(bool touch_peer_as_cta) {
  return std::string(".version 8.7\n.target sm_100a\n.address_size 64\n"
                     ".visible .entry k(.param .u64 pout)\n{\n"
                     "  .shared .align 16 .b8 buf[64];\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
                     "  ld.param.u64 %rd1, [pout];\n  mov.u32 %r1, %cluster_ctarank;\n  mov.u32 %r2, buf;\n"
                     "  mapa.shared::cluster.u32 %r3, %r2, 0;\n  and.b32 %r4, %r2, 0xFEFFFFFF;\n"
                     "  mul.wide.u32 %rd2, %r1, 16;\n  add.s64 %rd3, %rd1, %rd2;\n"
                     "  st.global.v2.b32 [%rd3], {%r2, %r3};\n  st.global.b32 [%rd3+8], %r4;\n") +
         (touch_peer_as_cta ? "  ld.shared.b32 %r5, [%r4];\n" : "") + "  ret;\n}\n";
}

TEST_F(Tcgen05Isa, SharedAddressesCarryTheCtaRankInBit24AndUp) {
  LoadedModule& m = dev.load(address_kernel(false));
  out = dev.memory().alloc(2048);
  LaunchConfig c;
  c.block[0] = 32;
  c.grid[0] = 2;
  c.cluster[0] = 2;
  void* args[] = {&out};
  LaunchResult r = dev.launch(m, "k", c, args);
  ASSERT_TRUE(r.ok) << all(r);
  const std::uint32_t off = word(0);
  EXPECT_LT(off, 1u << 24);
  EXPECT_EQ(word(4), off | (1u << 24));  // CTA rank 1's own address
  EXPECT_EQ(word(1), off);               // mapa to rank 0
  EXPECT_EQ(word(5), off);
  EXPECT_EQ(word(6), off);               // rank 1's address with the peer bit cleared: rank 0's
}

TEST_F(Tcgen05Isa, ASharedCtaAccessToThePeersMemoryFaults) {
  LoadedModule& m = dev.load(address_kernel(true));
  out = dev.memory().alloc(2048);
  LaunchConfig c;
  c.block[0] = 32;
  c.grid[0] = 2;
  c.cluster[0] = 2;
  void* args[] = {&out};
  LaunchResult r = dev.launch(m, "k", c, args);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::OutOfBounds) << all(r);
  EXPECT_NE(r.reports[0].message.find("an address of CTA rank 0"), std::string::npos) << all(r);
}


// One warp; `body` runs after the allocation of 64 columns (address in %r4), before dealloc.
std::string alloc_kernel(const std::string& body, const char* group = "1") {
  return std::string(".version 8.7\n.target sm_100a\n.address_size 64\n"
                     ".visible .entry k(.param .u64 pout)\n{\n"
                     "  .shared .align 16 .b8 slot[16];\n  .reg .pred %p<4>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<8>;\n"
                     "  mov.u32 %r3, slot;\n"
                     "  tcgen05.alloc.cta_group::") + group + ".sync.aligned.shared::cta.b32 [%r3], 64;\n"
         "  ld.shared.b32 %r4, [%r3];\n" + body +
         "  tcgen05.dealloc.cta_group::" + group + ".sync.aligned.b32 %r4, 64;\n  ret;\n}\n";
}

LaunchResult run_one_warp(Device& dev, const std::string& ptx) {
  LoadedModule& m = dev.load(ptx);
  std::uint64_t out = dev.memory().alloc(64);
  LaunchConfig c;
  c.block[0] = 32;
  void* args[] = {&out};
  return dev.launch(m, "k", c, args);
}

TEST_F(Tcgen05Isa, AllocatingAfterRelinquishingThePermitIsReported) {
  // tcgen05.relinquish_alloc_permit: "it is illegal for a CTA to perform tcgen05.alloc after any
  // of its constituent threads execute tcgen05.relinquish_alloc_permit".
  LaunchResult r = run_one_warp(dev, alloc_kernel("  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
                                                  "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r3], 32;\n"
                                                  "  ld.shared.b32 %r5, [%r3];\n"
                                                  "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r5, 32;\n"));
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_NE(all(r).find("tcgen05.alloc after this CTA executed tcgen05.relinquish_alloc_permit"), std::string::npos) << all(r);
}

TEST_F(Tcgen05Isa, MixingCtaGroupsInOneKernelIsReported) {
  // "All tcgen05 instructions within a kernel must specify the same value for the .cta_group".
  // (A 1-CTA cluster: the ::2 instruction then also faults for want of a peer.)
  LaunchResult r = run_one_warp(dev, alloc_kernel("  tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n"));
  EXPECT_NE(all(r).find("both .cta_group::1 and .cta_group::2"), std::string::npos) << all(r);
}

TEST_F(Tcgen05Isa, DeallocatingColumnsNotHeldIsReported) {
  LaunchResult r = run_one_warp(dev, alloc_kernel("  add.u32 %r6, %r4, 64;\n"
                                                  "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r6, 64;\n"));
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_NE(all(r).find("columns [64, 128) are not all allocated by this CTA"), std::string::npos) << all(r);
}

TEST_F(Tcgen05Isa, MmaWithATransposedInTensorMemoryIsRefused) {
  // A in tensor memory is K-major: CUTLASS's SM100_MMA_F16BF16_TS asserts "A from TMEM can't be
  // transposed". Instruction descriptor 0x08100490 (M 128, N 64, bf16, f32 D) with bit 15 set.
  LaunchResult r = run_one_warp(dev, alloc_kernel("  mov.b64 %rd2, 0x4000404000010000;\n  mov.u32 %r7, 0x08108490;\n"
                                                  "  add.u32 %r5, %r4, 32;\n  setp.ne.u32 %p1, %r4, %r4;\n"
                                                  "  tcgen05.mma.cta_group::1.kind::f16 [%r4], [%r5], %rd2, %r7, %p1;\n"));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::Unsupported) << all(r);
  EXPECT_NE(r.reports[0].message.find("A in tensor memory is K-major"), std::string::npos) << all(r);
}

}  // namespace
}  // namespace mgpu::emu
