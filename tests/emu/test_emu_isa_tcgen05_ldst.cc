// Spec tests for tcgen05.ld / tcgen05.st in every data movement shape (PTX ISA 9.7.16.2.3
// "Data Movement Shape", 9.7.16.2.3.1 "Matrix fragments for shape .16x64b / .16x128b / .16x256b /
// .16x32bx2", and the tcgen05.ld / tcgen05.st sections with their table "Number of registers").
// The fragment figures give, for thread t of the warp and register r, the tensor memory lane and
// column relative to the address (the figures cross-checked against CUTLASS's SM100_TMEM_LOAD_*
// Copy_Traits, Triton's TMEM access atoms and, for .16x128b / .16x256b, JAX Mosaic GPU):
//   .16x64b:   lanes 0-7 hold threads 0, 4, .., 28 (column 0) and 2, 6, .., 30 (column 1); lanes
//              8-15 threads 1, 5, .., 29 (column 0) and 3, 7, .., 31 (column 1); .num repeats it
//              every 2 columns.
//   .16x128b:  thread t at lane t/4 and column t%4, register 1 at lane t/4 + 8; repeated every
//              4 columns.
//   .16x256b:  the mma accumulator fragment: registers 0, 1 at lane t/4, columns 2(t%4) and
//              2(t%4) + 1; registers 2, 3 at lane t/4 + 8; repeated every 8 columns.
//   .16x32bx2: threads 0-15 at lanes 0-15, register r at column r; threads 16-31 the same lanes
//              at column immHalfSplitoff + r.
// Tensor memory is filled with .32x32b (thread t at lane base + t, register r at column base + r:
// the shape test_emu_isa_tcgen05.cc pins) with cell (lane, column) = 0xABCD0000 | lane << 8 |
// column, so each loaded register names the cell it came from; stores are read back the same way.
// .pack::16b / .unpack::16b: a register holds the low 16 bits of columns 2c (bits 0-15) and
// 2c + 1 (bits 16-31).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/emu/device.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

using emu_test::regs;
using emu_test::all;

std::uint32_t cell(std::uint32_t lane, std::uint32_t col) { return 0xABCD0000u | lane << 8 | col; }
std::uint32_t value(std::uint32_t t, std::uint32_t r) { return 0x5E000000u | t << 8 | r; }

// A kernel (of any number of warps): warp 0 allocates `cols` columns; every thread gets the
// allocation's address in %r4, its thread index in %r1, its warp in %r3 and out's address in
// %rd1, and runs `body` (after `decl`'s module-scope declarations); then warp 0 deallocates.
std::string kernel(const std::string& body, int cols = 64, const std::string& decl = "") {
  const std::string n = std::to_string(cols);
  return ".version 8.7\n.target sm_100a\n.address_size 64\n" + decl +
         ".visible .entry k(.param .u64 pout)\n{\n"
         "  .shared .align 16 .b8 slot[16];\n"
         "  .reg .pred %p<8>;\n  .reg .b32 %r<600>;\n  .reg .b64 %rd<16>;\n"
         "  ld.param.u64 %rd1, [pout];\n  mov.u32 %r1, %tid.x;\n  shr.u32 %r3, %r1, 5;\n  setp.eq.u32 %p1, %r3, 0;\n"
         "  mov.u32 %r2, slot;\n"
         "  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], " + n + ";\n"
         "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
         "  ld.shared.b32 %r4, [%r2];\n" + body +
         "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
         "  @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r4, " + n + ";\n"
         "  ret;\n}\n";
}

// Cells (lane t, column c) = cell(t, c) for c < n, by .32x32b.x<n> at the allocation.
std::string fill(int n) {
  std::string s = "  shl.b32 %r5, %r1, 8;\n  or.b32 %r5, %r5, 0xABCD0000;\n";
  for (int c = 0; c < n; ++c) s += "  or.b32 %r" + std::to_string(100 + c) + ", %r5, " + std::to_string(c) + ";\n";
  return s + "  tcgen05.st.sync.aligned.32x32b.x" + std::to_string(n) + ".b32 [%r4], " + regs(n, 100) +
         ";\n  tcgen05.wait::st.sync.aligned;\n";
}

