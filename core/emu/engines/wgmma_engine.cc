// wgmma.mma_async performed (PTX ISA 9.7.15.5 "Asynchronous Warpgroup Level Matrix Multiply-
// Accumulate"): D = A x B + (scale-d ? D : 0) for one m64nNk16 tile, A and B read from shared
// memory through their descriptors (A possibly from registers), accumulated in f32. The
// operation is performed once all four warps of the warpgroup issued it, in issue order.

#include "core/emu/engines/async_engine.h"
#include "core/emu/engines/smem_layout.h"
#include "core/emu/exec/scalar.h"

namespace mgpu::emu {

namespace {

float read_elem(Cluster& c, WgmmaOp& op, Cta& cta, std::uint32_t a, Ty t, bool& reported) {
  Launch& L = *c.launch;
  if (a + 2 > cta.smem.size()) L.fault(ReportKind::OutOfBounds, op.issued, "wgmma operand at shared offset " + std::to_string(a) + " is outside the CTA's shared memory");
  for (std::uint32_t b = 0; b < 2 && !reported; ++b) {
    const SmemShadow& s = cta.shadow[a + b];
    if (!(s.flags & SmemShadow::kInit)) {
      L.report(ReportKind::Uninitialized, op.issued, "wgmma.mma_async reads shared offset " + std::to_string(a + b) + " that nothing has written");
      reported = true;
    } else if (!check_async_read(c, op, cta, a + b, "wgmma.mma_async", op.fenced, op.issuer_fence)) {
      reported = true;
    }
  }
  std::uint16_t h = static_cast<std::uint16_t>(cta.smem[a] | (cta.smem[a + 1] << 8));
  return t == Ty::BF16 ? bf16_to_f32(h) : f16_to_f32(h);
}

}  // namespace

void perform_wgmma(Cluster& c, WgmmaOp& op) {
  if (op.performed) return;
  Cta& cta = *op.cta;
  // In issue order: everything this warpgroup issued before goes first.
  for (auto& earlier : cta.warpgroups[op.group].ops) {
    if (earlier.get() == &op) break;
    if (!earlier->performed) perform_wgmma(c, *earlier);
  }
  op.performed = true;
  const Insn& in = *op.insn;
  const int n = in.imm[0];
  const Ty t = in.type2;
  const bool trans_a = in.imm[3], trans_b = in.imm[4];
  const float sa = static_cast<float>(in.imm[1]), sb = static_cast<float>(in.imm[2]);
  MatrixDescriptor da = decode_wgmma_descriptor(op.desc_a), db = decode_wgmma_descriptor(op.desc_b);
  if (da.base_offset || db.base_offset)
    // The virtual device swizzles on absolute shared addresses: base offset 0 with operand
    // atoms on swizzle-repeat boundaries, which is all CUTLASS and Mosaic GPU ever emit. Another
    // base offset would need a model of the hardware this device has no evidence for.
    c.launch->fault(ReportKind::Unsupported, op.issued,
                    "a wgmma descriptor with base offset " + std::to_string(da.base_offset ? da.base_offset : db.base_offset) +
                        ": the virtual device models base offset 0 only");
  bool reported = false;
  std::vector<float> A(64 * 16), B(static_cast<std::size_t>(n) * 16);
  if (!op.a_in_regs) {
    for (int m = 0; m < 64; ++m)
      for (int k = 0; k < 16; ++k) A[m * 16 + k] = read_elem(c, op, cta, wgmma_operand_address(da, trans_a, 2, m, k), t, reported);
  } else {
    for (int w = 0; w < 4; ++w)
      for (int lane = 0; lane < 32; ++lane)
        for (int e = 0; e < 8; ++e) {
          auto [m, k] = wgmma_a_fragment_coord(32 * w + lane, e);
          A[m * 16 + k] = op.a_regs[w][static_cast<std::size_t>(e) * 32 + lane];
        }
  }
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < 16; ++k) B[j * 16 + k] = read_elem(c, op, cta, wgmma_operand_address(db, trans_b, 2, j, k), t, reported);
  // The 64 x N product first (products and sums in f32, k in order), then each warp's
  // fragment of it added to that warp's accumulator input.
  for (float& x : A) x *= sa;
  for (float& x : B) x *= sb;
  std::vector<float> D(static_cast<std::size_t>(64) * n);
  for (int m = 0; m < 64; ++m)
    for (int j = 0; j < n; ++j) {
      const float* a = &A[m * 16];
      const float* b = &B[j * 16];
      float acc = 0.0f;
      for (int k = 0; k < 16; ++k) acc += a[k] * b[k];
      D[static_cast<std::size_t>(m) * n + j] = acc;
    }
  const int regs = n / 2;
  for (int w = 0; w < 4; ++w) {
    const std::vector<float>& d_in = op.chain[w] ? op.chain[w]->d_out[w] : op.d_in[w];
    op.d_out[w].assign(static_cast<std::size_t>(regs) * 32, 0.0f);
    for (int r = 0; r < regs; ++r)
      for (int lane = 0; lane < 32; ++lane) {
        auto [m, j] = wgmma_accumulator_coord(32 * w + lane, r);
        const std::size_t i = static_cast<std::size_t>(r) * 32 + lane;
        op.d_out[w][i] = (op.scale_d[w] ? d_in[i] : 0.0f) + D[static_cast<std::size_t>(m) * n + j];
      }
  }
}

}  // namespace mgpu::emu
