// Warp-level matrix multiply-accumulate (PTX ISA 9.7.14 "Warp Level Matrix Multiply-Accumulate
// Instructions"): mma.sync (9.7.14.5.14) and the wmma family (9.7.14.4: wmma.load, wmma.mma,
// wmma.store). The whole warp executes each of them (.sync.aligned), so the interpreter gathers
// it first and a warp with exited lanes is a finding.
//
// mma.sync.aligned.m16n8k16.row.col with .f16 or .bf16 multiplicands and .f32 or .f16
// accumulators (.bf16 only with .f32), and mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32.
// Fragment layouts, PTX ISA 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point
// type" (groupID = laneid >> 2, threadID_in_group = laneid % 4; t = threadID_in_group, g = groupID):
//   A (16x16, row): a0..a7 in four .f16x2 registers, low half first;
//                   row = g for a0,a1,a4,a5 and g + 8 otherwise;
//                   col = 2t + (i & 1) for i < 4 and 2t + (i & 1) + 8 for i >= 4.
//   B (16x8, col):  b0..b3 in two .f16x2 registers; row = 2t + (i & 1) (+ 8 for i >= 2), col = g.
//   C, D (16x8):    c0..c3 (four .f32 registers, or two .f16x2); row = g for i < 2 and g + 8
//                   otherwise, col = 2t + (i & 1).
// and 9.7.14.5.6 "Matrix Fragments for mma.m16n8k4" (.tf32, one element per .b32 register):
//   A (16x4): a0, a1; row = g for a0 and g + 8 for a1, col = t.   B (4x8): b0; row = t, col = g.
//   C, D: as for m16n8k16 with .f32.
// A .tf32 operand is a .b32 register holding a tf32 value (PTX ISA 5.2.5: its internal layout is
// the implementation's; cvt.rna.tf32.f32 makes one): read as an f32 of which tf32's 10 mantissa
// bits count (the low 13 bits are dropped).
// Cross-checked against CUTLASS (include/cute/atom/mma_traits_sm80.hpp,
// MMA_Traits<SM80_16x8x16_F16F16F16F16_TN>, which the F32 and BF16 variants inherit):
//   ALayout = ((4,8),(2,2,2)):((32,1),(16,8,128)) over (M16,K16) column-major,
//   BLayout = ((4,8),(2,2)):((16,1),(8,64)) over (N8,K16), CLayout = SM80_16x8_Row =
//   ((4,8),(2,2)):((32,1),(16,8)) over (M16,N8) -- the same element for every (lane, value); and
//   MMA_Traits<SM80_16x8x4_F32TF32TF32F32_TN>: ALayout = ((4,8),2):((16,1),8) over (M16,K4),
//   BLayout = SM80_8x4 = ((4,8),1):((8,1),0) over (N8,K4), CLayout = SM80_16x8_Row.
//
// wmma (m16n16k16 .f16 into .f16 or .f32 accumulators, m8n8k4 .f64): PTX ISA 9.7.14.2 "Matrix
// Fragments for WMMA" leaves the distribution of a matrix over the warp's fragments unspecified
// ("target architecture dependent"), so a fragment may only meet wmma instructions of the same
// shape, matrix and type. The device's distribution: lane l holds element e of its fragment at
// flat position p (row-major over the matrix's rows x cols) with
//   A, B of m16n16k16 (16 halves per lane, every element held by two lanes): p = (l % 16) * 16 + e;
//   C, D of m16n16k16 (8 elements per lane): p = 8 l + e;
//   m8n8k4 .f64: A (8x4) and B (4x8) p = l, C and D (8x8) p = 2 l + e.
// wmma.load / wmma.store move element (r, c) from / to ptr + (r * stride + c) elements for .row,
// ptr + (c * stride + r) for .col (the stride, in elements, is the leading dimension; without
// it, the matrix's own). Products are summed in float (double for .f64) and rounded once, as
// for mma.sync.
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

constexpr std::uint32_t kAccF16 = 1, kBf16 = 2, kTf32K4 = 4;

