#include "core/emu/check/memory_model.h"

#include <algorithm>

namespace mgpu::emu {

namespace {

constexpr std::uint64_t kPageMask = (1ull << 12) - 1;
constexpr std::size_t kImportedCache = 8;

Scope narrower(Scope a, Scope b) { return static_cast<int>(a) < static_cast<int>(b) ? a : b; }
bool at_least(Scope s, Scope level) { return static_cast<int>(s) >= static_cast<int>(level); }

}  // namespace

MemoryModel::Conflict MemoryModel::conflict_with(Conflict::Kind kind, bool earlier_was_write, const Epoch& e,
                                                 std::uint64_t addr) {
  Conflict c;
  c.kind = kind;
  c.earlier_was_write = earlier_was_write;
  c.serial = e.serial_plus1 - 1;
  c.slot = e.slot;
  c.pc = e.pc;
  c.order = e.order & static_cast<std::uint16_t>(~kSide);
  c.addr = addr;
  return c;
}

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

MemoryModel::Side& MemoryModel::make_side(std::uint64_t byte, const Epoch& current, std::uint64_t insn) {
  Side& s = side_[byte];
  Record r;
  r.e = current;
  r.e.order &= static_cast<std::uint16_t>(~kSide);
  r.insn = insn;
  s.writes.assign(1, std::move(r));
  return s;
}

MemoryModel::Conflict MemoryModel::access(const Thread& t, const Access& a) {
  Conflict c;
  RaceDetector& rd = *t.rd;
  const std::uint32_t serial = rd.serial();
  rd.note_event(t.slot);
  const std::uint32_t now = rd.now(t.slot);
  if (a.insn != insn_) insn_ = a.insn, insn_writes_.clear();
  const bool async = a.order & order_bits::kAsync;
  const std::uint32_t elem = a.elem ? a.elem : a.bytes;
  std::uint64_t current = ~0ull;
  Page* p = nullptr;
  const Epoch mine{now, serial + 1, a.pc, static_cast<std::uint16_t>(t.slot), 0};
  auto own = [&](const Epoch& e) { return e.serial_plus1 - 1 == serial && e.slot == t.slot; };
  // Whether `e`, the last write of byte b, is another lane's write of this warp-instruction.
  auto this_insn = [&](const Epoch& e, std::uint64_t b) {
    if (!a.insn || own(e)) return false;
    for (const Span& s : insn_writes_)
      if (s.serial == e.serial_plus1 - 1 && s.slot == e.slot && b >= s.lo && b < s.hi) return true;
    return false;
  };
  // The address and size of the element byte i belongs to (8.2.4: a vector access is one per
  // element).
  auto element = [&](std::uint16_t o, std::uint64_t b, std::uint32_t i) {
    return order_bits::strong(o) ? b - order_bits::index(o) : a.addr + i / elem * elem;
  };
  auto element_size = [&](std::uint16_t o) { return order_bits::strong(o) ? order_bits::size(o) : elem; };
  // Whether the earlier access `e` of byte `b` (index i of this access) conflicts, and how. `r`:
  // e's record, for an earlier write the byte keeps more of (Side).
  auto judge = [&](const Epoch& e, bool earlier_write, std::uint16_t o, std::uint64_t b, std::uint32_t i, const Record* r) {
    if (!e.serial_plus1 || c.found()) return;
    if (own(e)) return;  // program order
    if (earlier_write && a.write && a.insn && i < 64 && ((a.unchanged >> i) & 1) && (r ? r->insn == a.insn : this_insn(e, b)))
      return;  // same value, same instruction
    if (morally_strong(t, o, e)) return;
    bool ordered = rd.knows(t.slot, e.serial_plus1 - 1, e.slot, e.clock);
    // 8.9.5: "X precedes Z in observation order, and Z precedes Y in proxy-preserved base
    // causality order" (Y and Z to the same address, through the generic proxy): a strong read
    // that observed the write orders what follows it at that address after the write. "The same
    // address" is taken as the same location (address and size): a mixed-size access after the
    // read is still compared with the write by causality alone.
    if (!ordered && r && !async) {
      const std::uint64_t at = element(o, b, i);
      const std::uint32_t size = element_size(o);
      for (const Observer& z : r->seen)
        if (z.addr == at && z.size == size && rd.knows(t.slot, z.serial_plus1 - 1, z.slot, z.clock)) {
          ordered = true;
          break;
        }
    }
    Conflict::Kind kind = Conflict::None;
    if (!ordered) kind = Conflict::Race;
    else if (earlier_write && async && !(e.order & order_bits::kAsync) && !rd.fenced_knows(t.slot, e.serial_plus1 - 1, e.slot, e.clock))
      kind = Conflict::ProxyFence;
    if (kind == Conflict::None) return;
    c = conflict_with(kind, earlier_write, e, b);
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
    Epoch* last = p->write ? &p->write[off] : nullptr;  // the byte's last write
    Side* side = last && (last->order & kSide) ? &side_.find(b)->second : nullptr;
    if (last) {
      if (side)
        for (const Record& r : side->writes) judge(r.e, true, o, b, i, &r);
      else
        judge(*last, true, o, b, i, nullptr);
    }
    if (a.write && p->read) judge(p->read[off], false, o, b, i, nullptr);
    Epoch e = mine;
    e.order = o;
    if (!a.write) {
      p->read[off] = e;
    }
    // The read part of a strong ld or an atom that is morally strong with the byte's last write
    // reads its value: that write and, through atomics (atom or red) that each read the one
    // before them, the writes before it precede this read in observation order (8.9.2); an
    // atomic's write is linked to the write it read, so the chain goes on through it. Another
    // lane's write of this instruction is passed over: the lanes' order is unspecified, and this
    // lane may read before it (then it reads what the write before it read).
    bool linked = false;
    if ((a.read || a.atomic) && last && last->serial_plus1 && !async && morally_strong(t, o, *last)) {
      linked = a.atomic;
      if (a.read && !own(*last)) {
        if (!side) {
          side = &make_side(b, *last, this_insn(*last, b) ? a.insn : 0);
          last->order |= kSide;
        }
        const Observer z{serial + 1, now, static_cast<std::uint16_t>(t.slot), static_cast<std::uint16_t>(element_size(o)),
                         element(o, b, i)};
        for (std::size_t k = side->writes.size(); k-- > 0;) {
          Record& r = side->writes[k];
          const bool sibling = a.insn && r.insn == a.insn && !own(r.e);
          if (!sibling && !own(r.e)) {
            bool have = false;
            for (const Observer& x : r.seen)
              have = have || (x.serial_plus1 == z.serial_plus1 && x.slot == z.slot && x.addr == z.addr && x.size == z.size);
            if (!have) r.seen.push_back(z);
          }
          if (!r.linked) break;
        }
      }
    }
    if (a.write) {
      // Which earlier writes of the byte must be remembered beside this one: all of them after a
      // strong write (a read observing it orders only what follows at its address after it, not
      // the writes before it, 8.9.5); after a weak or async one, those not ordered before it
      // (what is ordered after it is after them; what is not races with it).
      const bool strong = order_bits::strong(o) && !async;
      if (!side && p->fine && last->serial_plus1 && (strong || !rd.knows(t.slot, last->serial_plus1 - 1, last->slot, last->clock)))
        side = &make_side(b, *last, this_insn(*last, b) ? a.insn : 0);
      if (side) {
        std::vector<Record>& w = side->writes;
        if (!strong)
          for (std::size_t k = w.size(); k-- > 0;)
            if (rd.knows(t.slot, w[k].e.serial_plus1 - 1, w[k].e.slot, w[k].e.clock)) {
              if (k + 1 < w.size()) w[k + 1].linked = w[k + 1].linked && w[k].linked;  // the chain through it ends with it
              w.erase(w.begin() + static_cast<std::ptrdiff_t>(k));
            }
        Record r;
        r.e = e;
        r.linked = linked && !w.empty();
        r.insn = a.insn;
        w.push_back(std::move(r));
        if (w.size() > kHistory) w.erase(w.begin());
        if (w.size() == 1 && w[0].seen.empty()) {
          side_.erase(b);
          side = nullptr;
        }
      }
      *last = e;
      if (side) last->order |= kSide;
    }
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

MemoryModel::Conflict MemoryModel::written(std::uint64_t addr, std::uint32_t bytes) const {
  Conflict c;
  for (std::uint32_t i = 0; i < bytes; ++i) {
    const std::uint64_t b = addr + i;
    auto it = pages_.find(b >> kPageBits);
    if (it == pages_.end() || !it->second.write) {
      i += static_cast<std::uint32_t>(kPageMask - (b & kPageMask));  // the rest of this page
      continue;
    }
    const Page& p = it->second;
    const Epoch& e = p.write[p.fine ? (b & kPageMask) : (b & kPageMask) / kGranule];
    if (!e.serial_plus1) continue;
    return conflict_with(Conflict::NonCoherent, true, e, b);
  }
  return c;
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

// One link per releasing CTA and scope keeps a counter many CTAs increment small; but a link
// this warp-instruction's write made stays apart from the earlier ones (its lanes must not read
// it), and the earlier ones merge.
void MemoryModel::link(SyncVar& v, const Shared& add, std::uint64_t insn) {
  auto same = [&](const Link& l) { return l.c->serial == add->serial && l.c->rank == add->rank && l.c->scope == add->scope; };
  auto merge = [](Link& into, const Shared& c) {
    auto merged = std::make_shared<Contribution>(*into.c);
    merged->k.merge(c->k);
    into.c = std::move(merged);
  };
  std::ptrdiff_t old = -1;  // the earlier instructions' link of this CTA and scope
  for (std::size_t i = 0; i < v.from.size();) {
    if (!same(v.from[i]) || (insn && v.from[i].insn == insn)) {
      ++i;
    } else if (old < 0) {
      old = static_cast<std::ptrdiff_t>(i++);
    } else {
      Link& into = v.from[static_cast<std::size_t>(old)];
      merge(into, v.from[i].c);
      into.insn = 0;
      v.from.erase(v.from.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  for (Link& l : v.from)
    if (same(l) && (!insn || l.insn == insn)) {
      merge(l, add);
      return;
    }
  v.from.push_back({add, insn});
}

void MemoryModel::strong_access(const Thread& t, std::uint64_t key, std::uint32_t bytes, const MemOrder& o, bool reads, bool writes,
                                bool rmw, std::uint64_t insn) {
  RaceDetector& rd = *t.rd;
  if (reads) {
    // 8.8: an acquire operation on M takes what the release sequence M's value heads made
    // visible, at once; a strong read that is no acquire leaves it for a later acquire fence.
    // Not what another lane of this warp-instruction released: the lanes are threads whose
    // same-location accesses run in no specified order (8.9.1; the warp is not a scope, 8.5), so
    // in some execution this lane reads before that lane writes.
    auto it = vars_.find(key);
    if (it != vars_.end() && it->second.bytes == bytes)
      for (const Link& l : it->second.from) {
        if (insn && l.insn == insn) continue;
        const Shared& c = l.c;
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
  // The release patterns this write ends (8.8): a release operation (what the thread knows now);
  // or, for any other strong write, "a release or acquire-release memory fence followed by a
  // strong write on M" (what it knew at its last release fence) and "a release or
  // acquire-release operation on M followed by a strong write on M" (what it knew at its last
  // release operation on M) -- each at the narrower of its first operation's and this write's
  // scope.
  Shared add[2];
  int n = 0;
  if (o.release) {
    add[n++] = contribution(t, o.scope, rd.knowledge(t.slot));
    rd.tick(t.slot);
    auto& released = state(t).released;
    bool have = false;
    for (Released& r : released)
      if (r.key == key) have = true, r.bytes = bytes, r.c = add[0];
    if (!have) released.push_back({key, bytes, add[0]});
  } else {
    auto ts = threads_.find(static_cast<std::uint64_t>(rd.serial()) << 32 | static_cast<std::uint32_t>(t.slot));
    if (ts != threads_.end()) {
      auto narrowed = [&](const Shared& f) {
        return f->scope == narrower(f->scope, o.scope) ? f : contribution(t, narrower(f->scope, o.scope), f->k);
      };
      if (ts->second.frontier) add[n++] = narrowed(ts->second.frontier);
      for (const Released& r : ts->second.released)
        if (r.key == key && r.bytes == bytes) add[n++] = narrowed(r.c);
    }
  }
  auto it = vars_.find(key);
  if (!rmw || it == vars_.end() || it->second.bytes != bytes) {
    if (!n) {
      if (it != vars_.end()) vars_.erase(it);
      return;
    }
    SyncVar& v = vars_[key];
    v.bytes = bytes;
    v.from.clear();
    for (int i = 0; i < n; ++i) link(v, add[i], insn);
    return;
  }
  for (int i = 0; i < n; ++i) link(it->second, add[i], insn);
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