// Registers %r200.. = value(t, r).
std::string values(int n) {
  std::string s = "  shl.b32 %r7, %r1, 8;\n  or.b32 %r7, %r7, 0x5E000000;\n";
  for (int r = 0; r < n; ++r) s += "  or.b32 %r" + std::to_string(200 + r) + ", %r7, " + std::to_string(r) + ";\n";
  return s;
}

// out[t * n + i] = %r(first + i).
std::string dump(int n, int first) {
  std::string s = "  mul.wide.u32 %rd2, %r1, " + std::to_string(4 * n) + ";\n  add.s64 %rd3, %rd1, %rd2;\n";
  for (int i = 0; i < n; ++i) s += "  st.global.b32 [%rd3+" + std::to_string(4 * i) + "], %r" + std::to_string(first + i) + ";\n";
  return s;
}

// %r6 = the allocation's address at lane `lane`, column `col`.
std::string at(int lane, int col = 0) {
  return "  add.u32 %r6, %r4, " + std::to_string((lane << 16) + col) + ";\n";
}

// Reads lanes 0-31, columns [0, n) back with .32x32b into out[lane * n + column].
std::string read_back(int n) {
  return "  tcgen05.ld.sync.aligned.32x32b.x" + std::to_string(n) + ".b32 " + regs(n, 300) + ", [%r4];\n"
         "  tcgen05.wait::ld.sync.aligned;\n" + dump(n, 300);
}

struct Tcgen05LdSt : ::testing::Test {
  Device dev;
  std::uint64_t out = 0;
  static constexpr std::size_t kOut = 64 * 1024;
  LaunchResult run(const std::string& ptx, int threads = 32) {
    LoadedModule& m = dev.load(ptx);
    out = dev.memory().alloc(kOut);
    std::memset(dev.memory().find(out, kOut), 0, kOut);
    LaunchConfig c;
    c.block[0] = static_cast<std::uint32_t>(threads);
    void* args[] = {&out};
    return dev.launch(m, "k", c, args);
  }
  std::uint32_t word(std::size_t i) {
    std::uint32_t v;
    std::memcpy(&v, dev.memory().find(out + 4 * i, 4), 4);
    return v;
  }
  // Fills 64 columns, runs `ld` (registers %r300.., address %r6), returns got[t][r].
  std::vector<std::vector<std::uint32_t>> load(const std::string& ld, int nregs, int lane = 0) {
    LaunchResult r = run(kernel(fill(64) + at(lane) + "  " + ld + ";\n  tcgen05.wait::ld.sync.aligned;\n" + dump(nregs, 300)));
    EXPECT_TRUE(r.ok && r.reports.empty()) << all(r);
    std::vector<std::vector<std::uint32_t>> got(32, std::vector<std::uint32_t>(nregs));
    for (int t = 0; t < 32; ++t)
      for (int i = 0; i < nregs; ++i) got[t][i] = word(t * nregs + i);
    return got;
  }
  // Runs `st` (values(n) in %r200.., address %r6), returns the cells grid[lane][column] of lanes
  // 0-31, columns [0, 64).
  std::vector<std::vector<std::uint32_t>> store(const std::string& st, int nregs, int lane = 0) {
    LaunchResult r = run(kernel(values(nregs) + at(lane) + "  " + st + ";\n  tcgen05.wait::st.sync.aligned;\n" + read_back(64)));
    EXPECT_TRUE(r.ok && r.reports.empty()) << all(r);
    std::vector<std::vector<std::uint32_t>> grid(32, std::vector<std::uint32_t>(64));
    for (int l = 0; l < 32; ++l)
      for (int c = 0; c < 64; ++c) grid[l][c] = word(l * 64 + c);
    return grid;
  }
  // The message of the decoder's refusal of a kernel with `insn`, or "" if it loads.
  std::string refusal(const std::string& insn) {
    try {
      dev.load(kernel("  " + insn + "\n"));
    } catch (const Fault& f) {
      EXPECT_EQ(f.report.kind, ReportKind::Unsupported);
      return f.report.message;
    }
    return "";
  }
};

