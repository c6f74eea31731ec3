// wgmma instructions (PTX ISA 9.7.15.5.2 wgmma.mma_async, 9.7.15.6 wgmma.fence,
// 9.7.15.7 wgmma.commit_group, 9.7.15.8 wgmma.wait_group). Each warp issues its part; the
// four warps' k-th mma_async form one operation. Issue snapshots the accumulator and marks
// its registers in flight (they read as NaN, and touching them is reported) until the
// wait_group that retires the operation writes the result. Consecutive mma_async on the same
// accumulator chain: the later one's D is the earlier one's result, as the ISA allows
// without a fence between them. With A in registers, the A-fragment registers are held the
// same way (Warp::a_held) until that wait_group: another instruction reading or writing one
// before then is reported (exec/access.cc, check_a_fragment, quotes the ISA sentence).
#include <algorithm>
#include <cmath>

#include "core/emu/engines/async_engine.h"
#include "core/emu/engines/smem_layout.h"
#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

enum Op : std::uint8_t { Mma, Fence, Commit, WaitGroup };

std::shared_ptr<WgmmaOp> find_op(Cta& cta, int group, const WgmmaOp* raw) {
  for (auto& op : cta.warpgroups[group].ops)
    if (op.get() == raw) return op;
  return nullptr;
}

// PTX ISA 9.7.15.6 (wgmma.fence): a warpgroup executes wgmma.fence before its first
// wgmma.mma_async, and between any access by other instructions to a register and a
// wgmma.mma_async using it as accumulator or A fragment (accumulator accesses by wgmma.mma_async
// of the same shape chained on each other are ordered without one).
void check_wgmma_fence(Warp& w, const Insn& in, int l0) {
  Launch& L = w.launch();
  if (!w.wgmma_fenced) {
    L.report(ReportKind::WgmmaFence, where(w, in, l0), "wgmma.mma_async with no wgmma.fence before it in this warp (one must precede the first)");
    return;
  }
  auto check = [&](const ptx::Operand& v, const char* role) {
    for (const auto& e : v.elems)
      if (e.kind == ptx::Operand::Kind::Reg && w.reg_touched[static_cast<std::size_t>(e.reg)] == w.reg_epoch) {
        L.report(ReportKind::WgmmaFence, where(w, in, l0),
                 "register " + L.kernel->reg_names[static_cast<std::size_t>(e.reg)] + " (" + role +
                     ") was read or written by another instruction since this warp's last wgmma.fence");
        return true;
      }
    return false;
  };
  if (!check(in.operand(0), "accumulator") && in.operand(1).kind == ptx::Operand::Kind::Vector) check(in.operand(1), "A fragment");
}

