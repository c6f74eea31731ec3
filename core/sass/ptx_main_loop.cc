#include "core/sass/ptx_main_loop.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace mgpu::core {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool label_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// "NAME:" at the start of a line (PTX labels), or "".
std::string_view label_of(std::string_view line) {
  std::size_t n = 0;
  while (n < line.size() && label_char(line[n])) ++n;
  return n > 0 && n < line.size() && line[n] == ':' ? line.substr(0, n) : std::string_view{};
}

struct Branch {
  std::string_view target;  // "" when the line is no branch
  bool guarded = false;     // "@p bra": the next line may run too
};

// A "[@p] bra[.uni] TARGET;" line.
Branch branch_of(std::string_view line) {
  Branch b;
  if (!line.empty() && line.front() == '@') {
    std::size_t sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos) return {};
    line = trimmed(line.substr(sp));
    b.guarded = true;
  }
  std::size_t sp = line.find_first_of(" \t");
  if (sp == std::string_view::npos || (line.substr(0, sp) != "bra" && line.substr(0, sp) != "bra.uni")) return {};
  std::string_view target = trimmed(line.substr(sp));
  std::size_t n = 0;
  while (n < target.size() && label_char(target[n])) ++n;
  b.target = target.substr(0, n);
  return b;
}

bool ends_flow(std::string_view line) {  // no fall-through past an unguarded ret or exit
  return line.substr(0, 4) == "ret;" || line.substr(0, 5) == "exit;";
}

}  // namespace

// Natural loops of the control-flow graph, not spans of the listing: LLVM lays a loop's exit
// path out before its header at times, and a branch back in the text is then no loop.
PtxMainLoop ptx_main_loop(std::string_view ptx) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at <= ptx.size();) {
    std::size_t end = ptx.find('\n', at);
    if (end == std::string_view::npos) end = ptx.size();
    lines.push_back(trimmed(ptx.substr(at, end - at)));
    at = end + 1;
  }
  // Scopes: each `{ }` block is one; a label is visible in its block and the blocks inside it
  // (inline asm's wait loops each define their own LAB_WAIT and DONE).
  std::vector<int> parent{-1};         // scope -> enclosing scope
  std::vector<int> scope_of(lines.size());
  struct Label {
    std::string_view name;
    std::size_t line;
    int scope;
  };
  std::vector<Label> labels;
  {
    std::vector<int> open{0};
    for (std::size_t i = 0; i < lines.size(); ++i) {
      scope_of[i] = open.back();
      if (std::string_view name = label_of(lines[i]); !name.empty()) labels.push_back({name, i, open.back()});
      for (char c : lines[i]) {
        if (c == '{') {
          parent.push_back(open.back());
          open.push_back(static_cast<int>(parent.size()) - 1);
        } else if (c == '}' && open.size() > 1) {
          open.pop_back();
        }
      }
    }
  }
  auto resolve = [&](std::string_view name, int scope) -> long {
    for (; scope >= 0; scope = parent[scope])
      for (const Label& l : labels)
        if (l.scope == scope && l.name == name) return static_cast<long>(l.line);
    return -1;
  };
  // Basic blocks: a label starts one, a branch or ret/exit ends one.
  std::vector<std::size_t> block_of(lines.size());
  std::vector<std::size_t> first;  // block -> its first line
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const bool starts = i == 0 || !label_of(lines[i]).empty() || !branch_of(lines[i - 1]).target.empty() ||
                        ends_flow(lines[i - 1]);
    if (starts) first.push_back(i);
    block_of[i] = first.size() - 1;
  }
  const std::size_t n = first.size();
  std::vector<std::vector<std::size_t>> succ(n), pred(n);
  std::vector<int> mma(n, 0), sync(n, 0);
  for (std::size_t b = 0; b < n; ++b) {
    const std::size_t last = (b + 1 < n ? first[b + 1] : lines.size()) - 1;
    for (std::size_t i = first[b]; i <= last; ++i) {
      mma[b] += lines[i].find("wgmma.mma_async") != std::string_view::npos;
      sync[b] += lines[i].find("wgmma.fence") != std::string_view::npos ||
                 lines[i].find("wgmma.wait_group") != std::string_view::npos;
    }
    const Branch br = branch_of(lines[last]);
    if (!br.target.empty()) {
      if (long t = resolve(br.target, scope_of[last]); t >= 0) succ[b].push_back(block_of[t]);
    }
    if ((br.target.empty() || br.guarded) && !ends_flow(lines[last]) && b + 1 < n) succ[b].push_back(b + 1);
    for (std::size_t s : succ[b]) pred[s].push_back(b);
  }
  // Dominators (iterative, on bit vectors of blocks; kernels have a few hundred blocks).
  std::vector<std::vector<bool>> dom(n, std::vector<bool>(n, true));
  dom[0].assign(n, false);
  dom[0][0] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t b = 1; b < n; ++b) {
      std::vector<bool> d(n, !pred[b].empty());
      for (std::size_t p : pred[b])
        for (std::size_t x = 0; x < n; ++x) d[x] = d[x] && dom[p][x];
      d[b] = true;
      if (d != dom[b]) {
        dom[b] = std::move(d);
        changed = true;
      }
    }
  }
  // Each back edge u -> h (h dominates u) closes a natural loop: h and every block that reaches
  // u without passing h. The smallest loop holding a wgmma is the main loop.
  PtxMainLoop best;
  std::size_t best_size = 0;
  for (std::size_t u = 0; u < n; ++u)
    for (std::size_t h : succ[u]) {
      if (!dom[u][h]) continue;
      std::vector<bool> in(n, false);
      in[h] = true;
      std::vector<std::size_t> work;
      if (!in[u]) in[u] = true, work.push_back(u);
      while (!work.empty()) {
        std::size_t b = work.back();
        work.pop_back();
        for (std::size_t p : pred[b])
          if (!in[p]) in[p] = true, work.push_back(p);
      }
      PtxMainLoop loop{true, 0, 0};
      std::size_t size = 0;
      for (std::size_t b = 0; b < n; ++b)
        if (in[b]) loop.warpgroup_sync += sync[b], loop.mma += mma[b], ++size;
      if (loop.mma > 0 && (!best.found || size < best_size)) best = loop, best_size = size;
    }
  return best;
}

}  // namespace mgpu::core