struct Cell {
  std::uint32_t lane, col;
};
// The figures' rules (see the top of the file); relative to the address, unpacked.
Cell f16x64b(std::uint32_t t, std::uint32_t r) { return {t / 4 + (t % 2 ? 8 : 0), 2 * r + (t % 4 >= 2 ? 1 : 0)}; }
Cell f16x128b(std::uint32_t t, std::uint32_t r) { return {t / 4 + 8 * (r % 2), 4 * (r / 2) + t % 4}; }
Cell f16x256b(std::uint32_t t, std::uint32_t r) { return {t / 4 + 8 * (r % 4 / 2), 8 * (r / 4) + 2 * (t % 4) + r % 2}; }
Cell f16x32bx2(std::uint32_t t, std::uint32_t r, std::uint32_t split) { return {t % 16, (t >= 16 ? split : 0) + r}; }

// Every (thread, register) of a load is the cell its figure names.
template <class F>
void expect_cells(const std::vector<std::vector<std::uint32_t>>& got, int nregs, std::uint32_t lane0, F f) {
  for (std::uint32_t t = 0; t < 32; ++t)
    for (std::uint32_t r = 0; r < static_cast<std::uint32_t>(nregs); ++r) {
      const Cell c = f(t, r);
      EXPECT_EQ(got[t][r], cell(lane0 + c.lane, c.col)) << "thread " << t << " register " << r;
    }
}

// A store wrote value(t, r) to exactly the cells the figure names, and nothing else.
template <class F>
void expect_stored(const std::vector<std::vector<std::uint32_t>>& grid, int nregs, std::uint32_t lane0, F f) {
  int written = 0;
  for (const auto& lane : grid)
    for (std::uint32_t v : lane) written += v != 0xFFFFFFFFu;  // tensor memory starts as all ones
  EXPECT_EQ(written, 32 * nregs);
  for (std::uint32_t t = 0; t < 32; ++t)
    for (std::uint32_t r = 0; r < static_cast<std::uint32_t>(nregs); ++r) {
      const Cell c = f(t, r);
      EXPECT_EQ(grid[lane0 + c.lane][c.col], value(t, r)) << "thread " << t << " register " << r;
    }
}

TEST_F(Tcgen05LdSt, Load16x64bReadsTheFigureCells) {
  auto got = load("tcgen05.ld.sync.aligned.16x64b.x2.b32 " + regs(2, 300) + ", [%r6]", 2);
  EXPECT_EQ(got[1][0], cell(8, 0));  // thread 1: lane 8, column 0
  EXPECT_EQ(got[2][0], cell(0, 1));  // thread 2: lane 0, column 1
  EXPECT_EQ(got[31][1], cell(15, 3));  // thread 31, second repetition: lane 15, column 2 + 1
  expect_cells(got, 2, 0, f16x64b);
}

TEST_F(Tcgen05LdSt, Load16x128bReadsTheFigureCells) {
  auto got = load("tcgen05.ld.sync.aligned.16x128b.x2.b32 " + regs(4, 300) + ", [%r6]", 4);
  EXPECT_EQ(got[5][1], cell(9, 1));  // thread 5, register 1: lane 1 + 8, column 1
  EXPECT_EQ(got[3][2], cell(0, 7));  // thread 3, second repetition: column 4 + 3
  expect_cells(got, 4, 0, f16x128b);
}

TEST_F(Tcgen05LdSt, Load16x256bReadsTheMmaAccumulatorFragment) {
  auto got = load("tcgen05.ld.sync.aligned.16x256b.x2.b32 " + regs(8, 300) + ", [%r6]", 8);
  EXPECT_EQ(got[6][0], cell(1, 4));   // thread 6: lane 1, columns 4 and 5
  EXPECT_EQ(got[6][1], cell(1, 5));
  EXPECT_EQ(got[6][3], cell(9, 5));   // registers 2 and 3: 8 lanes down
  EXPECT_EQ(got[6][7], cell(9, 13));  // second repetition: 8 columns on
  expect_cells(got, 8, 0, f16x256b);
}

