// mbarrier instructions (PTX ISA 9.7.13.15: init, inval, arrive, arrive_drop, expect_tx,
// complete_tx, arrive.expect_tx, test_wait, try_wait, incl. .parity and remote
// .shared::cluster arrivals, .release/.acquire or .relaxed). try_wait suspends the lanes until the phase completes (the ISA
// lets a thread sleep inside try_wait), so a hung pipeline shows up as a deadlock naming the
// barrier instead of a spin.
#include "core/emu/engines/mbarrier.h"

#include "core/emu/exec/access.h"
#include "core/emu/exec/address.h"
#include "core/emu/exec/decode.h"
#include "core/emu/exec/interpreter.h"

namespace mgpu::emu {
namespace {

enum Op : std::uint8_t { Init, Inval, Arrive, ArriveDrop, ExpectTx, CompleteTx, ArriveExpectTx, TestWait, TryWait };
enum Flag : std::uint32_t { Parity = 1, DropExpectTx = 2, Relaxed = 4 };

struct Target {
  Cta* cta;
  std::uint32_t offset;
  MBarrier* bar;
};

Target barrier_at(Warp& w, const Insn& in, const ptx::Operand& addr_op, int l) {
  std::uint64_t a = operand_address(w, in, addr_op, l);
  if (in.space == Space::Generic) {
    if (a < kSharedWindow || a >= kSharedWindow + kWindowSize)
      w.launch().fault(ReportKind::BarrierMisuse, where(w, in, l), "mbarrier address is not in shared memory");
    a -= kSharedWindow;
  }
  if (a % 8) w.launch().fault(ReportKind::Misaligned, where(w, in, l), "mbarrier address " + std::to_string(a) + " is not 8-byte aligned");
  Target t;
  t.cta = &shared_target(w, in, static_cast<std::uint32_t>(a), 8, l, t.offset);
  t.bar = &t.cta->mbarriers[t.offset];
  return t;
}

// A thread of another CTA uses the mbarrier: its init must have been published to the cluster
// (MbarInit) and this thread must have acquired that (its cluster barrier wait, `acquired`).
void check_visible(Warp& w, const Insn& in, const Target& t, int l, std::uint64_t acquired) {
  auto it = t.cta->mbar_init.find(t.offset);
  if (it == t.cta->mbar_init.end() || it->second.visible_to(acquired)) return;
  w.launch().report(ReportKind::BarrierMisuse, where(w, in, l),
                    "'" + in.src->opcode + "' from CTA rank " + std::to_string(w.cta->rank) + " on the mbarrier at shared offset " +
                        std::to_string(t.offset) + " of CTA rank " + std::to_string(t.cta->rank) +
                        " before its mbarrier.init is visible to the cluster: the initializing thread needs "
                        "fence.mbarrier_init.release.cluster (or a releasing barrier.cluster.arrive) and this thread a "
                        "barrier.cluster.wait after that arrival");
}

void check_init(Warp& w, const Insn& in, const Target& t, int l) {
  if (!t.bar->initialized())
    w.launch().report(ReportKind::BarrierMisuse, where(w, in, l),
                      "'" + in.src->opcode + "' on the mbarrier at shared offset " + std::to_string(t.offset) + " that was never initialized (mbarrier.init)");
}

std::uint32_t pc_of(const Warp& w, const Insn& in) { return static_cast<std::uint32_t>(&in - w.launch().code->data()); }

void misuse(Warp& w, const Insn& in, const Target& t, int l, const std::string& err) {
  if (!err.empty())
    w.launch().report(ReportKind::BarrierMisuse, where(w, in, l), "mbarrier at shared offset " + std::to_string(t.offset) + ": " + err);
}

Flow mbarrier(Warp& w, const Insn& in, std::uint32_t mask) {
  // Operand positions: init/inval/expect_tx/complete_tx: [addr], ...; arrive*: state, [addr], ...;
  // waits: result, [addr], parity-or-state.
  const bool has_state = in.op == Arrive || in.op == ArriveDrop || in.op == ArriveExpectTx || in.op == TestWait || in.op == TryWait;
  const std::size_t ai = has_state ? 1 : 0;
  Flow flow = Flow::Next;
  EMU_FOR_LANES(mask, l) {
    Target t = barrier_at(w, in, in.operand(ai), l);
    std::string err;
    switch (in.op) {
      case Init: {
        std::uint64_t count = src(w, in, 1, l);
        if (count < 1 || count >= (1u << 20))
          w.launch().fault(ReportKind::BarrierMisuse, where(w, in, l), "mbarrier.init count " + std::to_string(count) + " is not in [1, 2^20-1]");
        // PTX ISA 9.7.13.15.1 (mbarrier.init, mbarrier.inval): init on a location that holds a
        // valid mbarrier object is undefined; mbarrier.inval must end the old object first.
        if (t.bar->initialized())
          w.launch().report(ReportKind::BarrierMisuse, where(w, in, l),
                            "mbarrier.init on the live mbarrier at shared offset " + std::to_string(t.offset) +
                                " (initialized before and not invalidated by mbarrier.inval; phase " + std::to_string(t.bar->phase()) + ")");
        t.bar->init(static_cast<std::uint32_t>(count));
        if (t.cta == w.cta) t.cta->mbar_init[t.offset] = MbarInit{w.thread(l), false, MbarInit::kNever};
        for (std::uint32_t i = 0; i < 8; ++i) t.cta->shadow[t.offset + i].flags = SmemShadow::kInit | SmemShadow::kMbarrier;
        break;
      }
      case Inval:
        t.bar->invalidate();
        for (std::uint32_t i = 0; i < 8; ++i) t.cta->shadow[t.offset + i].flags &= static_cast<std::uint8_t>(~SmemShadow::kMbarrier);
        break;
      case ExpectTx:
        check_init(w, in, t, l);
        t.bar->expect_tx(static_cast<std::uint32_t>(src(w, in, 1, l)), err);
        misuse(w, in, t, l, err);
        break;
      case CompleteTx: {
        check_init(w, in, t, l);
        const std::uint64_t phase_before = t.bar->phase();
        t.bar->complete_tx(static_cast<std::uint32_t>(src(w, in, 1, l)), err);
        after_mbarrier_update(*t.cta, t.offset, *t.bar, phase_before, where(w, in, l));
        misuse(w, in, t, l, err);
        break;
      }
      case Arrive: case ArriveDrop: case ArriveExpectTx: {
        check_init(w, in, t, l);
        if (t.cta != w.cta) check_visible(w, in, t, l, w.cluster_acquired[l]);
        std::uint32_t count = 1;
        if (in.op == ArriveExpectTx || (in.flags & DropExpectTx)) {
          t.bar->expect_tx(static_cast<std::uint32_t>(src(w, in, 2, l)), err);
          misuse(w, in, t, l, err);
          err.clear();
        } else if (in.operand_count() > 2) {
          count = static_cast<std::uint32_t>(src(w, in, 2, l));
        }
        const std::uint64_t phase_before = t.bar->phase();
        // An arrive is a release unless .relaxed (PTX ISA 9.7.13.15.13: "The .relaxed qualifier
        // does not provide any memory ordering semantics and visibility guarantees").
        if (RaceDetector* rd = t.cta->races; rd && !(in.flags & Relaxed)) {
          MbarClocks& mc = t.cta->mbar_clocks[t.offset];
          if (mc.pending.empty()) mc.pending = rd->empty_clock();
          rd->release(w.race_thread(l), mc.pending);
        }
        std::uint64_t token = in.op == ArriveDrop ? t.bar->arrive_drop(count, err) : t.bar->arrive(count, err);
        // The arrival that completes a phase may hand the warp over to its waiters.
        if (after_mbarrier_update(*t.cta, t.offset, *t.bar, phase_before, where(w, in, l))) w.launch().phase_completed = true;
        misuse(w, in, t, l, err);
        if (in.operand(0).kind != ptx::Operand::Kind::Sink) dst(w, in, 0, l, token);
        break;
      }
      case TestWait: case TryWait: {
        check_init(w, in, t, l);
        std::uint64_t v = src(w, in, 2, l);
        // A parity operand, or a state token (the phase it arrived in): either way the lane waits
        // for the phase of that parity to complete.
        const std::uint32_t parity = static_cast<std::uint32_t>(v & 1);
        bool done = in.flags & Parity ? t.bar->phase_complete_parity(parity) : t.bar->phase_complete_token(v);
        const std::uint32_t who = cluster_address(t.cta->rank, t.offset);
        if (in.op == TestWait && l == __builtin_ctz(mask)) note_poll(w, pc_of(w, in), who, v, done);
        if (!done && in.op == TryWait && t.bar->initialized()) {
          w.wait[l] = Wait{Wait::Mbar, who, parity};
          flow = Flow::Block;
          break;
        }
        // A successful wait acquires unless .relaxed (PTX ISA 9.7.13.15.16, test_wait/try_wait).
        if (done && !(in.flags & Relaxed))
          if (RaceDetector* rd = w.cta->races) {
            const MbarClocks& mc = t.cta->mbar_clocks[t.offset];
            if (!mc.completed.empty()) rd->acquire(w.race_thread(l), mc.completed);
          }
        write_operand(w, in, in.operand(0), l, done, Ty::Pred);
        break;
      }
    }
  }
  if (flow == Flow::Block) {
    // Lanes that completed their wait go on; the others stay. Advance the completed ones here.
    EMU_FOR_LANES(mask, l) {
      if (w.wait[l].kind != Wait::Mbar) { w.pc[l] += 1; w.wait[l] = Wait{}; }
    }
  }
  return flow;
}

std::string decode(const ptx::Instruction& p, Insn& out) {
  const std::string& what = p.parts.size() > 1 ? p.parts[1] : "";
  if (what == "init") out.op = Init;
  else if (what == "inval") out.op = Inval;
  else if (what == "arrive" && has_part(p, "expect_tx")) out.op = ArriveExpectTx;
  else if (what == "arrive") out.op = Arrive;
  else if (what == "arrive_drop") {
    out.op = ArriveDrop;
    if (has_part(p, "expect_tx")) out.flags |= DropExpectTx;
  }
  else if (what == "expect_tx") out.op = ExpectTx;
  else if (what == "complete_tx") out.op = CompleteTx;
  else if (what == "test_wait") out.op = TestWait;
  else if (what == "try_wait") out.op = TryWait;
  else return "unknown mbarrier operation";
  if (has_part(p, "parity")) out.flags |= Parity;
  if (has_part(p, "relaxed")) out.flags |= Relaxed;
  out.space = space_of(p);
  out.type = Ty::B64;
  out.fn = &mbarrier;
  return "";
}

}  // namespace

void register_mbarrier() { register_decoder("mbarrier", &decode); }

}  // namespace mgpu::emu
