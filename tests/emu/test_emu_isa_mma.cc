// Spec tests for core/emu/insns/warp_mma.cc: PTX ISA 9.7.14.5.14 mma, shape .m16n8k16 with .f16 /
// .bf16 multiplicands and .f32 / .f16 accumulators, and .m16n8k4 with .tf32. Each lane's fragment
// registers are packed here from the matrices by the ISA's formulas (9.7.14.5.8, "Matrix
// Fragments for mma.m16n8k16 with floating point type", and 9.7.14.5.6 for mma.m16n8k4;
// groupID = lane >> 2, threadID_in_group = lane % 4), and the lanes' D registers are unpacked by
// the same formulas; D = A x B + C is worked out on the host. The values are small integers,
// exact in f16/bf16/tf32 and in every sum, so any misplaced element shows.
#include "isa_harness.h"

#include "core/emu/exec/scalar.h"

namespace mgpu::emu::isa {
namespace {

struct Mma : IsaTest {
  float A[16][16], B[16][8], C[16][8];
  Mma() {
    for (int m = 0; m < 16; ++m)
      for (int k = 0; k < 16; ++k) A[m][k] = static_cast<float>((m * 16 + k) % 7 - 3);
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < 8; ++n) B[k][n] = static_cast<float>((3 * k + 2 * n) % 5 - 2);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) C[m][n] = static_cast<float>(m - 2 * n);
  }
  static int a_row(int g, int i) { return (i < 2 || (i >= 4 && i < 6)) ? g : g + 8; }
  static int a_col(int t, int i) { return 2 * t + (i & 1) + (i >= 4 ? 8 : 0); }
  static int b_row(int t, int i) { return 2 * t + (i & 1) + (i >= 2 ? 8 : 0); }
  static int c_row(int g, int i) { return i < 2 ? g : g + 8; }
  static int c_col(int t, int i) { return 2 * t + (i & 1); }
  static std::uint64_t half(float v, bool bf16) { return bf16 ? f32_to_bf16_rn(v) : f32_to_f16_rn(v); }

  // Input slots per lane (10): a regs 0..3, b regs 4..5, c regs 6..9 (f32) or 6..7 (f16x2).
  std::vector<std::uint64_t> fragments(bool bf16, bool acc_f16) const {
    std::vector<std::uint64_t> in(32 * 10, 0);
    for (int l = 0; l < 32; ++l) {
      const int g = l >> 2, t = l & 3;
      for (int i = 0; i < 8; ++i) in[l * 10 + i / 2] |= half(A[a_row(g, i)][a_col(t, i)], bf16) << (16 * (i & 1));
      for (int i = 0; i < 4; ++i) in[l * 10 + 4 + i / 2] |= half(B[b_row(t, i)][g], bf16) << (16 * (i & 1));
      for (int i = 0; i < 4; ++i) {
        const float c = C[c_row(g, i)][c_col(t, i)];
        if (acc_f16) in[l * 10 + 6 + i / 2] |= half(c, false) << (16 * (i & 1));
        else in[l * 10 + 6 + i] = f32(c);
      }
    }
    return in;
  }
  float expected(int m, int n) const {
    float s = C[m][n];
    for (int k = 0; k < 16; ++k) s += A[m][k] * B[k][n];
    return s;
  }
  static std::string body(const std::string& opcode, bool acc_f16) {
    std::string b =
        "  mov.u32 %r40, %tid.x;\n  mul.wide.u32 %rd1, %r40, 80;\n  add.s64 %rd2, %rd62, %rd1;\n"
        "  ld.global.u32 %r1, [%rd2];\n  ld.global.u32 %r2, [%rd2+8];\n  ld.global.u32 %r3, [%rd2+16];\n"
        "  ld.global.u32 %r4, [%rd2+24];\n  ld.global.u32 %r5, [%rd2+32];\n  ld.global.u32 %r6, [%rd2+40];\n"
        "  mul.wide.u32 %rd3, %r40, 32;\n  add.s64 %rd4, %rd63, %rd3;\n";
    if (acc_f16) {
      b += "  ld.global.u32 %r7, [%rd2+48];\n  ld.global.u32 %r8, [%rd2+56];\n  " + opcode +
           " {%r9, %r10}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r7, %r8};\n"
           "  st.global.u32 [%rd4], %r9;\n  st.global.u32 [%rd4+8], %r10;\n";
    } else {
      b += "  ld.global.f32 %f4, [%rd2+48];\n  ld.global.f32 %f5, [%rd2+56];\n  ld.global.f32 %f6, [%rd2+64];\n"
           "  ld.global.f32 %f7, [%rd2+72];\n  " + opcode +
           " {%f0, %f1, %f2, %f3}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f4, %f5, %f6, %f7};\n"
           "  st.global.f32 [%rd4], %f0;\n  st.global.f32 [%rd4+8], %f1;\n  st.global.f32 [%rd4+16], %f2;\n"
           "  st.global.f32 [%rd4+24], %f3;\n";
    }
    return b;
  }
  void check(const std::string& opcode, bool bf16, bool acc_f16) {
    std::vector<std::uint64_t> out = run(body(opcode, acc_f16), fragments(bf16, acc_f16), 32 * 4, cfg(32));
    int seen[16][8] = {};
    for (int l = 0; l < 32; ++l) {
      const int g = l >> 2, t = l & 3;
      for (int i = 0; i < 4; ++i) {
        const int m = c_row(g, i), n = c_col(t, i);
        const float got = acc_f16 ? f16_to_f32(static_cast<std::uint16_t>(out[l * 4 + i / 2] >> (16 * (i & 1))))
                                  : as_f(out[l * 4 + i]);
        EXPECT_EQ(got, expected(m, n)) << opcode << " lane " << l << " d" << i << " = D[" << m << "][" << n << "]";
        ++seen[m][n];
      }
    }
    for (auto& row : seen)
      for (int s : row) EXPECT_EQ(s, 1);  // the C/D fragments cover the 16x8 tile exactly once
  }
};

