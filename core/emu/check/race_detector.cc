#include "core/emu/check/race_detector.h"

#include <algorithm>

#include "core/emu/check/memory_order.h"

namespace mgpu::emu {

namespace {

// a >= b everywhere.
bool dominates(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  for (std::size_t i = 0; i < b.size(); ++i)
    if (a[i] < b[i]) return false;
  return true;
}

void fold(std::uint32_t* into, const std::uint32_t* from, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) into[i] = std::max(into[i], from[i]);
}

// into = max(into, from), an empty `into` taking `from` whole.
void fold_into(std::vector<std::uint32_t>& into, const std::vector<std::uint32_t>& from) {
  if (from.empty()) return;
  if (into.empty()) into = from;
  else fold(into.data(), from.data(), from.size());
}

}  // namespace

const std::vector<std::uint32_t>* RaceDetector::Knowledge::find(const Parts& ps, std::uint32_t serial) {
  for (const auto& [s, p] : ps)
    if (s == serial) return p.get();
  return nullptr;
}

void RaceDetector::Knowledge::merge(Parts& into, std::uint32_t serial, const Part& p) {
  auto it = std::lower_bound(into.begin(), into.end(), serial, [](const auto& e, std::uint32_t s) { return e.first < s; });
  if (it == into.end() || it->first != serial) {
    into.insert(it, {serial, p});
    return;
  }
  if (it->second == p || dominates(*it->second, *p)) return;
  if (dominates(*p, *it->second)) {
    it->second = p;
    return;
  }
  auto m = std::make_shared<std::vector<std::uint32_t>>(*it->second);
  fold(m->data(), p->data(), m->size());
  it->second = std::move(m);
}

void RaceDetector::Knowledge::merge(const Knowledge& k) {
  for (const auto& [s, p] : k.parts) merge(parts, s, p);
  for (const auto& [s, p] : k.fenced) merge(fenced, s, p);
}

RaceDetector::RaceDetector(int ctas, int cta_stride, std::size_t smem_bytes, std::uint32_t serial)
    : cta_stride_(cta_stride), cta_threads_(ctas * cta_stride), threads_(cta_threads_ + ctas * (kAgents + kGlobalAgents)),
      serial_(serial), agents_(ctas * kAgents), global_agents_(ctas * kGlobalAgents),
      vc_(static_cast<std::size_t>(threads_) * threads_, 0), remote_(threads_), fenced_(threads_), events_(threads_, 0),
      joined_at_(threads_, 0), joined_key_(threads_, 0), write_(smem_bytes * static_cast<std::size_t>(ctas)),
      read_(smem_bytes * static_cast<std::size_t>(ctas)) {
  for (int t = 0; t < threads_; ++t) vc(t)[t] = 1;
}

RaceDetector::Clock RaceDetector::snapshot(int thread) const {
  return Clock{std::vector<std::uint32_t>(vc(thread), vc(thread) + threads_), remote_[thread], fenced_[thread]};
}

int RaceDetector::begin_agent_slot(int a, const Clock& issue) {
  std::uint32_t* mine = vc(a);
  const std::uint32_t own = std::max(mine[a], issue.v[static_cast<std::size_t>(a)]);
  std::copy(issue.v.begin(), issue.v.end(), mine);
  mine[a] = own;
  remote_[a] = issue.remote;
  fenced_[a] = issue.fenced;
  ++events_[a];
  return a;
}

int RaceDetector::begin_agent(const Clock& issue) {
  const int a = cta_threads_ + next_agent_;
  next_agent_ = (next_agent_ + 1) % agents_;
  return begin_agent_slot(a, issue);
}

int RaceDetector::begin_global_agent(const Clock& issue) {
  const int a = cta_threads_ + agents_ + next_global_agent_;
  next_global_agent_ = (next_global_agent_ + 1) % global_agents_;
  return begin_agent_slot(a, issue);
}

bool RaceDetector::ordered_before(const Epoch& e, int thread) const {
  if (e.thread_plus1 == 0) return true;
  int u = e.thread_plus1 - 1;
  return u == thread || e.clock <= vc(thread)[u];
}

