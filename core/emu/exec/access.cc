#include "core/emu/exec/access.h"

#include <cstring>
#include <sstream>

#include "core/emu/exec/address.h"

namespace mgpu::emu {

// exec/memory_access.cc
void note_global_access(Warp& w, const Insn& in, int lane, const Resolved& r, std::uint32_t bytes, bool write, bool also_read,
                        std::uint16_t order, const std::uint8_t* data, bool atomic);

namespace {

// `cta` is the CTA whose shared memory was accessed (another CTA's, through distributed shared
// memory, when it is not w's).
void report_race(Warp& w, const Insn& in, int lane, const Cta& cta, std::uint32_t offset, std::uint32_t bytes, bool is_write,
                 const RaceDetector::Conflict& c) {
  const Launch& L = w.launch();
  int line = c.pc >= 0 && static_cast<std::size_t>(c.pc) < L.code->size() ? (*L.code)[c.pc].line() : -1;
  const std::string what = std::string(is_write ? "write" : "read") + " of shared bytes [" + std::to_string(offset) + ", " +
                           std::to_string(offset + bytes) + ")" +
                           (&cta != w.cta ? " of CTA rank " + std::to_string(cta.rank) : std::string()) + " by thread " +
                           std::to_string(w.thread(lane));
  if (w.cta->races->is_agent(c.thread)) {
    w.launch().report(ReportKind::Race, where(w, in, lane),
                      what + " races with the TMA load issued at PTX line " + std::to_string(line) +
                          " that wrote them: no wait on the mbarrier phase it completed orders them");
    return;
  }
  const int stride = w.cta->races->cta_stride(), rank = c.thread / stride, t = c.thread % stride;
  w.launch().report(ReportKind::Race, where(w, in, lane),
                    what + " races with the " + (c.earlier_was_write ? "write" : "read") + " by thread " + std::to_string(t) +
                        (rank != w.cta->rank ? " of CTA rank " + std::to_string(rank) : std::string()) + " (warp " +
                        std::to_string(t / 32) + " lane " + std::to_string(t % 32) + ") at PTX line " + std::to_string(line) +
                        ": no barrier orders them");
}

std::string hex(std::uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

std::uint64_t special(Warp& w, ptx::Special s, int lane) {
  const Launch& L = w.launch();
  const LaunchConfig& c = L.config;
  const Cta& cta = *w.cta;
  int t = w.thread(lane);
  std::uint32_t bx = c.block[0], by = c.block[1];
  using S = ptx::Special;
  switch (s) {
    case S::TidX: return t % bx;
    case S::TidY: return (t / bx) % by;
    case S::TidZ: return t / (bx * by);
    case S::NtidX: return c.block[0];
    case S::NtidY: return c.block[1];
    case S::NtidZ: return c.block[2];
    case S::CtaidX: return cta.id[0];
    case S::CtaidY: return cta.id[1];
    case S::CtaidZ: return cta.id[2];
    case S::NctaidX: return c.grid[0];
    case S::NctaidY: return c.grid[1];
    case S::NctaidZ: return c.grid[2];
    case S::LaneId: return lane;
    case S::WarpId: return w.index;
    case S::NWarpId: return 64;
    case S::SmId: return static_cast<std::uint64_t>(cta.sm);
    case S::NSmId: return L.sms;
    case S::GridId: return 1;
    case S::ClusterCtaRank: return cta.rank;
    case S::ClusterNCtaRank: return c.cluster[0] * c.cluster[1] * c.cluster[2];
    case S::ClusterIdX: return cta.cluster->id[0];
    case S::ClusterIdY: return cta.cluster->id[1];
    case S::ClusterIdZ: return cta.cluster->id[2];
    case S::NClusterIdX: return c.grid[0] / c.cluster[0];
    case S::NClusterIdY: return c.grid[1] / c.cluster[1];
    case S::NClusterIdZ: return c.grid[2] / c.cluster[2];
    case S::ClusterCtaIdX: return cta.id[0] % c.cluster[0];
    case S::ClusterCtaIdY: return cta.id[1] % c.cluster[1];
    case S::ClusterCtaIdZ: return cta.id[2] % c.cluster[2];
    case S::ClusterNCtaIdX: return c.cluster[0];
    case S::ClusterNCtaIdY: return c.cluster[1];
    case S::ClusterNCtaIdZ: return c.cluster[2];
    case S::IsExplicitCluster: return L.kernel->explicit_cluster ? 1 : 0;
    case S::DynamicSmemSize: return c.dynamic_smem;
    case S::TotalSmemSize: return L.smem_bytes;
    case S::Clock: case S::Clock64: case S::GlobalTimer: return L.steps;
    case S::LaneMaskLt: return (1u << lane) - 1;
    case S::LaneMaskEq: return 1u << lane;
  }
  return 0;
}

// PTX ISA 9.7.15.7.3 "wgmma.wait_group": "Accessing the accumulator register or the input
// register containing the fragments of matrix A of a wgmma.mma_async instruction without first
// performing a wgmma.wait_group instruction that waits on a wgmma-group including that
// wgmma.mma_async instruction is undefined behavior." The text says "accessing", so a read of
// an A-fragment register is reported as well as a write (insns/wgmma.cc marks the registers,
// Warp::a_held, from the issue to the wait_group that retires the operation).
void check_a_fragment(Warp& w, const Insn& in, int reg, int lane, const char* how) {
  const WgmmaOp* op = w.a_held[static_cast<std::size_t>(reg)];
  if (!op) return;
  Launch& L = w.launch();
  L.report(ReportKind::AccumulatorEarly, where(w, in, lane),
           "register " + L.kernel->reg_names[static_cast<std::size_t>(reg)] + " " + how +
               " while it is an A fragment of the wgmma.mma_async at pc " + std::to_string(op->issued.pc) + " (PTX line " +
               std::to_string(op->issued.line) +
               "), which is still in flight: a wgmma.wait_group waiting on its wgmma-group must retire it before any other "
               "instruction reads or writes the register");
}

}  // namespace

Where where(const Warp& w, const Insn& in, int lane) {
  return w.cta->where(&w, lane, static_cast<int>(&in - w.launch().code->data()));
}

std::uint64_t read_operand(Warp& w, const Insn& in, const ptx::Operand& op, int lane) {
  using K = ptx::Operand::Kind;
  std::uint64_t v = 0;
  switch (op.kind) {
    case K::Reg:
      if (w.inflight[op.reg]) {
        w.launch().report(ReportKind::AccumulatorEarly, where(w, in, lane),
                          "register " + w.launch().kernel->reg_names[op.reg] +
                              " is the accumulator of a wgmma.mma_async that no wgmma.wait_group has retired yet");
      }
      if (w.tmem_pending[op.reg]) {
        w.launch().report(ReportKind::AccumulatorEarly, where(w, in, lane),
                          "register " + w.launch().kernel->reg_names[op.reg] +
                              " is a destination of a tcgen05.ld that no tcgen05.wait::ld has completed yet");
      }
      check_a_fragment(w, in, op.reg, lane, "read");
      w.reg_touched[op.reg] = w.reg_epoch;
      v = w.reg(op.reg, lane);
      break;
    case K::Imm:
      v = static_cast<std::uint64_t>(op.imm);
      if (op.imm_is_f32 && in.type == Ty::F64) v = f64_bits(as_f32(v));
      if (op.imm_is_f64 && in.type == Ty::F32) v = f32_bits(static_cast<float>(as_f64(v)));
      break;
    case K::Special: v = special(w, op.special, lane); break;
    case K::Symbol: {
      const Launch& L = w.launch();
      if (op.symbol >= 0) {
        const auto& var = L.module->variables[op.symbol];
        if (var.space == ptx::VarSpace::Shared) v = cluster_address(w.cta->rank, L.shared_vars[op.symbol]);
        else if (var.space == ptx::VarSpace::Local) v = L.local_vars[op.symbol];
        else v = L.global_vars[op.symbol];
      } else if (op.symbol <= -2) {
        v = L.kernel->params[-2 - op.symbol].offset;
      } else {
        w.launch().fault(ReportKind::Unsupported, where(w, in, lane), "function address '" + op.name + "' used as a value");
      }
      break;
    }
    case K::Sink: case K::None: case K::Address: case K::Vector: case K::Label:
      w.launch().fault(ReportKind::Unsupported, where(w, in, lane), "operand form not readable as a value");
  }
  if (op.negate) v = v ? 0 : 1;
  return v;
}

void write_operand(Warp& w, const Insn& in, const ptx::Operand& op, int lane, std::uint64_t bits, Ty) {
  if (op.kind == ptx::Operand::Kind::Sink) return;
  if (op.kind != ptx::Operand::Kind::Reg)
    w.launch().fault(ReportKind::Unsupported, where(w, in, lane), "destination is not a register");
  if (w.inflight[op.reg]) {
    w.launch().report(ReportKind::AccumulatorEarly, where(w, in, lane),
                      "register " + w.launch().kernel->reg_names[op.reg] +
                          " written while it is the accumulator of an unretired wgmma.mma_async");
  }
  if (w.tmem_pending[op.reg]) {
    w.launch().report(ReportKind::AccumulatorEarly, where(w, in, lane),
                      "register " + w.launch().kernel->reg_names[op.reg] +
                          " written while it is a destination of a tcgen05.ld that no tcgen05.wait::ld has completed");
  }
  check_a_fragment(w, in, op.reg, lane, "written");
  w.reg_touched[op.reg] = w.reg_epoch;
  ptx::RegType rt = w.launch().kernel->reg_types[op.reg];
  switch (rt) {
    case ptx::RegType::Pred: bits = bits ? 1 : 0; break;
    case ptx::RegType::B8: bits &= 0xFF; break;
    case ptx::RegType::B16: case ptx::RegType::F16: bits &= 0xFFFF; break;
    case ptx::RegType::B32: case ptx::RegType::F32: case ptx::RegType::F16x2: bits &= 0xFFFFFFFFull; break;
    default: break;
  }
  w.reg(op.reg, lane) = bits;
}

std::uint64_t operand_address(Warp& w, const Insn& in, const ptx::Operand& op, int lane) {
  std::uint64_t base = 0;
  if (op.reg >= 0) {
    check_a_fragment(w, in, op.reg, lane, "read as an address");
    base = w.reg(op.reg, lane);
  }
  else if (op.symbol != -1) {
    ptx::Operand sym;
    sym.kind = ptx::Operand::Kind::Symbol;
    sym.symbol = op.symbol;
    sym.name = op.name;
    base = read_operand(w, in, sym, lane);
  }
  return base + static_cast<std::uint64_t>(op.imm);
}

Cta& shared_target(Warp& w, const Insn& in, std::uint32_t a, std::uint32_t bytes, int lane, std::uint32_t& offset) {
  Launch& L = w.launch();
  int rank = cluster_rank_of(a);
  Cta* cta = w.cta;
  if (rank != w.cta->rank) {
    if (rank >= static_cast<int>(w.cta->cluster->ctas.size()))
      L.fault(ReportKind::OutOfBounds, where(w, in, lane),
              "shared::cluster address " + hex(a) + " names CTA rank " + std::to_string(rank) + " of a " +
                  std::to_string(w.cta->cluster->ctas.size()) + "-CTA cluster");
    cta = w.cta->cluster->ctas[rank].get();
    if (cta->exited && cta != w.cta)
      L.report(ReportKind::ClusterExit, where(w, in, lane),
               "access to the shared memory of CTA rank " + std::to_string(rank) + ", which has exited");
  }
  offset = a & kSharedOffsetMask;
  if (static_cast<std::uint64_t>(offset) + bytes > cta->smem.size())
    L.fault(ReportKind::OutOfBounds, where(w, in, lane),
            "shared memory access of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                " is outside the CTA's " + std::to_string(cta->smem.size()) + " bytes");
  return *cta;
}

Resolved locate(Warp& w, const Insn& in, Space space, std::uint64_t addr, std::uint32_t bytes, bool write, int lane) {
  Launch& L = w.launch();
  if (bytes > 1 && addr % std::min<std::uint32_t>(bytes, 16) != 0)
    L.fault(ReportKind::Misaligned, where(w, in, lane),
            std::to_string(bytes) + "-byte access at " + hex(addr) + " is not aligned to its size");
  if (space == Space::Generic) {
    if (addr >= kSharedWindow && addr < kSharedWindow + kWindowSize) { space = Space::SharedCluster; addr -= kSharedWindow; }
    else if (addr >= kParamWindow && addr < kParamWindow + kWindowSize) { space = Space::Param; addr -= kParamWindow; }
    else if (addr >= kLocalWindow && addr < kLocalWindow + kWindowSize) { space = Space::Local; addr -= kLocalWindow; }
    else space = Space::Global;
  }
  Resolved r;
  switch (space) {
    case Space::Shared: case Space::SharedCluster: {
      if (addr > 0xFFFFFFFFull)
        L.fault(ReportKind::OutOfBounds, where(w, in, lane), "shared address " + hex(addr) + " does not fit 32 bits");
      r.cta = &shared_target(w, in, static_cast<std::uint32_t>(addr), bytes, lane, r.offset);
      // PTX ISA 5.1.1: a shared::cta address names the executing CTA's memory only.
      if (space == Space::Shared && r.cta != w.cta)
        L.fault(ReportKind::OutOfBounds, where(w, in, lane),
                "shared::cta access at " + hex(addr) + ", an address of CTA rank " + std::to_string(r.cta->rank) +
                    " (a shared::cluster address: use .shared::cluster)");
      r.ptr = r.cta->smem.data() + r.offset;
      return r;
    }
    case Space::Param:
      if (write) L.fault(ReportKind::Unsupported, where(w, in, lane), "store to kernel parameter space");
      if (bytes > L.params.size() || addr > L.params.size() - bytes)  // addr + bytes may wrap 64 bits
        L.fault(ReportKind::OutOfBounds, where(w, in, lane),
                "parameter access at offset " + std::to_string(addr) + " beyond the " + std::to_string(L.params.size()) + "-byte parameter buffer");
      r.ptr = L.params.data() + addr;
      return r;
    case Space::Local:
      if (bytes > L.local_bytes || addr > L.local_bytes - bytes)  // addr + bytes may wrap 64 bits
        L.fault(ReportKind::OutOfBounds, where(w, in, lane), "local memory access at offset " + std::to_string(addr) + " out of bounds");
      r.ptr = w.local.data() + static_cast<std::size_t>(lane) * L.local_bytes + addr;
      return r;
    case Space::Global: case Space::Const: case Space::Generic:
      r.ptr = L.global->find(addr, bytes);
      if (!r.ptr)
        L.fault(ReportKind::OutOfBounds, where(w, in, lane),
                std::string(write ? "store" : "load") + " of " + std::to_string(bytes) + " bytes at global address " + hex(addr) +
                    " is outside every allocation (illegal address)");
      r.global = space != Space::Const;
      r.addr = addr;
      return r;
  }
  return r;
}

void record(Warp& w, const Insn& in, const Resolved& r, std::uint32_t bytes, bool write, int lane, const std::uint8_t* data,
            std::uint16_t order, bool also_read, bool atomic) {
  if (r.cta) {
    if (write) note_generic_write(w, in, *r.cta, r.offset, bytes, lane, data, order);
    else note_generic_read(w, in, *r.cta, r.offset, bytes, lane, order);
  } else if (r.global && w.launch().memory && w.cta->races) {
    note_global_access(w, in, lane, r, bytes, write, also_read, order, data, atomic);
  }
}

Resolved resolve(Warp& w, const Insn& in, Space space, std::uint64_t addr, std::uint32_t bytes, bool write, int lane,
                 const std::uint8_t* data, std::uint16_t order, bool also_read) {
  Resolved r = locate(w, in, space, addr, bytes, write, lane);
  record(w, in, r, bytes, write, lane, data, order, also_read);
  return r;
}

void count_banks(Warp& w, const Insn& in, const SharedLanes& s, std::uint32_t bytes) {
  if (!s.lanes) return;
  Launch& L = w.launch();
  if (L.banks_by_pc.empty()) L.banks_by_pc.resize(L.code->size());
  const BankCount c = bank_wavefronts(s.offset, s.lanes, bytes);
  BankTally& t = L.banks_by_pc[static_cast<std::size_t>(&in - L.code->data())];
  ++t.accesses;
  t.wavefronts += c.wavefronts;
  t.ideal += c.ideal;
}

namespace {

// Bit i: byte i of `data` equals what shared memory holds at offset + i.
std::uint64_t unchanged_bytes(const Cta& cta, std::uint32_t offset, std::uint32_t bytes, const std::uint8_t* data) {
  std::uint64_t m = 0;
  for (std::uint32_t i = 0; data && i < bytes && i < 64; ++i)
    if (cta.smem[offset + i] == data[i]) m |= 1ull << i;
  return m;
}

// PTX ISA 9.7.13.15.1: while an mbarrier object is valid (from mbarrier.init to mbarrier.inval)
// only mbarrier operations may access its 8 bytes; a plain load or store there is undefined.
void check_not_mbarrier(Warp& w, const Insn& in, const Cta& cta, std::uint32_t offset, std::uint32_t bytes, int lane, const char* what) {
  for (std::uint32_t i = 0; i < bytes; ++i)
    if (cta.shadow[offset + i].flags & SmemShadow::kMbarrier) {
      const std::uint32_t obj = (offset + i) & ~7u;
      w.launch().report(ReportKind::BarrierMisuse, where(w, in, lane),
                        std::string(what) + " shared offset " + std::to_string(offset + i) + ", inside the live mbarrier object at " +
                            std::to_string(obj) + " (initialized, not invalidated by mbarrier.inval)");
      return;
    }
}

}  // namespace

void note_generic_write(Warp& w, const Insn& in, Cta& cta, std::uint32_t offset, std::uint32_t bytes, int lane,
                        const std::uint8_t* data, std::uint16_t order) {
  // A thread's write into bytes an unretired async operation still reads (TMA store source,
  // wgmma operand) or writes (TMA load destination).
  for (const auto& op : cta.cluster->inflight) {
    std::uint32_t lo = 0, hi = 0;
    const char* what = nullptr;
    if (op->kind == AsyncOp::TmaStore) {
      auto& s = static_cast<TmaStoreOp&>(*op);
      if (s.cta != &cta) continue;
      lo = s.src; hi = s.src + static_cast<std::uint32_t>(s.map.box_bytes()); what = "a TMA store still reading it (no cp.async.bulk.wait_group.read retired it)";
    } else if (op->kind == AsyncOp::Wgmma) {
      auto& g = static_cast<WgmmaOp&>(*op);
      if (g.cta != &cta) continue;
      if (!g.reads(offset, offset + bytes)) continue;
      lo = offset; hi = offset + bytes; what = "a wgmma.mma_async still reading it (no wgmma.wait_group retired it)";
    } else if (op->kind == AsyncOp::Tcgen05Mma) {
      auto& g = static_cast<Tcgen05MmaOp&>(*op);
      if (!g.reads(&cta, offset, offset + bytes)) continue;
      lo = offset; hi = offset + bytes; what = "a tcgen05.mma still reading it (no tcgen05.commit covering it has arrived)";
    } else if (op->kind == AsyncOp::TmaLoad) {
      auto& t = static_cast<TmaLoadOp&>(*op);
      if (!(t.cta_mask & (1u << cta.rank))) continue;
      lo = t.dst; hi = t.dst + static_cast<std::uint32_t>(t.map.box_bytes()); what = "a TMA load still writing it";
    }
    if (what && offset < hi && offset + bytes > lo)
      w.launch().report(ReportKind::AsyncOverlap, where(w, in, lane),
                        "shared bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) + ") written while " + what);
  }
  check_not_mbarrier(w, in, cta, offset, bytes, lane, "store to");
  if (cta.races) {
    const RaceDetector::Write x{w.race_thread(lane), cta.race_byte_base + offset, bytes, where(w, in, lane).pc, w.launch().steps,
                                unchanged_bytes(cta, offset, bytes, data), order};
    RaceDetector::Conflict c = cta.races->on_write(x);
    if (c.found) report_race(w, in, lane, cta, offset, bytes, true, c);
    // A weak write ends the release sequences of the shared locations it overwrites (a strong
    // one is memory_sync's; check/memory_model.h).
    if (!order_bits::strong(order) && w.launch().memory)
      w.launch().memory->invalidate(MemoryModel::shared_key(cta.cluster->serial, cta.rank, offset), bytes);
  }
  // A thread of another CTA (distributed shared memory): its fences are not this CTA's, so the
  // proxy checker does not judge these bytes (README: what the virtual device does not catch).
  const std::uint16_t writer = &cta == w.cta ? static_cast<std::uint16_t>(w.thread(lane)) : SmemShadow::kRemoteWriter;
  for (std::uint32_t i = 0; i < bytes; ++i) {
    SmemShadow& s = cta.shadow[offset + i];
    s.flags = SmemShadow::kInit | SmemShadow::kGeneric;
    s.writer = writer;
    s.epoch = cta.proxy_fence_gen;
  }
}

void note_generic_read(Warp& w, const Insn& in, Cta& cta, std::uint32_t offset, std::uint32_t bytes, int lane, std::uint16_t order) {
  check_not_mbarrier(w, in, cta, offset, bytes, lane, "load from");
  if (cta.races) {
    RaceDetector::Conflict c = cta.races->on_read(w.race_thread(lane), cta.race_byte_base + offset, bytes, where(w, in, lane).pc, order);
    if (c.found) report_race(w, in, lane, cta, offset, bytes, false, c);
  }
  for (std::uint32_t i = 0; i < bytes; ++i)
    if (!(cta.shadow[offset + i].flags & SmemShadow::kInit)) {
      w.launch().report(ReportKind::Uninitialized, where(w, in, lane),
                        "read of shared offset " + std::to_string(offset + i) + " that nothing has written");
      return;
    }
}

}  // namespace mgpu::emu
