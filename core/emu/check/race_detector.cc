#include "core/emu/check/race_detector.h"

#include <algorithm>

namespace mgpu::emu {

RaceDetector::RaceDetector(int ctas, int cta_stride, std::size_t smem_bytes)
    : cta_stride_(cta_stride), cta_threads_(ctas * cta_stride), threads_(cta_threads_ + ctas * kAgents),
      agents_(ctas * kAgents), vc_(static_cast<std::size_t>(threads_) * threads_, 0), events_(threads_, 0),
      joined_at_(threads_, 0), joined_key_(threads_, 0), write_(smem_bytes * static_cast<std::size_t>(ctas)),
      read_(smem_bytes * static_cast<std::size_t>(ctas)) {
  for (int t = 0; t < threads_; ++t) vc(t)[t] = 1;
}

int RaceDetector::begin_agent(const Clock& issue) {
  const int a = cta_threads_ + next_agent_;
  next_agent_ = (next_agent_ + 1) % agents_;
  std::uint32_t* mine = vc(a);
  const std::uint32_t own = std::max(mine[a], issue[static_cast<std::size_t>(a)]);
  std::copy(issue.begin(), issue.end(), mine);
  mine[a] = own;
  ++events_[a];
  return a;
}

bool RaceDetector::ordered_before(const Epoch& e, int thread) const {
  if (e.thread_plus1 == 0) return true;
  int u = e.thread_plus1 - 1;
  return u == thread || e.clock <= vc(thread)[u];
}

bool RaceDetector::same_value_same_instruction(const Write& x, const Epoch& e, std::uint32_t i) const {
  if (!x.insn || i >= 64 || !((x.unchanged >> i) & 1)) return false;
  // The epoch is the byte's last write: if its thread wrote the byte in this instruction, it is
  // that write (nothing runs between the lanes of one instruction).
  for (const Span& s : insn_writes_)
    if (s.thread == e.thread_plus1 - 1 && x.offset + i >= s.lo && x.offset + i < s.hi) return true;
  return false;
}

RaceDetector::Conflict RaceDetector::on_write(const Write& x) {
  Conflict c;
  ++events_[x.thread];
  if (x.insn != insn_) insn_ = x.insn, insn_writes_.clear();
  const std::uint32_t now = vc(x.thread)[x.thread];
  for (std::uint32_t i = 0; i < x.bytes; ++i) {
    Epoch& w = write_[x.offset + i];
    Epoch& r = read_[x.offset + i];
    // Two async writes (TMA loads) of the same bytes are the overlap checker's: it reports them
    // while both are in flight; one that has landed cannot land again (engines/async_engine.cc).
    const bool both_async = is_agent(x.thread) && w.thread_plus1 && is_agent(w.thread_plus1 - 1);
    if (!c.found && !ordered_before(w, x.thread) && !same_value_same_instruction(x, w, i) && !both_async)
      c = {true, true, w.thread_plus1 - 1, w.pc};
    if (!c.found && !ordered_before(r, x.thread)) c = {true, false, r.thread_plus1 - 1, r.pc};
    w = {now, x.pc, static_cast<std::uint16_t>(x.thread + 1)};
  }
  if (x.insn) insn_writes_.push_back({x.thread, x.offset, x.offset + x.bytes});
  return c;
}

RaceDetector::Conflict RaceDetector::on_read(int thread, std::uint32_t offset, std::uint32_t bytes, int pc) {
  Conflict c;
  ++events_[thread];
  const std::uint32_t now = vc(thread)[thread];
  for (std::uint32_t i = 0; i < bytes; ++i) {
    const Epoch& w = write_[offset + i];
    if (!c.found && !ordered_before(w, thread)) c = {true, true, w.thread_plus1 - 1, w.pc};
    read_[offset + i] = {now, pc, static_cast<std::uint16_t>(thread + 1)};
  }
  return c;
}

void RaceDetector::release(int thread, Clock& sync) {
  const std::uint32_t* mine = vc(thread);
  for (int u = 0; u < threads_; ++u) sync[u] = std::max(sync[u], mine[u]);
  ++vc(thread)[thread];
  ++events_[thread];
}

void RaceDetector::acquire(int thread, const Clock& sync) {
  std::uint32_t* mine = vc(thread);
  for (int u = 0; u < threads_; ++u) mine[u] = std::max(mine[u], sync[u]);
  ++events_[thread];
}

void RaceDetector::join(const std::vector<int>& threads) {
  if (threads.size() < 2) return;
  // The join's identity: one warp's lane mask (threads of several warps never skip).
  std::uint64_t key = static_cast<std::uint64_t>(threads[0] / 32 + 1) << 32;
  for (int t : threads) key = t / 32 == threads[0] / 32 && key ? key | (1ull << (t % 32)) : 0;
  bool repeat = key != 0;
  for (int t : threads) repeat = repeat && joined_key_[t] == key && joined_at_[t] == events_[t];
  if (repeat) return;
  Clock all = empty_clock();
  for (int t : threads) release(t, all);
  for (int t : threads) acquire(t, all);
  for (int t : threads) joined_key_[t] = key, joined_at_[t] = events_[t];
}

}  // namespace mgpu::emu