float half_of(std::uint64_t reg, int hi, bool bf16) {
  const auto h = static_cast<std::uint16_t>((reg >> (hi ? 16 : 0)) & 0xFFFF);
  return bf16 ? bf16_to_f32(h) : f16_to_f32(h);
}

float tf32_of(std::uint64_t reg) { return as_f32(reg & 0xFFFFE000u); }

// The whole warp, or a finding: .sync.aligned mma needs all 32 threads.
void require_full_warp(Warp& w, const Insn& in, std::uint32_t mask) {
  if (mask == 0xFFFFFFFFu) return;
  char lanes[16];
  std::snprintf(lanes, sizeof lanes, "0x%08x", mask);
  w.launch().fault(ReportKind::NotConverged, where(w, in, __builtin_ctz(mask)),
                   "'" + in.src->opcode + "' executed by lanes " + lanes + ": mma.sync.aligned needs all 32 threads of the warp");
}

// C (16x8) from each lane's c0..c3: four .f32 registers, or two .f16x2.
void read_c(Warp& w, const Insn& in, float (&C)[16][8]) {
  const auto& c = in.operand(3).elems;
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l & 3;
    for (int i = 0; i < 4; ++i) {
      const float v = (in.flags & kAccF16) ? half_of(read_operand(w, in, c[i / 2], l), i & 1, false)
                                           : as_f32(read_operand(w, in, c[i], l));
      C[i < 2 ? g : g + 8][2 * t + (i & 1)] = v;
    }
  }
}

// D = A x B + C (products summed in float, then C added, then one rounding to D's type), written
// to each lane's d0..d3 by the C/D layout.
template <int K>
Flow finish(Warp& w, const Insn& in, const float (&A)[16][K], const float (&B)[K][8], const float (&C)[16][8]) {
  const auto& d = in.operand(0).elems;
  float D[16][8];
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += A[m][k] * B[k][n];
      D[m][n] = s + C[m][n];
    }
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l & 3;
    auto at = [&](int i) { return D[i < 2 ? g : g + 8][2 * t + (i & 1)]; };
    if (in.flags & kAccF16) {
      for (int r = 0; r < 2; ++r) {
        const std::uint64_t lo = f32_to_f16_rn(at(2 * r)), hi = f32_to_f16_rn(at(2 * r + 1));
        write_operand(w, in, d[r], l, lo | (hi << 16), Ty::B32);
      }
    } else {
      for (int i = 0; i < 4; ++i) write_operand(w, in, d[i], l, f32_bits(at(i)), Ty::F32);
    }
  }
  return Flow::Next;
}

Flow mma_m16n8k16(Warp& w, const Insn& in, std::uint32_t mask) {
  require_full_warp(w, in, mask);
  const bool bf16 = in.flags & kBf16;
  const auto& a = in.operand(1).elems;
  const auto& b = in.operand(2).elems;
  float A[16][16], B[16][8], C[16][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l & 3;
    for (int r = 0; r < 4; ++r) {  // a0..a7: register r holds a(2r) (low half) and a(2r+1)
      const std::uint64_t v = read_operand(w, in, a[r], l);
      for (int h = 0; h < 2; ++h) {
        const int i = 2 * r + h;
        const int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
        const int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
        A[row][col] = half_of(v, h, bf16);
      }
    }
    for (int r = 0; r < 2; ++r) {  // b0..b3
      const std::uint64_t v = read_operand(w, in, b[r], l);
      for (int h = 0; h < 2; ++h) {
        const int i = 2 * r + h;
        B[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][g] = half_of(v, h, bf16);
      }
    }
  }
  read_c(w, in, C);
  return finish<16>(w, in, A, B, C);
}