Flow issue(Warp& w, const Insn& in, std::uint32_t mask) {
  Cta& cta = *w.cta;
  Launch& L = w.launch();
  const int l0 = __builtin_ctz(mask);
  if (mask != 0xFFFFFFFFu)
    L.fault(ReportKind::NotConverged, where(w, in, l0), "wgmma.mma_async executed by a warp with inactive lanes");
  const int group = w.index / 4, pos = w.index % 4;
  if (static_cast<int>(cta.warpgroups.size()) <= group)
    L.fault(ReportKind::NotConverged, where(w, in, l0), "wgmma.mma_async in a warp outside a complete warpgroup");
  check_wgmma_fence(w, in, l0);
  WarpGroupQueue& q = cta.warpgroups[group];
  std::uint64_t idx = w.wgmma_issued - q.base;
  const ptx::Operand& a = in.operand(1);
  const bool a_regs = a.kind == ptx::Operand::Kind::Vector;
  std::uint64_t desc_a = a_regs ? 0 : src(w, in, 1, l0);
  std::uint64_t desc_b = src(w, in, 2, l0);
  if (idx == q.ops.size()) {
    auto op = std::make_shared<WgmmaOp>();
    op->insn = &in;
    op->cta = &cta;
    op->group = group;
    op->issued = where(w, in, l0);
    op->desc_a = desc_a;
    op->desc_b = desc_b;
    op->a_in_regs = a_regs;
    for (const auto& e : in.operand(0).elems) op->d_slots.push_back(e.reg);
    // The shared bytes the operation reads, for the overlap checks until it retires.
    auto cover = [&](int i, std::uint64_t d, bool mn_major, int mn_extent) {
      MatrixDescriptor md = decode_wgmma_descriptor(d);
      op->smem_lo[i] = UINT32_MAX;
      for (int mn = 0; mn < mn_extent; ++mn)
        for (int k = 0; k < 16; ++k) {
          std::uint32_t a = wgmma_operand_address(md, mn_major, 2, mn, k);
          op->smem_lo[i] = std::min(op->smem_lo[i], a);
          op->smem_hi[i] = std::max(op->smem_hi[i], a + 2);
        }
    };
    if (!a_regs) cover(0, desc_a, in.imm[3], 64);
    cover(1, desc_b, in.imm[4], in.imm[0]);
    q.ops.push_back(op);
    cta.cluster->inflight.push_back(op);
  }
  WgmmaOp& op = *q.ops[idx];
  if (op.insn != &in || op.desc_a != desc_a || op.desc_b != desc_b)
    L.fault(ReportKind::NotConverged, where(w, in, l0),
            "the warps of warpgroup " + std::to_string(group) + " issued different wgmma.mma_async as their operation #" +
                std::to_string(w.wgmma_issued) + " (other instruction or descriptors)");
  op.arrived |= 1u << pos;
  if (op.arrived == 0xF) {
    op.fenced = cta.proxy_fenced;
    const std::size_t first = static_cast<std::size_t>(group) * 128;
    for (std::size_t t = first; t < first + 128 && t < op.fenced.size(); ++t) op.issuer_fence = std::max(op.issuer_fence, op.fenced[t]);
  }
  op.scale_d[pos] = src(w, in, 3, l0) & 1;
  const std::size_t regs = op.d_slots.size();
  WgmmaOp* owner = w.inflight[op.d_slots[0]];
  if (owner) op.chain[pos] = find_op(cta, group, owner);
  op.d_in[pos].assign(regs * 32, 0.0f);
  for (std::size_t r = 0; r < regs; ++r) {
    int slot = op.d_slots[r];
    if (const WgmmaOp* h = w.a_held[static_cast<std::size_t>(slot)])
      L.report(ReportKind::AccumulatorEarly, where(w, in, l0),
               "register " + L.kernel->reg_names[static_cast<std::size_t>(slot)] +
                   " used as accumulator while it is an A fragment of the wgmma.mma_async at pc " + std::to_string(h->issued.pc) +
                   " (PTX line " + std::to_string(h->issued.line) +
                   "), which is still in flight: a wgmma.wait_group waiting on its wgmma-group must retire it first");
    if (w.inflight[slot] != owner)
      L.fault(ReportKind::AccumulatorEarly, where(w, in, l0), "wgmma.mma_async accumulator mixes registers of different in-flight operations");
    for (int l = 0; l < 32; ++l) {
      if (!owner) op.d_in[pos][r * 32 + l] = as_f32(w.reg(slot, l));
      w.reg(slot, l) = f32_bits(std::nanf(""));
    }
    w.inflight[slot] = &op;
  }
  if (a_regs) {
    // The A-fragment registers are held from here to the wait_group that retires this operation
    // (PTX ISA 9.7.15.7.3 "wgmma.wait_group": accessing them before is undefined). A later
    // wgmma.mma_async of this warp reading them as its own A fragment while an earlier one holds
    // them is not reported: both only read them, and the same-A pattern is what CUTLASS's RS
    // mainloops issue (cute::gemm over (V,M) x (V,N) calls the MMA atom with the same A(_,m)
    // registers for every n, inside one warpgroup_arrive / warpgroup_commit_batch). Its read
    // therefore bypasses the check, and it becomes the registers' holder (operations retire in
    // issue order, so the latest holder is the last to retire).
    for (const auto& e : a.elems)
      if (e.kind == ptx::Operand::Kind::Reg) w.a_held[static_cast<std::size_t>(e.reg)] = nullptr;
    op.a_regs[pos].assign(8 * 32, 0.0f);
    for (int i = 0; i < 4; ++i)
      for (int l = 0; l < 32; ++l) {
        std::uint64_t v = read_operand(w, in, a.elems[i], l);
        op.a_regs[pos][(2 * i) * 32 + l] = in.type2 == Ty::BF16 ? bf16_to_f32(v & 0xFFFF) : f16_to_f32(v & 0xFFFF);
        op.a_regs[pos][(2 * i + 1) * 32 + l] = in.type2 == Ty::BF16 ? bf16_to_f32((v >> 16) & 0xFFFF) : f16_to_f32((v >> 16) & 0xFFFF);
      }
    for (const auto& e : a.elems)
      if (e.kind == ptx::Operand::Kind::Reg) w.a_held[static_cast<std::size_t>(e.reg)] = &op;
  }
  // The operation's own reads of its A fragment are no access by "other instructions".
  if (a_regs)
    for (const auto& e : a.elems) w.reg_touched[static_cast<std::size_t>(e.reg)] = 0;
  w.wgmma_open.push_back(q.ops[idx]);
  ++w.wgmma_issued;
  return Flow::Next;
}

