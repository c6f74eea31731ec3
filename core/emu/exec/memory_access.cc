// Threads' global-memory accesses and memory synchronization, handed to the launch's memory
// model (check/memory_model.h), and its findings as reports naming both accesses.
#include <cstring>
#include <sstream>

#include "core/emu/exec/access.h"

namespace mgpu::emu {

namespace {

std::string hex(std::uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

std::string triple(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  std::ostringstream o;
  o << "(" << x << "," << y << "," << z << ")";
  return o.str();
}

int line_of(const Launch& L, int pc) {
  return pc >= 0 && static_cast<std::size_t>(pc) < L.code->size() ? (*L.code)[static_cast<std::size_t>(pc)].line() : -1;
}

MemoryModel::Thread thread_of(Warp& w, int lane) { return {w.cta->races, w.race_thread(lane)}; }

}  // namespace

std::string memory_thread_name(const Launch& L, std::uint32_t serial, int slot, int pc) {
  const LaunchConfig& c = L.config;
  const int stride = L.memory ? L.memory->stride() : 32;
  const std::uint32_t ctas = c.cluster[0] * c.cluster[1] * c.cluster[2];
  const auto& id = serial < L.cluster_order.size() ? L.cluster_order[serial] : std::array<std::uint32_t, 3>{0, 0, 0};
  if (slot >= static_cast<int>(ctas) * stride)
    return "the TMA operation issued at PTX line " + std::to_string(line_of(L, pc)) + " by cluster " + triple(id[0], id[1], id[2]);
  const std::uint32_t rank = static_cast<std::uint32_t>(slot / stride), t = static_cast<std::uint32_t>(slot % stride);
  const std::uint32_t x = rank % c.cluster[0], y = rank / c.cluster[0] % c.cluster[1], z = rank / (c.cluster[0] * c.cluster[1]);
  return "thread " + std::to_string(t) + " of CTA " +
         triple(id[0] * c.cluster[0] + x, id[1] * c.cluster[1] + y, id[2] * c.cluster[2] + z) + " (warp " + std::to_string(t / 32) +
         " lane " + std::to_string(t % 32) + ") at PTX line " + std::to_string(line_of(L, pc));
}

void report_memory_conflict(Launch& L, const Where& at, const std::string& what, const MemoryModel::Conflict& c) {
  const std::string other = memory_thread_name(L, c.serial, c.slot, c.pc);
  if (c.kind == MemoryModel::Conflict::ProxyFence) {
    L.report(ReportKind::ProxyFence, at,
             what + " sees bytes written by " + other +
                 " through the generic proxy: the write is ordered before the issue, but no fence.proxy.async (of global "
                 "memory) lies on the way from the write to the issue (in the writer after it, in the issuer before the "
                 "issue, or in a thread in between)");
    return;
  }
  std::string why = "no synchronization orders them (a barrier, or a release pattern observed by an acquire pattern at a scope "
                    "that includes both threads)";
  if ((c.order & order_bits::kAsync) && c.earlier_was_write)
    why = "no completion of that TMA store (cp.async.bulk.wait_group without .read in its issuing thread), passed on by "
          "synchronization, orders them";
  else if (order_bits::strong(c.order))
    why += "; the earlier access is strong (" + std::string(scope_name(order_bits::scope(c.order))) +
           "), but the two are not morally strong (each strong, each of a scope that includes the other thread, the same "
           "bytes: PTX ISA 8.7)";
  L.report(ReportKind::Race, at, what + " races with the " + (c.earlier_was_write ? "write" : "read") + " by " + other + " (global address " +
                                     hex(c.addr) + "): " + why);
}

void note_global_access(Warp& w, const Insn& in, int lane, const Resolved& r, std::uint32_t bytes, bool write, bool also_read,
                        std::uint16_t order, const std::uint8_t* data, bool atomic);
void note_global_access(Warp& w, const Insn& in, int lane, const Resolved& r, std::uint32_t bytes, bool write, bool also_read,
                        std::uint16_t order, const std::uint8_t* data, bool atomic) {
  Launch& L = w.launch();
  MemoryModel::Access a;
  a.addr = r.addr;
  a.bytes = bytes;
  a.pc = static_cast<int>(&in - L.code->data());
  a.read = !write || also_read;
  a.write = write;
  a.order = order;
  a.atomic = atomic;
  a.insn = L.steps;
  // The element size (8.2.4: a vector access is one access per element), for "the same address"
  // of 8.9.5; a strong access's order bits carry it too.
  if (const int eb = type_bits(in.type) / 8; eb > 0 && bytes % static_cast<std::uint32_t>(eb) == 0) a.elem = static_cast<std::uint32_t>(eb);
  if (write) {
    for (std::uint32_t i = 0; data && i < bytes && i < 64; ++i)
      if (r.ptr[i] == data[i]) a.unchanged |= 1ull << i;
  }
  const MemoryModel::Conflict c = L.memory->access(thread_of(w, lane), a);
  if (c.found()) {
    std::string what = std::string(write ? (a.read ? "atomic read-modify-write" : "write") : "read") + " of global bytes [" +
                       hex(r.addr) + ", " + hex(r.addr + bytes) + ") by thread " + std::to_string(w.thread(lane));
    if (order_bits::strong(order)) what += " (strong, " + std::string(scope_name(order_bits::scope(order))) + ")";
    report_memory_conflict(L, where(w, in, lane), what, c);
  }
  // A weak write ends the release sequences of what it overwrites (8.9.2); a strong one is
  // memory_sync's.
  if (write && !order_bits::strong(order)) L.memory->invalidate(r.addr, bytes);
}

void memory_sync(Warp& w, const Resolved& r, int lane, std::uint32_t bytes, const MemOrder& o, bool reads, bool writes, bool rmw) {
  Launch& L = w.launch();
  if (!L.memory || !w.cta->races || !o.strong) return;
  std::uint64_t key;
  if (r.global) key = r.addr;
  else if (r.cta) key = MemoryModel::shared_key(r.cta->cluster->serial, r.cta->rank, r.offset);
  else return;  // local or param memory: one thread's
  L.memory->strong_access(thread_of(w, lane), key, bytes, o, reads, writes, rmw, L.steps);
}

void note_non_coherent_read(Warp& w, const Insn& in, int lane, const Resolved& r, std::uint32_t bytes) {
  Launch& L = w.launch();
  if (!r.global || !L.memory || !w.cta->races) return;
  const MemoryModel::Conflict c = L.memory->written(r.addr, bytes);
  if (!c.found()) return;
  L.report(ReportKind::NonCoherentRead, where(w, in, lane),
           "ld.global.nc of global bytes [" + hex(r.addr) + ", " + hex(r.addr + bytes) + ") by thread " + std::to_string(w.thread(lane)) +
               " reads bytes written during this launch, last by " + memory_thread_name(L, c.serial, c.slot, c.pc) +
               " (global address " + hex(c.addr) +
               "): the memory consistency model does not apply to ld.global.nc (PTX ISA 8.1), whose non-coherent path may "
               "return what the bytes held before that write whatever synchronization orders the two; read data written in "
               "the launch with ld.global (without .nc)");
}

void memory_fence(Warp& w, int lane, Scope scope, bool acquire, bool release, bool sc) {
  Launch& L = w.launch();
  if (!L.memory || !w.cta->races) return;
  L.memory->fence(thread_of(w, lane), scope, acquire, release, sc);
}

}  // namespace mgpu::emu