TEST_F(Mma, M16n8k16F16IntoF32) { check("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", false, false); }
TEST_F(Mma, M16n8k16Bf16IntoF32) { check("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", true, false); }
TEST_F(Mma, M16n8k16F16IntoF16) { check("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", false, true); }

// .m16n8k4.tf32: a0 = A[g][t], a1 = A[g + 8][t], b0 = B[t][g]; C/D as above. The .b32 registers
// hold values exact in tf32 (what cvt.rna.tf32.f32 gives for them; PTX ISA 5.2.5 leaves tf32's
// internal layout to the implementation, so nothing else is asserted).
TEST_F(Mma, M16n8k4Tf32IntoF32) {
  std::vector<std::uint64_t> in(32 * 10, 0);
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l & 3;
    in[l * 10 + 0] = f32(A[g][t]);
    in[l * 10 + 1] = f32(A[g + 8][t]);
    in[l * 10 + 4] = f32(B[t][g]);
    for (int i = 0; i < 4; ++i) in[l * 10 + 6 + i] = f32(C[c_row(g, i)][c_col(t, i)]);
  }
  const std::string b =
      "  mov.u32 %r40, %tid.x;\n  mul.wide.u32 %rd1, %r40, 80;\n  add.s64 %rd2, %rd62, %rd1;\n"
      "  ld.global.u32 %r1, [%rd2];\n  ld.global.u32 %r2, [%rd2+8];\n  ld.global.u32 %r5, [%rd2+32];\n"
      "  ld.global.f32 %f4, [%rd2+48];\n  ld.global.f32 %f5, [%rd2+56];\n  ld.global.f32 %f6, [%rd2+64];\n"
      "  ld.global.f32 %f7, [%rd2+72];\n"
      "  mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r1, %r2}, {%r5}, {%f4, %f5, %f6, %f7};\n"
      "  mul.wide.u32 %rd3, %r40, 32;\n  add.s64 %rd4, %rd63, %rd3;\n"
      "  st.global.f32 [%rd4], %f0;\n  st.global.f32 [%rd4+8], %f1;\n  st.global.f32 [%rd4+16], %f2;\n"
      "  st.global.f32 [%rd4+24], %f3;\n";
  std::vector<std::uint64_t> out = run(b, in, 32 * 4, cfg(32));
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l & 3;
    for (int i = 0; i < 4; ++i) {
      const int m = c_row(g, i), n = c_col(t, i);
      float want = C[m][n];
      for (int k = 0; k < 4; ++k) want += A[m][k] * B[k][n];
      EXPECT_EQ(as_f(out[l * 4 + i]), want) << "lane " << l << " d" << i;
    }
  }
}

