// Harness for the per-instruction-family spec tests (test_emu_isa_*.cc): tiny PTX kernels run
// on the virtual device. A body sees the input buffer's address in %rd62 and the output
// buffer's in %rd63 (8-byte slots, zero-initialized), and the registers %p<16>, %h<16>,
// %r<64>, %rd<62> and %f<16> declared. Expected values in the tests come from the PTX ISA
// text cited beside each test, never from running the emulator.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/emu/device.h"

namespace mgpu::emu::isa {

// One source operand of op(): its width in bits (1 = predicate, loaded as a u32 != 0) and value.
struct Src {
  int bits;
  std::uint64_t v;
};
inline Src P(bool v) { return {1, v ? 1u : 0u}; }
inline Src H(std::uint64_t v) { return {16, v}; }
inline Src R(std::uint64_t v) { return {32, v}; }
inline Src RD(std::uint64_t v) { return {64, v}; }

inline std::uint64_t f32(float f) { std::uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline std::uint64_t f64(double d) { std::uint64_t u; std::memcpy(&u, &d, 8); return u; }
inline float as_f(std::uint64_t u) { float f; std::uint32_t v = static_cast<std::uint32_t>(u); std::memcpy(&f, &v, 4); return f; }
inline double as_d(std::uint64_t u) { double d; std::memcpy(&d, &u, 8); return d; }

struct IsaTest : ::testing::Test {
  Device dev;

  static std::string module(const std::string& body, const std::string& globals = "", const std::string& directives = "") {
    return ".version 8.0\n.target sm_90a\n.address_size 64\n" + globals +
           "\n.visible .entry k(.param .u64 pin, .param .u64 pout)" + directives +
           "\n{\n"
           "  .reg .pred %p<16>;\n  .reg .b16 %h<16>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<64>;\n  .reg .f32 %f<16>;\n"
           "  ld.param.u64 %rd62, [pin];\n  ld.param.u64 %rd63, [pout];\n" +
           body + "\n  ret;\n}\n";
  }

  static LaunchConfig cfg(std::uint32_t threads = 1, std::uint32_t grid = 1, std::uint64_t seed = 1) {
    LaunchConfig c;
    c.block[0] = threads;
    c.grid[0] = grid;
    c.seed = seed;
    return c;
  }

  static std::string all(const LaunchResult& r) {
    std::string s;
    for (const auto& x : r.reports) s += x.format() + "\n";
    return s;
  }

  // Runs the body; returns the output slots (nout of 8 bytes each).
  std::vector<std::uint64_t> run(const std::string& body, const std::vector<std::uint64_t>& in, std::size_t nout,
                                 const LaunchConfig& c = cfg(), const std::string& globals = "", const std::string& directives = "") {
    LoadedModule& m = dev.load(module(body, globals, directives));
    std::vector<std::uint64_t> inv = in;
    if (inv.empty()) inv.push_back(0);
    std::uint64_t din = dev.memory().alloc(inv.size() * 8);
    std::memcpy(dev.memory().find(din, inv.size() * 8), inv.data(), inv.size() * 8);
    std::uint64_t dout = dev.memory().alloc(nout * 8);
    std::memset(dev.memory().find(dout, nout * 8), 0, nout * 8);
    void* args[] = {&din, &dout};
    LaunchResult r = dev.launch(m, "k", c, args);
    EXPECT_TRUE(r.ok) << all(r) << "\n" << body;
    std::vector<std::uint64_t> out(nout);
    std::memcpy(out.data(), dev.memory().find(dout, nout * 8), nout * 8);
    return out;
  }

  static std::string reg(int bits, int i) {
    switch (bits) {
      case 1: return "%p" + std::to_string(i);
      case 16: return "%h" + std::to_string(i);
      case 32: return "%r" + std::to_string(i);
      default: return "%rd" + std::to_string(i);
    }
  }

  // `insn d, s1, s2, ...` with every source in a register loaded from the input buffer and the
  // destination (dbits wide; 1 = predicate) stored to slot 0. `extra` is appended to the
  // operand list verbatim (e.g. an immediate lop3 LUT).
  std::uint64_t op(const std::string& insn, int dbits, const std::vector<Src>& srcs, const std::string& extra = "") {
    std::string body;
    std::vector<std::uint64_t> in;
    std::string operands = reg(dbits, 0);
    for (std::size_t i = 0; i < srcs.size(); ++i) {
      const int n = static_cast<int>(i) + 1;
      const std::string off = "[%rd62+" + std::to_string(8 * i) + "]";
      switch (srcs[i].bits) {
        case 1:
          body += "  ld.global.u32 %r" + std::to_string(40 + n) + ", " + off + ";\n";
          body += "  setp.ne.u32 %p" + std::to_string(n) + ", %r" + std::to_string(40 + n) + ", 0;\n";
          break;
        case 16: body += "  ld.global.u16 %h" + std::to_string(n) + ", " + off + ";\n"; break;
        case 32: body += "  ld.global.u32 %r" + std::to_string(n) + ", " + off + ";\n"; break;
        default: body += "  ld.global.u64 %rd" + std::to_string(n) + ", " + off + ";\n"; break;
      }
      operands += ", " + reg(srcs[i].bits, n);
      in.push_back(srcs[i].v);
    }
    if (!extra.empty()) operands += ", " + extra;
    body += "  " + insn + " " + operands + ";\n";
    switch (dbits) {
      case 1: body += "  selp.u32 %r40, 1, 0, %p0;\n  st.global.u32 [%rd63], %r40;\n"; break;
      case 16: body += "  st.global.u16 [%rd63], %h0;\n"; break;
      case 32: body += "  st.global.u32 [%rd63], %r0;\n"; break;
      default: body += "  st.global.u64 [%rd63], %rd0;\n"; break;
    }
    return run(body, in, 1)[0];
  }
};

}  // namespace mgpu::emu::isa
