// Bulk tensor copies (PTX ISA 9.7.9.25 cp.async.bulk.tensor; 9.7.9.26 cp.async.bulk.commit_group
// / wait_group). Issue records the operation; its bytes move when the scheduler performs it
// (engines/async_engine.cc): a load completes its bytes on the mbarrier of every destination
// CTA, a store reads shared memory at some moment before the wait_group(.read) that retires it.
#include <cstring>

#include "core/emu/engines/async_engine.h"
#include "core/emu/exec/access.h"
#include "core/emu/exec/address.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

enum Op : std::uint8_t { Load, Store, Commit, WaitGroup };
enum Flag : std::uint32_t { Multicast = 1, Read = 2, CtaGroup2 = 4 };

TensorMap tensor_map_at(Warp& w, const Insn& in, const ptx::Operand& op, int l) {
  std::uint64_t a = operand_address(w, in, op, l);
  Space sp = op.symbol <= -2 && op.reg < 0 ? Space::Param : Space::Generic;
  Resolved r = resolve(w, in, sp, a, 128, false, l);
  TensorMap m;
  if (!decode_tensor_map(r.ptr, m))
    w.launch().fault(ReportKind::Unsupported, where(w, in, l), "the tensor map operand does not hold a tensor map encoded by cuTensorMapEncodeTiled");
  if (m.rank != static_cast<std::uint32_t>(in.imm[0]))
    w.launch().fault(ReportKind::Unsupported, where(w, in, l),
                     "a " + std::to_string(in.imm[0]) + "d copy with a rank-" + std::to_string(m.rank) + " tensor map");
  return m;
}

std::uint32_t shared_address(Warp& w, const Insn& in, const ptx::Operand& op, int l) {
  std::uint64_t a = operand_address(w, in, op, l);
  if (a >= kSharedWindow && a < kSharedWindow + kWindowSize) a -= kSharedWindow;  // a generic address
  return static_cast<std::uint32_t>(a);
}

// A load completing bytes on another CTA's mbarrier uses it from this thread: its init must be
// visible to the cluster and acquired by this thread (MbarInit in exec/state.h).
void check_remote_mbarrier(Warp& w, const Insn& in, const Cta& owner, std::uint32_t offset, int l) {
  auto it = owner.mbar_init.find(offset);
  if (it == owner.mbar_init.end() || it->second.visible_to(w.cluster_acquired[l])) return;
  w.launch().report(ReportKind::BarrierMisuse, where(w, in, l),
                    "TMA load from CTA rank " + std::to_string(w.cta->rank) + " completes bytes on the mbarrier at shared offset " +
                        std::to_string(offset) + " of CTA rank " + std::to_string(owner.rank) +
                        " before its mbarrier.init is visible to the cluster (fence.mbarrier_init.release.cluster or a releasing "
                        "barrier.cluster.arrive by the initializing thread, then barrier.cluster.wait here)");
}