// The faulty twin: .sync.aligned means all 32 threads of the warp execute it together. With
// lanes 16..31 gone (exited) the result is undefined; the device reports it and stops.
TEST_F(Mma, ExecutedByPartOfAWarpIsAFinding) {
  const std::string opcode = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
  const std::string b = "  mov.u32 %r41, %tid.x;\n  setp.ge.u32 %p1, %r41, 16;\n  @%p1 bra DONE;\n" + body(opcode, false) + "DONE:\n";
  LoadedModule& m = dev.load(module(b));
  std::vector<std::uint64_t> in = fragments(false, false);
  std::uint64_t din = dev.memory().alloc(in.size() * 8), dout = dev.memory().alloc(32 * 4 * 8);
  std::memcpy(dev.memory().find(din, in.size() * 8), in.data(), in.size() * 8);
  void* args[] = {&din, &dout};
  LaunchResult r = dev.launch(m, "k", cfg(32), args);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports.front().kind, ReportKind::NotConverged) << all(r);
  EXPECT_NE(r.reports.front().message.find("needs all 32 threads of the warp"), std::string::npos) << all(r);
}

// Forms the device does not implement are refused when the module loads, naming the form.
TEST_F(Mma, OtherShapesAndTypesAreRefused) {
  EXPECT_THROW(dev.load(module("  mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r1, %r2}, {%r3}, "
                               "{%f4, %f5, %f6, %f7};\n")),
               Fault);
  EXPECT_THROW(dev.load(module("  mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f16 {%r0, %r1}, {%r1, %r2, %r3, %r4}, "
                               "{%r5, %r6}, {%r7, %r8};\n")),
               Fault);
}

// wmma (PTX ISA 9.7.14.4): the distribution of a matrix over the fragments is unspecified
// (9.7.14.2), so what the ISA lets a program observe is the round trip: wmma.load of A, B and C,
// wmma.mma, wmma.store of D gives D = A x B + C in memory, for every layout and stride. The
// buffers have leading dimensions larger than the matrices (padding that must stay untouched).
struct Wmma : IsaTest {
  // One 16-element-wide f16 or f32 matrix per slot run; element (r, c) at base + (r*ld + c) for
  // .row, base + (c*ld + r) for .col.
  static std::size_t at(bool col, int r, int c, int ld) { return col ? static_cast<std::size_t>(c) * ld + r : static_cast<std::size_t>(r) * ld + c; }
};

TEST_F(Wmma, M16n16k16F16IntoF32RoundTripsEveryLayoutAndStride) {
  for (const bool acol : {false, true})
    for (const bool bcol : {false, true}) {
      const int lda = 24, ldb = 20, ldc = 18, ldd = 22;
      // The inputs as raw bytes in 8-byte slots: A, B (f16) at byte 0 and 1024, C (f32) at 2048.
      std::vector<std::uint8_t> bytes(8192, 0);
      float A[16][16], B[16][16], C[16][16];
      auto put16 = [&](std::size_t off, float v) { std::uint16_t h = f32_to_f16_rn(v); std::memcpy(&bytes[off], &h, 2); };
      for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) {
          A[r][c] = static_cast<float>((r * 5 + c * 3) % 9 - 4);
          B[r][c] = static_cast<float>((r * 7 + c) % 5 - 2);
          C[r][c] = static_cast<float>(r - c);
          put16(2 * at(acol, r, c, lda), A[r][c]);
          put16(1024 + 2 * at(bcol, r, c, ldb), B[r][c]);
          const std::uint32_t cf = static_cast<std::uint32_t>(f32(C[r][c]));
          std::memcpy(&bytes[2048 + 4 * at(false, r, c, ldc)], &cf, 4);
        }
      std::vector<std::uint64_t> in(bytes.size() / 8);
      std::memcpy(in.data(), bytes.data(), bytes.size());
      const std::string la = acol ? "col" : "row", lb = bcol ? "col" : "row";
      const std::string regs8 = "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}", regsb = "{%r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16}",
                        regsc = "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}", regsd = "{%f8, %f9, %f10, %f11, %f12, %f13, %f14, %f15}";
      const std::string body =
          "  add.s64 %rd1, %rd62, 1024;\n  add.s64 %rd2, %rd62, 2048;\n"
          "  wmma.load.a.sync.aligned." + la + ".m16n16k16.f16 " + regs8 + ", [%rd62], 24;\n"
          "  wmma.load.b.sync.aligned." + lb + ".m16n16k16.f16 " + regsb + ", [%rd1], 20;\n"
          "  wmma.load.c.sync.aligned.row.m16n16k16.f32 " + regsc + ", [%rd2], 18;\n"
          "  wmma.mma.sync.aligned." + la + "." + lb + ".m16n16k16.f32.f32 " + regsd + ", " + regs8 + ", " + regsb + ", " + regsc + ";\n"
          "  wmma.store.d.sync.aligned.row.m16n16k16.f32 [%rd63], " + regsd + ", 22;\n";
      std::vector<std::uint64_t> out = run(body, in, 16 * ldd / 2 + 8, cfg(32));
      std::vector<std::uint8_t> ob(out.size() * 8);
      std::memcpy(ob.data(), out.data(), ob.size());
      for (int r = 0; r < 16; ++r)
        for (int c = 0; c < ldd; ++c) {
          float got;
          std::memcpy(&got, &ob[4 * at(false, r, c, ldd)], 4);
          if (c >= 16) { EXPECT_EQ(got, 0.0f) << "padding " << r << "," << c; continue; }
          float want = C[r][c];
          for (int k = 0; k < 16; ++k) want += A[r][k] * B[k][c];
          EXPECT_EQ(got, want) << la << "." << lb << " D[" << r << "][" << c << "]";
        }
    }
}