Flow mma_m16n8k4_tf32(Warp& w, const Insn& in, std::uint32_t mask) {
  require_full_warp(w, in, mask);
  const auto& a = in.operand(1).elems;
  const auto& b = in.operand(2).elems;
  float A[16][4], B[4][8], C[16][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l & 3;
    A[g][t] = tf32_of(read_operand(w, in, a[0], l));
    A[g + 8][t] = tf32_of(read_operand(w, in, a[1], l));
    B[t][g] = tf32_of(read_operand(w, in, b[0], l));
  }
  read_c(w, in, C);
  return finish<4>(w, in, A, B, C);
}

// --- wmma -----------------------------------------------------------------------------------
enum WmmaMat : std::uint8_t { MatA, MatB, MatC, MatD };
struct WmmaShape { int m, n, k; };

// Rows x cols of a matrix of the shape; elements per lane of its fragment; the element size.
void wmma_dims(WmmaMat mat, const WmmaShape& sh, int& rows, int& cols) {
  switch (mat) {
    case MatA: rows = sh.m; cols = sh.k; break;
    case MatB: rows = sh.k; cols = sh.n; break;
    default: rows = sh.m; cols = sh.n; break;
  }
}
int wmma_position(WmmaMat mat, bool f64, int lane, int e) {
  if (f64) return (mat == MatA || mat == MatB) ? lane : 2 * lane + e;
  return (mat == MatA || mat == MatB) ? (lane % 16) * 16 + e : 8 * lane + e;
}

// Insn fields: op = matrix, imm[0..2] = m, n, k, imm[3] = 1 for .col, imm[4] = element bytes,
// type = element type (F16, F32, F64).
WmmaShape shape_of(const Insn& in) { return {in.imm[0], in.imm[1], in.imm[2]}; }
int elements_per_lane(WmmaMat mat, bool f64) { return f64 ? ((mat == MatA || mat == MatB) ? 1 : 2) : ((mat == MatA || mat == MatB) ? 16 : 8); }

// The elements of a lane's fragment, from its registers (f16 two per register, low half first).
void fragment_values(Warp& w, const Insn& in, const ptx::Operand& regs, WmmaMat mat, Ty t, int lane, double* out) {
  const int n = elements_per_lane(mat, t == Ty::F64);
  for (int e = 0; e < n; ++e) {
    if (t == Ty::F16) out[e] = half_of(read_operand(w, in, regs.elems[e / 2], lane), e & 1, false);
    else if (t == Ty::F32) out[e] = as_f32(read_operand(w, in, regs.elems[e], lane));
    else out[e] = as_f64(read_operand(w, in, regs.elems[e], lane));
  }
}
void write_fragment(Warp& w, const Insn& in, const ptx::Operand& regs, WmmaMat mat, Ty t, int lane, const double* v) {
  const int n = elements_per_lane(mat, t == Ty::F64);
  for (int e = 0; e < n; ++e) {
    if (t == Ty::F16) {
      if (e & 1) continue;
      const std::uint64_t lo = f32_to_f16_rn(static_cast<float>(v[e])), hi = f32_to_f16_rn(static_cast<float>(v[e + 1]));
      write_operand(w, in, regs.elems[e / 2], lane, lo | (hi << 16), Ty::B32);
    } else if (t == Ty::F32) {
      write_operand(w, in, regs.elems[e], lane, f32_bits(static_cast<float>(v[e])), Ty::F32);
    } else {
      write_operand(w, in, regs.elems[e], lane, f64_bits(v[e]), Ty::F64);
    }
  }
}

// The generic address of element (r, c) for this lane's pointer and stride.
std::uint64_t wmma_address(Warp& w, const Insn& in, int ptr_operand, int stride_operand, int lane, int r, int c, int cols,
                           int rows) {
  const std::uint64_t base = operand_address(w, in, in.operand(ptr_operand), lane);
  const bool col_major = in.imm[3];
  std::uint64_t stride = col_major ? static_cast<std::uint64_t>(rows) : static_cast<std::uint64_t>(cols);
  if (stride_operand >= 0) stride = static_cast<std::uint32_t>(src(w, in, stride_operand, lane));
  const std::uint64_t idx = col_major ? static_cast<std::uint64_t>(c) * stride + r : static_cast<std::uint64_t>(r) * stride + c;
  return base + idx * static_cast<std::uint64_t>(in.imm[4]);
}

