#include "core/emu/check/memory_model.h"

#include <algorithm>

namespace mgpu::emu {

namespace {

constexpr std::uint64_t kPageMask = (1ull << 12) - 1;
constexpr std::size_t kImportedCache = 8;

Scope narrower(Scope a, Scope b) { return static_cast<int>(a) < static_cast<int>(b) ? a : b; }
bool at_least(Scope s, Scope level) { return static_cast<int>(s) >= static_cast<int>(level); }

}  // namespace

MemoryModel::Page* MemoryModel::page(std::uint64_t number, bool create) {
  if (number == last_number_) return last_page_;
  auto it = pages_.find(number);
  if (it == pages_.end()) {
    if (!create) return nullptr;
    it = pages_.emplace(number, Page{}).first;
  }
  last_number_ = number;
  last_page_ = &it->second;
  return last_page_;
}

// PTX ISA 8.7: both strong (the async proxy never is), the same location (complete overlap),
// and each of a scope that includes the other's thread.
bool MemoryModel::morally_strong(const Thread& t, std::uint16_t order, const Epoch& e) const {
  if (!order_bits::strong(order) || !order_bits::strong(e.order)) return false;
  if ((order | e.order) & order_bits::kAsync) return false;
  if (!order_bits::same_location(order, e.order)) return false;
  const Scope level = common(t.rd->serial(), t.slot / stride_, e.serial_plus1 - 1, e.slot / stride_);
  return at_least(order_bits::scope(order), level) && at_least(order_bits::scope(e.order), level);
}

MemoryModel::Conflict MemoryModel::access(const Thread& t, const Access& a) {
  Conflict c;
  RaceDetector& rd = *t.rd;
  const std::uint32_t serial = rd.serial();
  rd.note_event(t.slot);
  const std::uint32_t now = rd.now(t.slot);
  if (a.write && a.insn != insn_) insn_ = a.insn, insn_writes_.clear();
  const bool async = a.order & order_bits::kAsync;
  std::uint64_t current = ~0ull;
  Page* p = nullptr;
  const Epoch mine{now, serial + 1, a.pc, static_cast<std::uint16_t>(t.slot), 0};
  // Whether the earlier access `e` of byte `b` (index i of this access) conflicts, and how.
  auto judge = [&](const Epoch& e, bool earlier_write, std::uint16_t o, std::uint64_t b, std::uint32_t i) {
    if (!e.serial_plus1 || c.found()) return;
    if (e.serial_plus1 - 1 == serial && e.slot == t.slot) return;  // program order
    if (earlier_write && a.write && a.insn && i < 64 && ((a.unchanged >> i) & 1)) {
      for (const Span& s : insn_writes_)
        if (s.serial == e.serial_plus1 - 1 && s.slot == e.slot && b >= s.lo && b < s.hi) return;  // same value, same instruction
    }
    if (morally_strong(t, o, e)) return;
    Conflict::Kind kind = Conflict::None;
    if (!rd.knows(t.slot, e.serial_plus1 - 1, e.slot, e.clock)) kind = Conflict::Race;
    else if (earlier_write && async && !(e.order & order_bits::kAsync) && !rd.fenced_knows(t.slot, e.serial_plus1 - 1, e.slot, e.clock))
      kind = Conflict::ProxyFence;
    if (kind == Conflict::None) return;
    c.kind = kind;
    c.earlier_was_write = earlier_write;
    c.serial = e.serial_plus1 - 1;
    c.slot = e.slot;
    c.pc = e.pc;
    c.order = e.order;
    c.addr = b;
  };
  // Whole 16-byte granules of the async proxy (TMA rows are 16-byte aligned multiples of 16
  // bytes) keep one shadow entry per granule while their page sees nothing else; any other
  // access makes the page byte-grained (Page::fine).
  const bool granular = async && a.addr % kGranule == 0 && a.bytes % kGranule == 0;
  for (std::uint32_t i = 0; i < a.bytes; ++i) {
    const std::uint64_t b = a.addr + i;
    if ((b >> kPageBits) != current) {
      current = b >> kPageBits;
      p = page(current, !a.existing_pages_only);
      if (p && !granular) make_fine(*p);
      if (p) {
        const std::size_t n = p->fine ? kPageMask + 1 : (kPageMask + 1) / kGranule;
        if (a.write && !p->write) p->write = std::make_unique<Epoch[]>(n);
        if (a.read && !a.write && !p->read) p->read = std::make_unique<Epoch[]>(n);
      }
    }
    if (!p) {
      i += static_cast<std::uint32_t>(kPageMask - (b & kPageMask));  // the rest of this page
      continue;
    }
    const std::size_t off = p->fine ? (b & kPageMask) : (b & kPageMask) / kGranule;
    const std::uint16_t o = order_bits::at(a.order, i);
    if (p->write) judge(p->write[off], true, o, b, i);
    if (a.write && p->read) judge(p->read[off], false, o, b, i);
    Epoch e = mine;
    e.order = o;
    if (a.write) p->write[off] = e;
    else p->read[off] = e;
    if (!p->fine) i += kGranule - 1;  // the rest of the granule
  }
  if (a.write && a.insn) insn_writes_.push_back({serial, t.slot, a.addr, a.addr + a.bytes});
  return c;
}

void MemoryModel::make_fine(Page& p) {
  if (p.fine) return;
  p.fine = true;
  for (std::unique_ptr<Epoch[]>* a : {&p.write, &p.read}) {
    if (!*a) continue;
    auto bytes = std::make_unique<Epoch[]>(kPageMask + 1);
    for (std::size_t i = 0; i <= kPageMask; ++i) bytes[i] = (*a)[i / kGranule];
    *a = std::move(bytes);
  }
}

bool MemoryModel::shadowed(std::uint64_t addr, std::uint64_t bytes) const {
  if (pages_.empty() || !bytes) return false;
  for (std::uint64_t n = addr >> kPageBits; n <= (addr + bytes - 1) >> kPageBits; ++n)
    if (pages_.count(n)) return true;
  return false;
}

bool MemoryModel::compatible(const Contribution& c, const Thread& t, Scope scope) const {
  const Scope level = common(c.serial, c.rank, t.rd->serial(), t.slot / stride_);
  return at_least(c.scope, level) && at_least(scope, level);
}

MemoryModel::ThreadState& MemoryModel::state(const Thread& t) {
  return threads_[static_cast<std::uint64_t>(t.rd->serial()) << 32 | static_cast<std::uint32_t>(t.slot)];
}

void MemoryModel::import(const Thread& t, const Shared& c) {
  ThreadState& st = state(t);
  if (std::find(st.imported.begin(), st.imported.end(), c) != st.imported.end()) return;  // knowledge only grows
  t.rd->import(t.slot, c->k);
  if (st.imported.size() == kImportedCache) st.imported.erase(st.imported.begin());
  st.imported.push_back(c);
}

MemoryModel::Shared MemoryModel::contribution(const Thread& t, Scope scope, RaceDetector::Knowledge k) const {
  auto c = std::make_shared<Contribution>();
  c->k = std::move(k);
  c->serial = t.rd->serial();
  c->rank = t.slot / stride_;
  c->scope = scope;
  return c;
}

void MemoryModel::invalidate(std::uint64_t key, std::uint32_t bytes) {
  if (vars_.empty()) return;
  auto it = vars_.lower_bound(key >= 64 ? key - 64 : 0);
  while (it != vars_.end() && it->first < key + bytes) {
    if (it->first + it->second.bytes > key) it = vars_.erase(it);
    else ++it;
  }
}

void MemoryModel::strong_access(const Thread& t, std::uint64_t key, std::uint32_t bytes, const MemOrder& o, bool reads, bool writes,
                                bool rmw) {
  RaceDetector& rd = *t.rd;
  if (reads) {
    // 8.8: an acquire operation on M takes what the release sequence M's value heads made
    // visible, at once; a strong read that is no acquire leaves it for a later acquire fence.
    auto it = vars_.find(key);
    if (it != vars_.end() && it->second.bytes == bytes)
      for (const Shared& c : it->second.from) {
        if (!compatible(*c, t, o.scope)) continue;
        if (o.acquire) {
          import(t, c);
          continue;
        }
        auto& pending = state(t).pending;
        bool have = false;
        for (auto& p : pending)
          if (p.c == c && p.key == key) have = true, p.scope = at_least(p.scope, o.scope) ? p.scope : o.scope;
        if (!have) pending.push_back({c, o.scope, key});
      }
    // "a strong read on M followed by an acquire operation on M": what the earlier reads of this
    // location observed is acquired now too.
    if (o.acquire) {
      auto ts = threads_.find(static_cast<std::uint64_t>(rd.serial()) << 32 | static_cast<std::uint32_t>(t.slot));
      if (ts != threads_.end()) {
        std::vector<Shared> now;
        auto& pending = ts->second.pending;
        for (auto p = pending.begin(); p != pending.end();) {
          if (p->key == key && compatible(*p->c, t, narrower(p->scope, o.scope))) now.push_back(p->c), p = pending.erase(p);
          else ++p;
        }
        for (const Shared& c : now) import(t, c);
      }
    }
  }
  if (!writes) return;
  // Another write to an overlapping location ends the release sequences there (observation
  // order passes through atomic read-modify-writes of M only, 8.9.2).
  if (!vars_.empty()) {
    auto it = vars_.lower_bound(key >= 64 ? key - 64 : 0);
    while (it != vars_.end() && it->first < key + bytes) {
      if (it->first != key && it->first + it->second.bytes > key) it = vars_.erase(it);
      else ++it;
    }
  }
  Shared add;
  if (o.release) {
    add = contribution(t, o.scope, rd.knowledge(t.slot));
    rd.tick(t.slot);
  } else {
    auto ts = threads_.find(static_cast<std::uint64_t>(rd.serial()) << 32 | static_cast<std::uint32_t>(t.slot));
    if (ts != threads_.end() && ts->second.frontier) {
      const Shared& f = ts->second.frontier;
      add = f->scope == narrower(f->scope, o.scope) ? f : contribution(t, narrower(f->scope, o.scope), f->k);
    }
  }
  auto it = vars_.find(key);
  if (!rmw || it == vars_.end() || it->second.bytes != bytes) {
    if (!add) {
      if (it != vars_.end()) vars_.erase(it);
      return;
    }
    SyncVar& v = vars_[key];
    v.bytes = bytes;
    v.from.assign(1, add);
    return;
  }
  if (!add) return;
  // One contribution per releasing CTA and scope: a counter many CTAs increment stays small.
  for (Shared& c : it->second.from)
    if (c->serial == add->serial && c->rank == add->rank && c->scope == add->scope) {
      auto merged = std::make_shared<Contribution>(*c);
      merged->k.merge(add->k);
      c = std::move(merged);
      return;
    }
  it->second.from.push_back(add);
}

void MemoryModel::fence(const Thread& t, Scope scope, bool acquire, bool release, bool sc) {
  RaceDetector& rd = *t.rd;
  if (acquire || sc) {
    // 8.8: "a strong read on M followed by an acquire memory fence".
    auto ts = threads_.find(static_cast<std::uint64_t>(rd.serial()) << 32 | static_cast<std::uint32_t>(t.slot));
    if (ts != threads_.end()) {
      auto& pending = ts->second.pending;
      std::vector<Shared> now;
      for (auto p = pending.begin(); p != pending.end();) {
        if (compatible(*p->c, t, narrower(p->scope, scope))) now.push_back(p->c), p = pending.erase(p);
        else ++p;
      }
      for (const Shared& c : now) import(t, c);
    }
  }
  if (sc) {
    // 8.9.3/8.9.4: morally strong fence.sc operations synchronize in Fence-SC order (the order
    // they run here). Each scope instance the fence's scope covers holds what its fences knew.
    const std::uint32_t serial = rd.serial();
    const std::uint64_t rank = static_cast<std::uint64_t>(t.slot / stride_);
    std::uint64_t keys[3];
    int n = 0;
    keys[n++] = (1ull << 60) | (static_cast<std::uint64_t>(serial) << 8) | rank;  // .cta
    if (at_least(scope, Scope::Cluster)) keys[n++] = (2ull << 60) | serial;        // .cluster
    if (at_least(scope, Scope::Gpu)) keys[n++] = 3ull << 60;                        // .gpu/.sys: everyone here
    for (int i = 0; i < n; ++i) {
      auto it = sc_.find(keys[i]);
      if (it != sc_.end()) rd.import(t.slot, it->second);
    }
    const RaceDetector::Knowledge k = rd.knowledge(t.slot);
    for (int i = 0; i < n; ++i) sc_[keys[i]].merge(k);
    rd.tick(t.slot);
  }
  if (release || sc) {
    // 8.8: "a release or acquire-release memory fence followed by a strong write on M": what the
    // thread knows now is what its later strong writes release.
    state(t).frontier = contribution(t, scope, rd.knowledge(t.slot));
    rd.tick(t.slot);
  }
}

}  // namespace mgpu::emu