// PTX ISA 8.7 "Morally strong operations": each strong, each of a scope that includes the other
// thread (both are in this cluster: a .cta scope needs the same CTA), the same proxy (agents are
// never strong), and complete overlap (the same location: same first byte and size).
bool RaceDetector::morally_strong(std::uint16_t order, int thread, const Epoch& e, std::uint32_t i) const {
  (void)i;
  if (!order_bits::strong(order) || !order_bits::strong(e.order)) return false;
  if (!order_bits::same_location(order, e.order)) return false;
  const int u = e.thread_plus1 - 1;
  if (is_agent(u) || is_agent(thread)) return false;
  const bool same_cta = u / cta_stride_ == thread / cta_stride_;
  return same_cta || (order_bits::scope(order) != Scope::Cta && order_bits::scope(e.order) != Scope::Cta);
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
    const std::uint16_t order = x.order ? order_bits::at(x.order, i) : 0;
    // Two async writes (TMA loads) of the same bytes are the overlap checker's: it reports them
    // while both are in flight; one that has landed cannot land again (engines/async_engine.cc).
    const bool both_async = is_agent(x.thread) && w.thread_plus1 && is_agent(w.thread_plus1 - 1);
    if (!c.found && !ordered_before(w, x.thread) && !same_value_same_instruction(x, w, i) && !both_async &&
        !morally_strong(order, x.thread, w, i))
      c = {true, true, w.thread_plus1 - 1, w.pc};
    if (!c.found && !ordered_before(r, x.thread) && !morally_strong(order, x.thread, r, i)) c = {true, false, r.thread_plus1 - 1, r.pc};
    w = {now, x.pc, static_cast<std::uint16_t>(x.thread + 1), order};
  }
  if (x.insn) insn_writes_.push_back({x.thread, x.offset, x.offset + x.bytes});
  return c;
}

RaceDetector::Conflict RaceDetector::on_read(int thread, std::uint32_t offset, std::uint32_t bytes, int pc, std::uint16_t order) {
  Conflict c;
  ++events_[thread];
  const std::uint32_t now = vc(thread)[thread];
  for (std::uint32_t i = 0; i < bytes; ++i) {
    const Epoch& w = write_[offset + i];
    const std::uint16_t o = order ? order_bits::at(order, i) : 0;
    if (!c.found && !ordered_before(w, thread) && !morally_strong(o, thread, w, i)) c = {true, true, w.thread_plus1 - 1, w.pc};
    read_[offset + i] = {now, pc, static_cast<std::uint16_t>(thread + 1), o};
  }
  return c;
}

void RaceDetector::release(int thread, Clock& sync) {
  fold(sync.v.data(), vc(thread), static_cast<std::size_t>(threads_));
  if (!remote_[thread].empty()) sync.remote.merge(remote_[thread]);
  fold_into(sync.fenced, fenced_[thread]);
  ++vc(thread)[thread];
  ++events_[thread];
}

void RaceDetector::acquire(int thread, const Clock& sync) {
  fold(vc(thread), sync.v.data(), static_cast<std::size_t>(threads_));
  if (!sync.remote.empty()) remote_[thread].merge(sync.remote);
  fold_into(fenced_[thread], sync.fenced);
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

bool RaceDetector::knows(int thread, std::uint32_t serial, int slot, std::uint32_t clock) const {
  if (serial == serial_) return slot == thread || clock <= vc(thread)[slot];
  const std::vector<std::uint32_t>* p = Knowledge::find(remote_[thread].parts, serial);
  return p && clock <= (*p)[static_cast<std::size_t>(slot)];
}

bool RaceDetector::fenced_knows(int thread, std::uint32_t serial, int slot, std::uint32_t clock) const {
  if (serial == serial_) return !fenced_[thread].empty() && clock <= fenced_[thread][static_cast<std::size_t>(slot)];
  const std::vector<std::uint32_t>* p = Knowledge::find(remote_[thread].fenced, serial);
  return p && clock <= (*p)[static_cast<std::size_t>(slot)];
}

RaceDetector::Knowledge RaceDetector::knowledge(int thread) const {
  Knowledge k = remote_[thread];
  Knowledge::merge(k.parts, serial_, std::make_shared<const std::vector<std::uint32_t>>(vc(thread), vc(thread) + threads_));
  if (!fenced_[thread].empty()) Knowledge::merge(k.fenced, serial_, std::make_shared<const std::vector<std::uint32_t>>(fenced_[thread]));
  return k;
}

void RaceDetector::import(int thread, const Knowledge& k) {
  for (const auto& [s, p] : k.parts) {
    if (s == serial_) fold(vc(thread), p->data(), static_cast<std::size_t>(threads_));
    else Knowledge::merge(remote_[thread].parts, s, p);
  }
  for (const auto& [s, p] : k.fenced) {
    if (s == serial_) fold_into(fenced_[thread], *p);
    else Knowledge::merge(remote_[thread].fenced, s, p);
  }
  ++events_[thread];
}

void RaceDetector::tick(int thread) {
  ++vc(thread)[thread];
  ++events_[thread];
}

// Everything the thread knows is fenced from now on: this cluster's part and the others'.
void RaceDetector::proxy_fence(int thread) {
  fold_into(fenced_[thread], std::vector<std::uint32_t>(vc(thread), vc(thread) + threads_));
  Knowledge& r = remote_[thread];
  for (const auto& [s, p] : r.parts) Knowledge::merge(r.fenced, s, p);
  tick(thread);  // what the thread does after the fence is not fenced by it
}

}  // namespace mgpu::emu