Flow wmma_load(Warp& w, const Insn& in, std::uint32_t mask) {
  require_full_warp(w, in, mask);
  const auto mat = static_cast<WmmaMat>(in.op);
  int rows = 0, cols = 0;
  wmma_dims(mat, shape_of(in), rows, cols);
  const bool f64 = in.type == Ty::F64;
  const int stride_op = in.operand_count() > 2 ? 2 : -1;
  for (int l = 0; l < 32; ++l) {
    double v[16];
    for (int e = 0; e < elements_per_lane(mat, f64); ++e) {
      const int pos = wmma_position(mat, f64, l, e), r = pos / cols, c = pos % cols;
      const std::uint64_t a = wmma_address(w, in, 1, stride_op, l, r, c, cols, rows);
      std::uint64_t bits = 0;
      std::memcpy(&bits, resolve(w, in, Space::Generic, a, static_cast<std::uint32_t>(in.imm[4]), false, l).ptr, in.imm[4]);
      v[e] = in.type == Ty::F16 ? f16_to_f32(static_cast<std::uint16_t>(bits)) : in.type == Ty::F32 ? as_f32(bits) : as_f64(bits);
    }
    write_fragment(w, in, in.operand(0), mat, in.type, l, v);
  }
  return Flow::Next;
}

Flow wmma_store(Warp& w, const Insn& in, std::uint32_t mask) {
  require_full_warp(w, in, mask);
  int rows = 0, cols = 0;
  wmma_dims(MatD, shape_of(in), rows, cols);
  const bool f64 = in.type == Ty::F64;
  const int stride_op = in.operand_count() > 2 ? 2 : -1;
  for (int l = 0; l < 32; ++l) {
    double v[8];
    fragment_values(w, in, in.operand(1), MatD, in.type, l, v);
    for (int e = 0; e < elements_per_lane(MatD, f64); ++e) {
      const int pos = wmma_position(MatD, f64, l, e), r = pos / cols, c = pos % cols;
      const std::uint64_t a = wmma_address(w, in, 0, stride_op, l, r, c, cols, rows);
      const std::uint64_t bits = in.type == Ty::F16 ? f32_to_f16_rn(static_cast<float>(v[e]))
                                 : in.type == Ty::F32 ? f32_bits(static_cast<float>(v[e]))
                                                      : f64_bits(v[e]);
      const auto bytes = static_cast<std::uint32_t>(in.imm[4]);
      std::uint8_t raw[8];
      std::memcpy(raw, &bits, 8);
      Resolved r_ = resolve(w, in, Space::Generic, a, bytes, true, l, raw);
      std::memcpy(r_.ptr, raw, bytes);
    }
  }
  return Flow::Next;
}

// wmma.mma: type = D's element type, type2 = C's; imm[5] = 1 for .f64 multiplicands.
Flow wmma_mma(Warp& w, const Insn& in, std::uint32_t mask) {
  require_full_warp(w, in, mask);
  const WmmaShape sh = shape_of(in);
  const bool f64 = in.imm[5];
  const Ty ab = f64 ? Ty::F64 : Ty::F16;
  std::vector<double> A(sh.m * sh.k), B(sh.k * sh.n), C(sh.m * sh.n);
  for (int l = 0; l < 32; ++l) {
    double v[16];
    fragment_values(w, in, in.operand(1), MatA, ab, l, v);
    for (int e = 0; e < elements_per_lane(MatA, f64); ++e) A[wmma_position(MatA, f64, l, e)] = v[e];
    fragment_values(w, in, in.operand(2), MatB, ab, l, v);
    for (int e = 0; e < elements_per_lane(MatB, f64); ++e) B[wmma_position(MatB, f64, l, e)] = v[e];
    fragment_values(w, in, in.operand(3), MatC, in.type2, l, v);
    for (int e = 0; e < elements_per_lane(MatC, f64); ++e) C[wmma_position(MatC, f64, l, e)] = v[e];
  }
  std::vector<double> D(sh.m * sh.n);
  for (int m = 0; m < sh.m; ++m)
    for (int n = 0; n < sh.n; ++n) {
      if (f64) {
        double s = 0;
        for (int k = 0; k < sh.k; ++k) s += A[m * sh.k + k] * B[k * sh.n + n];
        D[m * sh.n + n] = s + C[m * sh.n + n];
      } else {
        float s = 0;
        for (int k = 0; k < sh.k; ++k) s += static_cast<float>(A[m * sh.k + k]) * static_cast<float>(B[k * sh.n + n]);
        D[m * sh.n + n] = static_cast<double>(s + static_cast<float>(C[m * sh.n + n]));
      }
    }
  for (int l = 0; l < 32; ++l) {
    double v[8];
    for (int e = 0; e < elements_per_lane(MatD, f64); ++e) v[e] = D[wmma_position(MatD, f64, l, e)];
    write_fragment(w, in, in.operand(0), MatD, in.type, l, v);
  }
  return Flow::Next;
}