TEST_F(Wmma, M8n8k4F64RoundTrips) {
  double A[8][4], B[4][8], C[8][8];
  std::vector<std::uint64_t> in(32 + 32 + 64);
  for (int r = 0; r < 8; ++r)
    for (int k = 0; k < 4; ++k) { A[r][k] = 0.5 * (r + 2 * k) - 1.0; in[r * 4 + k] = f64(A[r][k]); }
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 8; ++c) { B[k][c] = 0.25 * ((3 * k + c) % 7); in[32 + c * 4 + k] = f64(B[k][c]); }  // B stored .col
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) { C[r][c] = 3.14 + r - c; in[64 + r * 8 + c] = f64(C[r][c]); }
  const std::string body =
      "  add.s64 %rd1, %rd62, 256;\n  add.s64 %rd2, %rd62, 512;\n"
      "  wmma.load.a.sync.aligned.row.m8n8k4.f64 {%rd10}, [%rd62], 4;\n"
      "  wmma.load.b.sync.aligned.col.m8n8k4.f64 {%rd11}, [%rd1], 4;\n"
      "  wmma.load.c.sync.aligned.row.m8n8k4.f64 {%rd12, %rd13}, [%rd2], 8;\n"
      "  wmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64 {%rd14, %rd15}, {%rd10}, {%rd11}, {%rd12, %rd13};\n"
      "  wmma.store.d.sync.aligned.row.m8n8k4.f64 [%rd63], {%rd14, %rd15}, 8;\n";
  std::vector<std::uint64_t> out = run(body, in, 64, cfg(32));
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) {
      double want = C[r][c];
      for (int k = 0; k < 4; ++k) want += A[r][k] * B[k][c];
      EXPECT_DOUBLE_EQ(as_d(out[r * 8 + c]), want) << r << "," << c;
    }
}

// The faulty twin: wmma is .sync.aligned like mma.sync; with half the warp gone it is a finding.
TEST_F(Wmma, ExecutedByPartOfAWarpIsAFinding) {
  const std::string body =
      "  mov.u32 %r41, %tid.x;\n  setp.ge.u32 %p1, %r41, 16;\n  @%p1 bra DONE;\n"
      "  wmma.load.c.sync.aligned.row.m16n16k16.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd62], 16;\n"
      "DONE:\n";
  LoadedModule& m = dev.load(module(body));
  std::uint64_t din = dev.memory().alloc(2048), dout = dev.memory().alloc(8);
  std::memset(dev.memory().find(din, 2048), 0, 2048);
  void* args[] = {&din, &dout};
  LaunchResult r = dev.launch(m, "k", cfg(32), args);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports.front().kind, ReportKind::NotConverged) << all(r);
}

TEST_F(Wmma, OtherShapesAndStateSpacesAreRefused) {
  EXPECT_THROW(dev.load(module("  wmma.load.a.sync.aligned.row.m32n8k16.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd62], 16;\n")),
               Fault);
  EXPECT_THROW(dev.load(module("  wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd62], 16;\n")),
               Fault);
}

}  // namespace
}  // namespace mgpu::emu::isa