TEST_F(Tcgen05LdSt, Load16x256bAtLane16ReadsLanes16To31) {
  auto got = load("tcgen05.ld.sync.aligned.16x256b.x1.b32 " + regs(4, 300) + ", [%r6]", 4, 16);
  expect_cells(got, 4, 16, f16x256b);
}

TEST_F(Tcgen05LdSt, Load16x32bx2ReadsTheSecondHalfAtTheSplitOffset) {
  auto got = load("tcgen05.ld.sync.aligned.16x32bx2.x2.b32 " + regs(2, 300) + ", [%r6], 8", 2);
  EXPECT_EQ(got[17][1], cell(1, 9));  // thread 17: lane 1, column 8 + 1
  expect_cells(got, 2, 0, [](std::uint32_t t, std::uint32_t r) { return f16x32bx2(t, r, 8); });
}

TEST_F(Tcgen05LdSt, Store16x64bWritesTheFigureCellsOnly) {
  expect_stored(store("tcgen05.st.sync.aligned.16x64b.x4.b32 [%r6], " + regs(4, 200), 4), 4, 0, f16x64b);
}

TEST_F(Tcgen05LdSt, Store16x128bWritesTheFigureCellsOnly) {
  expect_stored(store("tcgen05.st.sync.aligned.16x128b.x2.b32 [%r6], " + regs(4, 200), 4, 16), 4, 16, f16x128b);
}

TEST_F(Tcgen05LdSt, Store16x256bWritesTheFigureCellsOnly) {
  expect_stored(store("tcgen05.st.sync.aligned.16x256b.x2.b32 [%r6], " + regs(8, 200), 8), 8, 0, f16x256b);
}

TEST_F(Tcgen05LdSt, Store16x32bx2WritesBothHalvesOnly) {
  expect_stored(store("tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%r6], 20, " + regs(2, 200), 2), 2, 0,
                [](std::uint32_t t, std::uint32_t r) { return f16x32bx2(t, r, 20); });
}

// Store then load the same shape (at its largest .num, or with .unpack::16b then .pack::16b):
// every register comes back.
void round_trip(Tcgen05LdSt& f, const std::string& shape_num, int nregs, const std::string& split = "", bool packed = false,
                int cols = 256) {
  const std::string imm = split.empty() ? "" : ", " + split;
  const std::string st = "  tcgen05.st.sync.aligned." + shape_num + (packed ? ".unpack::16b" : "") + ".b32 [%r4]" + imm + ", " +
                         regs(nregs, 200) + ";\n  tcgen05.wait::st.sync.aligned;\n";
  const std::string ld = "  tcgen05.ld.sync.aligned." + shape_num + (packed ? ".pack::16b" : "") + ".b32 " + regs(nregs, 400) +
                         ", [%r4]" + imm + ";\n  tcgen05.wait::ld.sync.aligned;\n";
  LaunchResult r = f.run(kernel(values(nregs) + st + ld + dump(nregs, 400), cols));
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_TRUE(r.reports.empty()) << all(r);
  for (std::uint32_t t = 0; t < 32; ++t)
    for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(nregs); ++i)
      ASSERT_EQ(f.word(t * nregs + i), value(t, i)) << shape_num << " thread " << t << " register " << i;
}

TEST_F(Tcgen05LdSt, RoundTrip32x32bX128) { round_trip(*this, "32x32b.x128", 128); }
TEST_F(Tcgen05LdSt, RoundTrip16x64bX128) { round_trip(*this, "16x64b.x128", 128); }
TEST_F(Tcgen05LdSt, RoundTrip16x128bX64) { round_trip(*this, "16x128b.x64", 128); }
TEST_F(Tcgen05LdSt, RoundTrip16x256bX32) { round_trip(*this, "16x256b.x32", 128); }
TEST_F(Tcgen05LdSt, RoundTrip16x32bx2X128) { round_trip(*this, "16x32bx2.x128", 128, "128"); }
TEST_F(Tcgen05LdSt, RoundTripPacked16x32bx2) { round_trip(*this, "16x32bx2.x4", 4, "8", true, 32); }
TEST_F(Tcgen05LdSt, RoundTripPacked16x256b) { round_trip(*this, "16x256b.x16", 64, "", true); }