std::string wmma_shape(const ptx::Instruction& p, Insn& out, bool& f64) {
  if (has_part(p, "m16n16k16")) { out.imm[0] = 16; out.imm[1] = 16; out.imm[2] = 16; f64 = false; return ""; }
  if (has_part(p, "m8n8k4")) { out.imm[0] = 8; out.imm[1] = 8; out.imm[2] = 4; f64 = true; return ""; }
  return "only the wmma shapes .m16n16k16 (.f16) and .m8n8k4 (.f64) are implemented";
}

std::string decode_wmma(const ptx::Instruction& p, Insn& out) {
  if (!has_part(p, "sync")) return "wmma without .sync";
  bool f64 = false;
  if (std::string e = wmma_shape(p, out, f64); !e.empty()) return e;
  out.aligned = true;
  const bool load = has_part(p, "load"), store = has_part(p, "store"), mma = has_part(p, "mma");
  if (load || store) {
    if (!has_part(p, "row") && !has_part(p, "col")) return "wmma.load/store without .row or .col";
    out.imm[3] = has_part(p, "col") ? 1 : 0;
    for (const auto& part : p.parts)
      if (part == "shared" || part == "shared::cta" || part == "global")
        return "wmma with a state space is not implemented (generic addresses only)";
    out.type = last_type(p);
    if (f64 ? out.type != Ty::F64 : (out.type != Ty::F16 && out.type != Ty::F32)) return "wmma element type not implemented for this shape";
    out.imm[4] = out.type == Ty::F16 ? 2 : out.type == Ty::F32 ? 4 : 8;
    if (load) {
      out.op = has_part(p, "a") ? MatA : has_part(p, "b") ? MatB : has_part(p, "c") ? MatC : 0xFF;
      if (out.op == 0xFF) return "wmma.load without .a, .b or .c";
      if ((out.op == MatA || out.op == MatB) && out.type == Ty::F32) return "wmma.load.a/.b of .f32 is not a form of this shape";
      const std::size_t regs = f64 ? (out.op == MatC ? 2 : 1) : (out.op == MatC ? (out.type == Ty::F32 ? 8 : 4) : 8);
      if (p.operands.size() < 2 || p.operands[0].kind != ptx::Operand::Kind::Vector || p.operands[0].elems.size() != regs)
        return "wrong fragment for wmma.load";
      out.fn = &wmma_load;
      return "";
    }
    if (!has_part(p, "d")) return "wmma.store without .d";
    const std::size_t regs = f64 ? 2 : (out.type == Ty::F32 ? 8 : 4);
    if (p.operands.size() < 2 || p.operands[1].kind != ptx::Operand::Kind::Vector || p.operands[1].elems.size() != regs)
      return "wrong fragment for wmma.store";
    out.fn = &wmma_store;
    return "";
  }
  if (!mma) return "unknown wmma form";
  // wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype (m16n16k16 .f16 multiplicands), or
  // .m8n8k4.f64.f64.f64.f64.
  std::vector<Ty> types;
  for (const auto& part : p.parts)
    if (Ty t = parse_type(part); t != Ty::None) types.push_back(t);
  if (f64) {
    if (types.size() != 4 || types[0] != Ty::F64 || types[3] != Ty::F64) return "wmma.mma.m8n8k4 is .f64.f64.f64.f64";
    out.type = out.type2 = Ty::F64;
    out.imm[5] = 1;
  } else {
    if (types.size() != 2) return "expected .dtype.ctype";
    out.type = types[0];
    out.type2 = types[1];
    for (Ty t : types)
      if (t != Ty::F16 && t != Ty::F32) return "wmma.mma.m16n16k16 accumulators are .f16 or .f32";
  }
  if (p.operands.size() != 4) return "expected d, a, b, c";
  out.fn = &wmma_mma;
  return "";
}

