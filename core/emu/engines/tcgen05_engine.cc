// tcgen05.mma and tcgen05.commit performed (PTX ISA 9.7.16 "tcgen05.mma", "tcgen05.commit";
// data layouts: "Matrix Descriptors" 9.7.16.4, "Data path layout organization").
//  - .kind::f16, f32 D in tensor memory: D[M x N] = A[M x 16] x B[N x 16]^T + (enable-input-d ?
//    D : 0), products and sums in f32 with k in order (as the wgmma engine does).
//  - cta_group::1, M = 128: row m of D is lane m of the CTA's tensor memory, column j is column
//    d + j. cta_group::2, M = 256 (the pair): rows 0-127 come from the even CTA's A and land in
//    its tensor memory, rows 128-255 from the odd CTA's A and land in its tensor memory; B's
//    first N/2 rows come from the even CTA's shared memory and the rest from the odd CTA's (the
//    2-SM UMMA of CUTLASS: each CTA holds half of A, half of B, half of D).
//  - A in tensor memory ([a-tmem], K-major only), for both shapes above: row m of a CTA's A is
//    lane lane(a) + m of that CTA's tensor memory, and its 16 elements (K = 16 at 16 bits) fill
//    8 columns from column(a), two to a 32-bit cell: A[m][k] is the low half (bits 0-15) of cell
//    (lane(a) + m, column(a) + k / 2) for even k and its high half (bits 16-31) for odd k -- the
//    same lanes as D's rows (PTX ISA 9.7.16.10.5 "Data path layout organization": Layout D,
//    M = 128 cta_group::1, and Layout A, M = 256 cta_group::2, one row per lane over the 128
//    lanes of each CTA). The ISA draws these layouts as figures; the mapping rests on two codes
//    that agree on it:
//    CUTLASS's SM100_MMA_F16BF16_TS / _2x1SM_TS (cute/atom/mma_traits_sm100.hpp: A's fragment is
//    tmem_frg<16-bit, 16-bit> with M_MMA = 128 per SM: row m at data path m, element k at a
//    16-bit offset k, which tmem_ptr turns into column k / 2, sub-word k % 2) and Mosaic GPU
//    (jax/experimental/mosaic/gpu/tcgen05.py: A in tensor memory must have M = 128 rows per CTA
//    in tmem_default_layout(packing = 2), row m in lane m, vectors of 2 consecutive k in one
//    32-bit column, and each K = 16 instruction advances A's address by 16 / 2 = 8 columns).
// Operands are read when the scheduler performs the MMA, which is after the issuing thread's
// earlier MMAs; a commit arrives after all MMAs its thread issued before it were performed.
#include "core/emu/engines/async_engine.h"
#include "core/emu/engines/smem_layout.h"
#include "core/emu/exec/interpreter.h"
#include "core/emu/exec/scalar.h"