TEST_F(Tcgen05LdSt, LoadPack16bJoinsTheLowHalvesOfAdjacentColumns) {
  auto got = load("tcgen05.ld.sync.aligned.16x128b.x1.pack::16b.b32 " + regs(2, 300) + ", [%r6]", 2);
  for (std::uint32_t t = 0; t < 32; ++t)
    for (std::uint32_t r = 0; r < 2; ++r) {
      const Cell c = f16x128b(t, r);  // column c of the unpacked shape: columns 2c and 2c + 1
      EXPECT_EQ(got[t][r], (cell(c.lane, 2 * c.col) & 0xFFFF) | cell(c.lane, 2 * c.col + 1) << 16) << t << " " << r;
    }
  EXPECT_EQ(got[1][0], 0x00030002u);  // thread 1: lane 0, columns 2 (low) and 3 (high)
  auto got32 = load("tcgen05.ld.sync.aligned.32x32b.x2.pack::16b.b32 " + regs(2, 300) + ", [%r6]", 2);
  EXPECT_EQ(got32[7][1], 0x07030702u);  // thread 7, register 1: lane 7, columns 2 and 3
}

TEST_F(Tcgen05LdSt, StoreUnpack16bSplitsARegisterIntoAdjacentColumns) {
  // value(t, r) = 0x5E00 << 16 | t << 8 | r: the low half goes to column 2c, the high half
  // (0x5E00) to column 2c + 1; the upper halves, which the ISA leaves unspecified, read as ones.
  auto grid = store("tcgen05.st.sync.aligned.16x256b.x1.unpack::16b.b32 [%r6], " + regs(4, 200), 4);
  int written = 0;
  for (const auto& lane : grid)
    for (std::uint32_t v : lane) written += v != 0xFFFFFFFFu;
  EXPECT_EQ(written, 32 * 4 * 2);
  for (std::uint32_t t = 0; t < 32; ++t)
    for (std::uint32_t r = 0; r < 4; ++r) {
      const Cell c = f16x256b(t, r);
      EXPECT_EQ(grid[c.lane][2 * c.col], 0xFFFF0000u | (value(t, r) & 0xFFFF)) << t << " " << r;
      EXPECT_EQ(grid[c.lane][2 * c.col + 1], 0xFFFF5E00u) << t << " " << r;
    }
}

TEST_F(Tcgen05LdSt, NumBeyondTheShapesRegisterTableIsRefused) {
  EXPECT_NE(refusal("tcgen05.ld.sync.aligned.16x256b.x64.b32 " + regs(4, 300) + ", [%r4];").find(
                "tcgen05.ld.16x256b needs .num in .x1 .. .x32"),
            std::string::npos);
  EXPECT_NE(refusal("tcgen05.st.sync.aligned.16x128b.x128.b32 [%r4], " + regs(4, 300) + ";").find(
                "tcgen05.st.16x128b needs .num in .x1 .. .x64"),
            std::string::npos);
  EXPECT_NE(refusal("tcgen05.ld.sync.aligned.16x64b.x3.b32 " + regs(3, 300) + ", [%r4];").find("(a power of two), not .x3"),
            std::string::npos);
  EXPECT_EQ(refusal("tcgen05.ld.sync.aligned.16x256b.x32.b32 " + regs(128, 300) + ", [%r4];"), "");
  EXPECT_EQ(refusal("tcgen05.st.sync.aligned.16x128b.x64.b32 [%r4], " + regs(128, 300) + ";"), "");
}