std::string decode_mma(const ptx::Instruction& p, Insn& out) {
  // mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype d, a, b, c;
  if (!has_part(p, "sync") || !has_part(p, "aligned")) return "mma without .sync.aligned";
  const bool k16 = has_part(p, "m16n8k16"), k4 = has_part(p, "m16n8k4");
  if (!k16 && !k4) return "only the shapes .m16n8k16 (.f16/.bf16) and .m16n8k4 (.tf32) of mma.sync are implemented";
  if (!has_part(p, "row") || !has_part(p, "col")) return "these shapes of mma take .row.col only";
  std::vector<Ty> types;
  bool tf32 = false;
  for (const auto& part : p.parts) {
    if (part == "tf32") { tf32 = true; types.push_back(Ty::B32); continue; }
    if (Ty t = parse_type(part); t != Ty::None) types.push_back(t);
  }
  if (types.size() != 4) return "expected .dtype.atype.btype.ctype";
  const Ty dt = types[0], at = types[1], bt = types[2], ct = types[3];
  if (p.operands.size() != 4) return "expected d, a, b, c";
  for (std::size_t i = 0; i < 4; ++i)
    if (p.operands[i].kind != ptx::Operand::Kind::Vector) return "mma operands are vector expressions";
  if (k4) {
    if (!tf32 || at != bt || dt != Ty::F32 || ct != Ty::F32) return "only .m16n8k4.row.col.f32.tf32.tf32.f32 is implemented";
    if (p.operands[0].elems.size() != 4 || p.operands[1].elems.size() != 2 || p.operands[2].elems.size() != 1 ||
        p.operands[3].elems.size() != 4)
      return "wrong number of fragment registers for mma.m16n8k4 .tf32";
    out.flags = kTf32K4;
    out.aligned = true;
    out.fn = &mma_m16n8k4_tf32;
    return "";
  }
  if (at != bt || (at != Ty::F16 && at != Ty::BF16)) return "only .f16 and .bf16 multiplicands are implemented for .m16n8k16";
  if (dt != ct || (dt != Ty::F32 && dt != Ty::F16)) return "only .f32 and .f16 accumulators (d and c alike) are implemented";
  if (at == Ty::BF16 && dt != Ty::F32) return ".bf16 multiplicands take .f32 accumulators (PTX ISA mma)";
  const std::size_t acc_regs = dt == Ty::F16 ? 2 : 4;
  if (p.operands[0].elems.size() != acc_regs || p.operands[3].elems.size() != acc_regs || p.operands[1].elems.size() != 4 ||
      p.operands[2].elems.size() != 2)
    return "wrong number of fragment registers for mma.m16n8k16";
  out.flags = (dt == Ty::F16 ? kAccF16 : 0) | (at == Ty::BF16 ? kBf16 : 0);
  out.aligned = true;
  out.fn = &mma_m16n8k16;
  return "";
}

}  // namespace

void register_warp_mma() {
  register_decoder("mma", &decode_mma);
  register_decoder("wmma", &decode_wmma);
}

}  // namespace mgpu::emu