void retire(Warp& w, WgmmaOp& op) {
  const int pos = w.index % 4;
  for (std::size_t r = 0; r < op.d_slots.size(); ++r) {
    int slot = op.d_slots[r];
    if (w.inflight[slot] != &op) continue;  // a later operation owns the accumulator now
    for (int l = 0; l < 32; ++l) w.reg(slot, l) = f32_bits(op.d_out[pos][r * 32 + l]);
    w.inflight[slot] = nullptr;
  }
  if (op.a_in_regs)
    for (const auto& e : op.insn->operand(1).elems)
      if (e.kind == ptx::Operand::Kind::Reg && w.a_held[static_cast<std::size_t>(e.reg)] == &op)
        w.a_held[static_cast<std::size_t>(e.reg)] = nullptr;  // else a later operation holds it now
  op.retired |= 1u << pos;
  WarpGroupQueue& q = w.cta->warpgroups[op.group];
  while (!q.ops.empty() && q.ops.front()->retired == 0xF) {
    forget(*w.cta->cluster, q.ops.front().get());
    q.ops.pop_front();
    ++q.base;
  }
}

Flow control(Warp& w, const Insn& in, std::uint32_t mask) {
  switch (in.op) {
    case Fence:
      w.wgmma_fenced = true;
      ++w.reg_epoch;  // every register counts as untouched since this fence
      return Flow::Next;
    case Commit:
      w.wgmma_groups.push_back(std::move(w.wgmma_open));
      w.wgmma_open.clear();
      return Flow::Next;
    case WaitGroup: {
      const int l0 = __builtin_ctz(mask);
      std::uint64_t keep = src(w, in, 0, l0);
      while (w.wgmma_groups.size() > keep) {
        for (auto& op : w.wgmma_groups.front())
          if (!op->performed && !performable(*op)) {
            EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::WgmmaGroups, 0, keep};
            return Flow::Block;
          }
        for (auto& op : w.wgmma_groups.front()) {
          perform_wgmma(*w.cta->cluster, *op);
          retire(w, *op);
        }
        w.wgmma_groups.pop_front();
      }
      return Flow::Next;
    }
    default: return Flow::Next;
  }
}

std::string decode(const ptx::Instruction& p, Insn& out) {
  out.aligned = has_part(p, "aligned");
  if (!out.aligned) return "wgmma without .sync.aligned";
  const std::string& what = p.parts.size() > 1 ? p.parts[1] : "";
  if (what == "fence") { out.op = Fence; out.fn = &control; return ""; }
  if (what == "commit_group") { out.op = Commit; out.fn = &control; return ""; }
  if (what == "wait_group") { out.op = WaitGroup; out.fn = &control; return ""; }
  if (what != "mma_async") return "unknown wgmma operation";
  // wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16
  if (p.parts.size() != 8) return "unexpected wgmma.mma_async form";
  int m = 0, n = 0, k = 0;
  if (std::sscanf(p.parts[4].c_str(), "m%dn%dk%d", &m, &n, &k) != 3) return "bad shape";
  out.type = parse_type(p.parts[5]);
  out.type2 = parse_type(p.parts[6]);
  if (m != 64 || k != 16 || n < 8 || n > 256 || n % 8) return "only m64nNk16 shapes are implemented";
  if (out.type != Ty::F32 || (out.type2 != Ty::BF16 && out.type2 != Ty::F16) || parse_type(p.parts[7]) != out.type2)
    return "only f32 += bf16 x bf16 and f32 += f16 x f16 are implemented";
  const auto& ops = p.operands;
  bool a_regs = ops.size() > 1 && ops[1].kind == ptx::Operand::Kind::Vector;
  if (ops.size() != (a_regs ? 7u : 8u)) return "unexpected operand count";
  if (ops[0].kind != ptx::Operand::Kind::Vector || static_cast<int>(ops[0].elems.size()) != n / 2)
    return "the accumulator must be a vector of N/2 registers";
  out.imm[0] = n;
  out.imm[1] = static_cast<std::int32_t>(ops[4].imm);   // imm-scale-a (1 or -1)
  out.imm[2] = static_cast<std::int32_t>(ops[5].imm);   // imm-scale-b
  out.imm[3] = a_regs ? 0 : static_cast<std::int32_t>(ops[6].imm);  // imm-trans-a
  out.imm[4] = static_cast<std::int32_t>(ops[a_regs ? 6 : 7].imm);  // imm-trans-b
  if (std::abs(out.imm[1]) != 1 || std::abs(out.imm[2]) != 1) return "imm-scale-a/b must be 1 or -1";
  out.fn = &issue;
  return "";
}

}  // namespace

void register_wgmma() { register_decoder("wgmma", &decode); }

}  // namespace mgpu::emu