TEST_F(Tcgen05LdSt, MalformedOperandsAreRefused) {
  EXPECT_NE(refusal("tcgen05.ld.sync.aligned.16x128b.x2.b32 " + regs(2, 300) + ", [%r4];").find("needs a vector of 4 registers"),
            std::string::npos);
  EXPECT_NE(refusal("tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r300}, [%r4];").find("needs the immHalfSplitoff operand"),
            std::string::npos);
  EXPECT_NE(refusal("tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r300}, [%r4], %r5;").find("immHalfSplitoff as an immediate"),
            std::string::npos);
  EXPECT_NE(refusal("tcgen05.ld.sync.aligned.16x64b.x1.b32 {%r300}, [%r4], 2;").find("takes no operand after the address"),
            std::string::npos);
  EXPECT_NE(refusal("tcgen05.ld.sync.aligned.x1.b32 {%r300}, [%r4];").find("without a shape"), std::string::npos);
  EXPECT_NE(refusal("tcgen05.ld.sync.aligned.32x32b.x2.unpack::16b.b32 " + regs(2, 300) + ", [%r4];").find("takes .pack::16b"),
            std::string::npos);
  EXPECT_NE(refusal("tcgen05.st.sync.aligned.32x32b.x2.pack::16b.b32 [%r4], " + regs(2, 300) + ";").find("takes .unpack::16b"),
            std::string::npos);
  EXPECT_NE(refusal("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r300, 7}, [%r4];").find("needs registers as destinations"),
            std::string::npos);
  EXPECT_NE(refusal("tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32 " + regs(2, 300) + ", %r5, [%r4];").find("tcgen05.ld.red is not implemented"),
            std::string::npos);
}

// Two warps load .16x128b, warp 0 at lane `lane0`, warp 1 at lane `lane1`.
std::string two_warps(int lane0, int lane1) {
  return kernel("  setp.eq.u32 %p5, %r3, 1;\n  selp.u32 %r8, " + std::to_string(lane1 << 16) + ", " + std::to_string(lane0 << 16) +
                ", %p5;\n  add.u32 %r6, %r4, %r8;\n  tcgen05.ld.sync.aligned.16x128b.x1.b32 " + regs(2, 300) +
                ", [%r6];\n  tcgen05.wait::ld.sync.aligned;\n");
}

TEST_F(Tcgen05LdSt, SixteenLaneShapesStayInTheWarpsQuarter) {
  for (auto [l0, l1] : {std::pair{0, 32}, std::pair{16, 48}, std::pair{8, 40}}) {
    LaunchResult ok = run(two_warps(l0, l1), 64);
    ASSERT_TRUE(ok.ok) << all(ok);
    EXPECT_TRUE(ok.reports.empty()) << l0 << " " << l1 << "\n" << all(ok);
  }
  LaunchResult straddle = run(two_warps(24, 48), 64);  // warp 0: lanes 24-39, across two quarters
  ASSERT_TRUE(straddle.ok) << all(straddle);
  EXPECT_NE(all(straddle).find("tcgen05.ld at tensor memory lanes [24, 40) by warp 0, which may access lanes [0, 32) only"),
            std::string::npos)
      << all(straddle);
  LaunchResult other = run(two_warps(0, 16), 64);  // warp 1 in warp 0's quarter
  ASSERT_TRUE(other.ok) << all(other);
  EXPECT_NE(all(other).find("tcgen05.ld at tensor memory lanes [16, 32) by warp 1, which may access lanes [32, 64) only"),
            std::string::npos)
      << all(other);
}

TEST_F(Tcgen05LdSt, AWarpInAnotherWarpsQuarterIsReported) {
  LaunchResult r = run(kernel(at(32) + "  tcgen05.st.sync.aligned.16x64b.x1.b32 [%r6], {%r1};\n  tcgen05.wait::st.sync.aligned;\n"));
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_NE(all(r).find("tcgen05.st at tensor memory lanes [32, 48) by warp 0, which may access lanes [0, 32) only"), std::string::npos)
      << all(r);
}

TEST_F(Tcgen05LdSt, TheSecondHalfOutsideTheAllocationIsReported) {
  LaunchResult r = run(kernel("  tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r300}, [%r4], 40;\n  tcgen05.wait::ld.sync.aligned;\n", 32));
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_NE(all(r).find("tcgen05.ld of tensor memory columns [40, 41) not all allocated by this CTA"), std::string::npos) << all(r);
  // .unpack::16b doubles the columns a half spans.
  LaunchResult u = run(kernel("  tcgen05.st.sync.aligned.16x32bx2.x1.unpack::16b.b32 [%r4], 31, {%r1};\n  tcgen05.wait::st.sync.aligned;\n", 32));
  ASSERT_TRUE(u.ok) << all(u);
  EXPECT_NE(all(u).find("tcgen05.st of tensor memory columns [31, 33) not all allocated by this CTA"), std::string::npos) << all(u);
}