Flow tma(Warp& w, const Insn& in, std::uint32_t mask) {
  Cluster& c = *w.cta->cluster;
  EMU_FOR_LANES(mask, l) {
    switch (in.op) {
      case Load: {
        auto op = std::make_shared<TmaLoadOp>();
        op->issued = where(w, in, l);
        op->issuer = w.cta;
        const ptx::Operand& tm = in.operand(1);
        op->map = tensor_map_at(w, in, tm, l);
        for (std::size_t i = 0; i < tm.elems.size(); ++i) op->coords[i] = static_cast<std::int32_t>(read_operand(w, in, tm.elems[i], l));
        std::uint32_t dst = shared_address(w, in, in.operand(0), l);
        std::uint32_t bar = shared_address(w, in, in.operand(2), l);
        std::uint32_t off;
        Cta& dst_cta = shared_target(w, in, dst, static_cast<std::uint32_t>(op->map.box_bytes()), l, off);
        op->dst = off;
        std::uint32_t boff;
        Cta& bar_cta = shared_target(w, in, bar, 8, l, boff);
        op->mbar = boff;
        if (in.flags & CtaGroup2) {
          op->pair = true;
          op->pair_bit = bar_cta.rank & 1;
        }
        if (in.flags & Multicast) {
          op->cta_mask = static_cast<std::uint32_t>(src(w, in, 3, l)) & ((1u << c.ctas.size()) - 1);
        } else {
          if (&bar_cta != &dst_cta && !((in.flags & CtaGroup2) && (bar_cta.rank ^ 1) == dst_cta.rank))
            w.launch().fault(ReportKind::Unsupported, where(w, in, l),
                             (in.flags & CtaGroup2) ? "a .cta_group::2 TMA load whose mbarrier is neither in its destination CTA nor in that CTA's peer"
                                                    : "a TMA load whose mbarrier is in another CTA than its destination (.cta_group::1)");
          op->cta_mask = 1u << dst_cta.rank;
        }
        for (std::size_t r = 0; r < c.ctas.size(); ++r)
          if ((op->cta_mask >> r) & 1 && op->barrier_rank(static_cast<int>(r)) >= static_cast<int>(c.ctas.size()))
            w.launch().fault(ReportKind::OutOfBounds, where(w, in, l), "a .cta_group::2 TMA load into CTA rank " + std::to_string(r) +
                                                                          ", whose pair has no CTA of rank " + std::to_string(op->barrier_rank(static_cast<int>(r))));
        if (op->dst % 128)
          w.launch().fault(ReportKind::Misaligned, where(w, in, l), "TMA destination at shared offset " + std::to_string(op->dst) + " is not 128-byte aligned");
        for (std::size_t r = 0; r < c.ctas.size(); ++r) {
          op->issue_phase[r] = TmaLoadOp::kNoPhase;
          if (!((op->cta_mask >> r) & 1)) continue;
          Cta& bc = *c.ctas[static_cast<std::size_t>(op->barrier_rank(static_cast<int>(r)))];
          if (&bc != w.cta) check_remote_mbarrier(w, in, bc, op->mbar, l);
          auto it = bc.mbarriers.find(op->mbar);
          if (it != bc.mbarriers.end() && it->second.initialized()) op->issue_phase[r] = it->second.phase();
        }
        if (RaceDetector* rd = w.cta->races) op->issue_clock = rd->snapshot(w.race_thread(l));
        // A load may land at any moment after its issue: its destination must be free now.
        for (std::size_t r = 0; r < c.ctas.size(); ++r)
          if ((op->cta_mask >> r) & 1)
            check_async_write(c, *op, *c.ctas[r], op->dst, op->dst + static_cast<std::uint32_t>(op->map.box_bytes()));
        c.inflight.push_back(op);
        break;
      }
      case Store: {
        auto op = std::make_shared<TmaStoreOp>();
        op->issued = where(w, in, l);
        const ptx::Operand& tm = in.operand(0);
        op->map = tensor_map_at(w, in, tm, l);
        for (std::size_t i = 0; i < tm.elems.size(); ++i) op->coords[i] = static_cast<std::int32_t>(read_operand(w, in, tm.elems[i], l));
        std::uint32_t srca = shared_address(w, in, in.operand(1), l);
        op->cta = &shared_target(w, in, srca, static_cast<std::uint32_t>(op->map.box_bytes()), l, op->src);
        if (op->src % 128)
          w.launch().fault(ReportKind::Misaligned, where(w, in, l), "TMA source at shared offset " + std::to_string(op->src) + " is not 128-byte aligned");
        check_tma_store_issue(c, *op, op->cta == w.cta ? w.cta->proxy_fenced[static_cast<std::size_t>(w.thread(l))] : 0);
        // Its global writes know what the issuing thread knew at the issue (check/memory_model.h).
        if (RaceDetector* rd = w.cta->races; rd && w.launch().memory) op->issue_clock = rd->snapshot(w.race_thread(l));
        c.inflight.push_back(op);
        w.bulk_open[l].push_back(op);
        break;
      }
      case Commit:
        w.bulk_groups[l].push_back(BulkGroup{std::move(w.bulk_open[l])});
        w.bulk_open[l].clear();
        break;
      case WaitGroup: {
        std::size_t keep = static_cast<std::size_t>(src(w, in, 0, l));
        while (w.bulk_groups[l].size() > keep) {
          for (auto& op : w.bulk_groups[l].front().ops) {
            if (!op->performed) perform(c, *op);
            forget(c, op.get());
            // Without .read the wait is the stores' completion: their global writes are done and
            // visible to this thread (followed by an implicit generic-async proxy fence,
            // 9.7.9.25), which it passes on by later synchronization. .read says only that the
            // source was read.
            if (!(in.flags & Read) && op->kind == AsyncOp::TmaStore)
              if (RaceDetector* rd = w.cta->races; rd && !static_cast<TmaStoreOp&>(*op).done.empty())
                rd->acquire(w.race_thread(l), static_cast<TmaStoreOp&>(*op).done);
          }
          w.bulk_groups[l].pop_front();
        }
        break;
      }
    }
  }
  return Flow::Next;
}

std::string decode(const ptx::Instruction& p, Insn& out) {
  // cp.async.bulk.tensor.Nd.dst.src...  |  cp.async.bulk.commit_group  |  cp.async.bulk.wait_group
  if (p.parts.size() < 3 || p.parts[1] != "async" || p.parts[2] != "bulk") return "only cp.async.bulk forms are implemented";
  if (p.parts.size() > 3 && p.parts[3] == "commit_group") { out.op = Commit; out.fn = &tma; return ""; }
  if (p.parts.size() > 3 && p.parts[3] == "wait_group") {
    out.op = WaitGroup;
    if (has_part(p, "read")) out.flags |= Read;
    out.fn = &tma;
    return "";
  }
  if (p.parts.size() < 6 || p.parts[3] != "tensor") return "non-tensor bulk copies are not implemented";
  out.imm[0] = p.parts[4][0] - '0';  // "2d"
  if (out.imm[0] < 1 || out.imm[0] > 5 || p.parts[4].size() != 2 || p.parts[4][1] != 'd') return "bad tensor rank";
  if (has_part(p, "im2col") || has_part(p, "tile::gather4") || has_part(p, "tile::scatter4")) return "only the tile mode is implemented";
  if (p.parts[5] == "shared::cluster" || p.parts[5] == "shared::cta") {
    out.op = Load;
    if (!has_part(p, "mbarrier::complete_tx::bytes")) return "a tensor load without mbarrier::complete_tx::bytes";
    if (has_part(p, "multicast::cluster")) out.flags |= Multicast;
    if (has_part(p, "cta_group::2")) out.flags |= CtaGroup2;
  } else if (p.parts[5] == "global") {
    out.op = Store;
    if (!has_part(p, "bulk_group")) return "a tensor store without .bulk_group";
  } else {
    return "unknown direction";
  }
  out.fn = &tma;
  return "";
}


}  // namespace

void register_tma() { register_decoder("cp", &decode); }

}  // namespace mgpu::emu
