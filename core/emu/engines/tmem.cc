#include "core/emu/engines/tmem.h"

#include "core/emu/exec/state.h"

namespace mgpu::emu {

std::string TensorMemory::check_columns(std::uint64_t n) {
  // PTX ISA 9.7.16 "tcgen05.alloc": "nCols must be a power of 2 ... in the range [32, 512]".
  if (n < 32 || n > kColumns || (n & (n - 1)))
    return "column count " + std::to_string(n) + " is not a power of two in [32, 512]";
  return "";
}

TensorMemory& tmem_of(Cta& cta) {
  if (!cta.tmem) cta.tmem = std::make_shared<TensorMemory>();
  return *cta.tmem;
}

namespace {

std::string cta_text(const Cta& c) {
  return "CTA (" + std::to_string(c.id[0]) + "," + std::to_string(c.id[1]) + "," + std::to_string(c.id[2]) + ")";
}

// The CTAs of `cta`'s cluster that still need their SM's permit to allocate: those that have
// neither relinquished it nor exited (one that relinquished may not allocate again).
template <typename F>
void for_needing(Cta& cta, F f) {
  for (auto& c : cta.cluster->ctas)
    if (!c->tmem_permit_relinquished && !c->exited) f(*c);
}

}  // namespace

bool permit_available(Cta& cta) {
  if (tmem_of(cta).permit().holder == &cta) return true;
  bool ok = true;
  for_needing(cta, [&](Cta& c) {
    const Cta* h = tmem_of(c).permit().holder;
    ok &= h == nullptr || h == &c;
  });
  return ok;
}

void take_permits(Cta& cta, int warp, int line) {
  for_needing(cta, [&](Cta& c) {
    TensorMemory& t = tmem_of(c);
    if (!t.permit().holder) t.give_permit(TensorMemory::Permit{&c, &cta, warp, line});
  });
}

std::string permit_blocker(Cta& cta) {
  if (tmem_of(cta).permit().holder == &cta) return "";
  std::string s;
  for_needing(cta, [&](Cta& c) {
    const TensorMemory::Permit& p = tmem_of(c).permit();
    if (!s.empty() || p.holder == nullptr || p.holder == &c) return;
    s = "the tensor memory allocation permit of " +
        (&c == &cta ? std::string("its SM") : "the SM of CTA rank " + std::to_string(c.rank) + " of its cluster") + ", held by " +
        cta_text(*p.holder) +
        (p.by == p.holder ? " (it took the permit at its tcgen05.alloc at PTX line " + std::to_string(p.line) + ")"
                          : " (its cluster took the permit at the tcgen05.alloc of " + cta_text(*p.by) + " warp " +
                                std::to_string(p.warp) + ", PTX line " + std::to_string(p.line) + ")") +
        ", which has not executed tcgen05.relinquish_alloc_permit (a CTA holds the permit until it relinquishes it or exits)";
  });
  return s;
}

int TensorMemory::first_fit(std::uint32_t ncols, const TensorMemory* other) const {
  for (std::uint32_t start = 0; start + ncols <= kColumns; start += 32) {
    bool free = true;
    for (std::uint32_t c = start; c < start + ncols && free; ++c)
      free = owner_[c].cta == nullptr && (!other || other->owner_[c].cta == nullptr);
    if (free) return static_cast<int>(start);
  }
  return -1;
}

void TensorMemory::take(std::uint32_t start, std::uint32_t ncols, const Cta* cta, int warp, int line) {
  for (std::uint32_t c = start; c < start + ncols; ++c) owner_[c] = Owner{cta, warp, line};
  // A fresh allocation holds whatever the columns held: NaN until written.
  for (std::uint32_t l = 0; l < kLanes; ++l)
    for (std::uint32_t c = start; c < start + ncols; ++c) cell(l, c) = 0xFFFFFFFFu;
}

int TensorMemory::allocate(std::uint32_t ncols, const Cta* cta, int warp, int line) {
  int start = first_fit(ncols, nullptr);
  if (start >= 0) take(static_cast<std::uint32_t>(start), ncols, cta, warp, line);
  return start;
}

bool TensorMemory::held_by(std::uint32_t col, std::uint32_t ncols, const Cta* cta) const {
  if (col + ncols > kColumns) return false;
  for (std::uint32_t c = col; c < col + ncols; ++c)
    if (owner_[c].cta != cta) return false;
  return true;
}

std::string TensorMemory::deallocate(std::uint32_t col, std::uint32_t ncols, const Cta* cta) {
  if (!held_by(col, ncols, cta))
    return "columns [" + std::to_string(col) + ", " + std::to_string(col + ncols) + ") are not all allocated by this CTA";
  for (std::uint32_t c = col; c < col + ncols; ++c) owner_[c] = Owner{};
  return "";
}

void TensorMemory::release_all(const Cta* cta) {
  for (auto& o : owner_)
    if (o.cta == cta) o = Owner{};
}

namespace {

// Runs of equal owners, as text.
template <typename Pred, typename Name>
std::string runs(const std::vector<Pred>& owner, Name name) {
  std::string s;
  std::uint32_t c = 0;
  while (c < owner.size()) {
    std::uint32_t e = c + 1;
    while (e < owner.size() && owner[e].cta == owner[c].cta && owner[e].warp == owner[c].warp && owner[e].line == owner[c].line) ++e;
    std::string n = name(owner[c]);
    if (!n.empty()) s += (s.empty() ? "" : "; ") + std::string("columns [") + std::to_string(c) + ", " + std::to_string(e) + ") " + n;
    c = e;
  }
  return s;
}

}  // namespace

std::string TensorMemory::held_text(const Cta* cta) const {
  return runs(owner_, [&](const Owner& o) -> std::string {
    if (o.cta != cta) return "";
    return "(allocated by warp " + std::to_string(o.warp) + " at PTX line " + std::to_string(o.line) + ")";
  });
}

std::string TensorMemory::describe() const {
  std::string s = runs(owner_, [&](const Owner& o) -> std::string {
    if (!o.cta) return "";
    return "held by CTA (" + std::to_string(o.cta->id[0]) + "," + std::to_string(o.cta->id[1]) + "," + std::to_string(o.cta->id[2]) +
           ") warp " + std::to_string(o.warp) + " (tcgen05.alloc at PTX line " + std::to_string(o.line) + ")";
  });
  return s.empty() ? "no columns held" : s;
}

}  // namespace mgpu::emu