namespace mgpu::emu {

namespace {

float half_to_f32(std::uint16_t h, Ty t) { return t == Ty::BF16 ? bf16_to_f32(h) : f16_to_f32(h); }

float smem_elem(Cluster& c, Tcgen05MmaOp& op, Cta& cta, std::uint32_t a, Ty t, bool& reported) {
  if (a + 2 > cta.smem.size())
    c.launch->fault(ReportKind::OutOfBounds, op.issued,
                    "tcgen05.mma operand at shared offset " + std::to_string(a) + " is outside the CTA's shared memory");
  const std::size_t i = &cta == op.ctas[1] ? 1 : 0;
  for (std::uint32_t b = 0; b < 2 && !reported; ++b)
    if (!check_async_read(c, op, cta, a + b, "tcgen05.mma", op.fenced[i], &cta == op.issuer ? op.issuer_fence : 0)) reported = true;
  return half_to_f32(static_cast<std::uint16_t>(cta.smem[a] | (cta.smem[a + 1] << 8)), t);
}

}  // namespace

void perform_tcgen05_mma(Cluster& c, Tcgen05MmaOp& op) {
  if (op.performed) return;
  if (op.prev) perform_tcgen05_mma(c, *op.prev);  // the issuing thread's MMAs run in order
  op.prev.reset();
  op.performed = true;
  const Tcgen05InstrDesc& id = op.idesc;
  const int rows = op.rows_per_cta(), n = id.n, n_cta = n / op.group;
  const Ty t = id.a_type;
  bool reported = false;
  std::vector<float> A(static_cast<std::size_t>(id.m) * 16), B(static_cast<std::size_t>(n) * 16);
  for (int g = 0; g < op.group; ++g) {
    Cta& cta = *op.ctas[g];
    if (cta.exited && g > 0)
      c.launch->report(ReportKind::ClusterExit, op.issued, "tcgen05.mma.cta_group::2 reads the shared memory of CTA rank " +
                                                               std::to_string(cta.rank) + ", which has exited");
    for (int m = 0; m < rows; ++m)
      for (int k = 0; k < 16; ++k) {
        float v;
        if (op.a_tmem) {
          const std::uint32_t cell = tmem_of(cta).cell(tmem_lane(op.a_addr) + static_cast<std::uint32_t>(m),
                                                       tmem_column(op.a_addr) + static_cast<std::uint32_t>(k / 2));
          v = half_to_f32(static_cast<std::uint16_t>(cell >> (16 * (k % 2))), t);
        } else {
          v = smem_elem(c, op, cta, wgmma_operand_address(op.a, id.transpose_a, 2, m, k), t, reported);
        }
        A[static_cast<std::size_t>(g * rows + m) * 16 + k] = id.negate_a ? -v : v;
      }
    for (int j = 0; j < n_cta; ++j)
      for (int k = 0; k < 16; ++k) {
        float v = smem_elem(c, op, cta, wgmma_operand_address(op.b, id.transpose_b, 2, j, k), t, reported);
        B[static_cast<std::size_t>(g * n_cta + j) * 16 + k] = id.negate_b ? -v : v;
      }
  }
  for (int g = 0; g < op.group; ++g) {
    TensorMemory& tm = tmem_of(*op.ctas[g]);
    const std::uint32_t lane0 = tmem_lane(op.d_addr), col0 = tmem_column(op.d_addr);
    for (int m = 0; m < rows; ++m)
      for (int j = 0; j < n; ++j) {
        const float* a = &A[static_cast<std::size_t>(g * rows + m) * 16];
        const float* b = &B[static_cast<std::size_t>(j) * 16];
        float acc = 0.0f;
        for (int k = 0; k < 16; ++k) acc += a[k] * b[k];
        std::uint32_t& cell = tm.cell(lane0 + m, col0 + j);
        cell = static_cast<std::uint32_t>(f32_bits((op.accumulate ? as_f32(cell) : 0.0f) + acc));
      }
  }
}

// The arrival: once on the mbarrier at `mbar` of every CTA in the mask.
void perform_tcgen05_commit(Cluster& c, Tcgen05CommitOp& op) {
  if (op.performed) return;
  if (op.prev) perform_tcgen05_commit(c, *op.prev);
  op.prev.reset();
  for (auto& m : op.ops) {
    perform_tcgen05_mma(c, *m);
    forget(c, m.get());  // complete: it no longer reads shared memory or writes tensor memory
  }
  op.ops.clear();
  op.performed = true;
  Launch& L = *c.launch;
  for (std::size_t r = 0; r < c.ctas.size(); ++r) {
    if (!((op.cta_mask >> r) & 1)) continue;
    Cta& cta = *c.ctas[r];
    if (cta.exited && &cta != op.issuer) {
      L.report(ReportKind::ClusterExit, op.issued, "tcgen05.commit arrives on CTA rank " + std::to_string(r) + ", which has exited");
      continue;
    }
    auto it = cta.mbarriers.find(op.mbar);
    if (it == cta.mbarriers.end() || !it->second.initialized()) {
      L.report(ReportKind::BarrierMisuse, op.issued, "tcgen05.commit arrives on the mbarrier at shared offset " + std::to_string(op.mbar) +
                                                         " of CTA rank " + std::to_string(r) + ", which is not initialized");
      continue;
    }
    std::string err;
    const std::uint64_t phase_before = it->second.phase();
    if (RaceDetector* rd = cta.races; rd && !op.issue_clock.empty()) {
      MbarClocks& mc = cta.mbar_clocks[op.mbar];
      if (mc.pending.empty()) mc.pending = rd->empty_clock();
      rd->release(rd->begin_agent(op.issue_clock), mc.pending);
    }
    it->second.arrive(1, err);
    if (after_mbarrier_update(cta, op.mbar, it->second, phase_before, op.issued)) L.phase_completed = true;
    if (!err.empty())
      L.report(ReportKind::BarrierMisuse, op.issued, "mbarrier at shared offset " + std::to_string(op.mbar) + " of CTA rank " + std::to_string(r) + ": " + err);
  }
  forget(c, &op);
}

}  // namespace mgpu::emu