TEST_F(Tcgen05LdSt, AnAccessBeyondTensorMemoryFaults) {
  LaunchResult r = run(kernel("  tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r300}, [%r4], 600;\n  tcgen05.wait::ld.sync.aligned;\n"));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::OutOfBounds) << all(r);
  EXPECT_NE(r.reports[0].message.find("beyond the 128 lanes x 512 columns"), std::string::npos) << all(r);
}

TEST_F(Tcgen05LdSt, ALoadedRegisterUsedBeforeWaitLdIsReported) {
  LaunchResult r = run(kernel("  tcgen05.ld.sync.aligned.16x256b.x1.b32 " + regs(4, 300) +
                              ", [%r4];\n  add.u32 %r10, %r303, 1;\n  tcgen05.wait::ld.sync.aligned;\n"));
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_NE(all(r).find("register %r303 is a destination of a tcgen05.ld that no tcgen05.wait::ld has completed"), std::string::npos)
      << all(r);
}

// Thread 0 issues a tcgen05.mma (M = 128, N = 64) writing D at columns [64, 128), and the warp
// accesses tensor memory with `access` before the MMA's commit (issued after it) has arrived.
std::string mma_then(const std::string& access) {
  return kernel(
      "  mov.u32 %r20, sm;\n  setp.eq.u32 %p2, %r1, 0;\n  mov.u32 %r24, bar;\n"
      "  @%p2 mbarrier.init.shared.b64 [%r24], 1;\n  bar.sync 0;\n"
      // Descriptors: start >> 4 | LBO 16 >> 4 << 16 | SBO 1024 >> 4 << 32 | 0b001 << 46 | 128B << 61.
      "  cvt.u64.u32 %rd10, %r20;\n  shr.u64 %rd10, %rd10, 4;\n  and.b64 %rd10, %rd10, 16383;\n  or.b64 %rd11, %rd10, 0x4000404000010000;\n"
      "  add.u32 %r21, %r20, 16384;\n  cvt.u64.u32 %rd12, %r21;\n  shr.u64 %rd12, %rd12, 4;\n  and.b64 %rd12, %rd12, 16383;\n"
      "  or.b64 %rd13, %rd12, 0x4000404000010000;\n"
      // F32 D, BF16 A and B, N = 64, M = 128.
      "  mov.u32 %r22, 0x08100490;\n  setp.ne.u32 %p3, %r1, %r1;\n  add.u32 %r23, %r4, 64;\n"
      "  @%p2 tcgen05.mma.cta_group::1.kind::f16 [%r23], %rd11, %rd13, %r22, %p3;\n" +
          access +
          "  @%p2 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r24];\n"
          "LW:\n  mbarrier.try_wait.parity.shared.b64 %p4, [%r24], 0;\n  @!%p4 bra LW;\n",
      128, ".shared .align 1024 .b8 sm[24576];\n.shared .align 8 .b64 bar;\n");
}

TEST_F(Tcgen05LdSt, AnInFlightMmaWritingTheAccessedColumnsIsAHazard) {
  // .16x32bx2: the first half (column 0) is clear of D, the second (column 64) is not.
  LaunchResult r = run(mma_then("  tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r300}, [%r4], 64;\n  tcgen05.wait::ld.sync.aligned;\n"));
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_NE(all(r).find("tcgen05.ld reads tensor memory lanes [0, 16) columns [64, 65) that the tcgen05.mma issued at PTX line"),
            std::string::npos)
      << all(r);
  EXPECT_EQ(all(r).find("columns [0, 1)"), std::string::npos) << all(r);
  LaunchResult s = run(mma_then(values(4) + at(16, 64) + "  tcgen05.st.sync.aligned.16x256b.x1.b32 [%r6], " + regs(4, 200) +
                                ";\n  tcgen05.wait::st.sync.aligned;\n"));
  ASSERT_TRUE(s.ok) << all(s);
  EXPECT_NE(all(s).find("tcgen05.st writes tensor memory lanes [16, 32) columns [64, 72)"), std::string::npos) << all(s);
}

}  // namespace
}  // namespace mgpu::emu
