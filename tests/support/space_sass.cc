#include "tests/support/space_sass.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <functional>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "core/compiler.h"
#include "core/error.h"
#include "core/mlir_to_ptx.h"
#include "core/ptxas.h"
#include "core/sass/nvdisasm.h"

namespace mgpu::testing {
namespace {

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body) {
  const unsigned count = threads > 0 ? unsigned(threads) : std::max(1u, std::thread::hardware_concurrency());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<std::size_t>(count, n); ++t)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next++) < n;) body(i);
    });
  for (std::thread& t : pool) t.join();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// A lowered kernel split where its entry begins: what comes before (the PTX header and the
// module's declarations) and the function.
struct Lowered {
  std::string name, ptx, preamble, function;
  bool batchable = false;  // one .entry, found where expected
};

Lowered split_entry(std::string name, std::string ptx) {
  Lowered l{std::move(name), std::move(ptx), "", "", false};
  const std::size_t entries = [&] {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = l.ptx.find(".entry ", at)) != std::string::npos; ++at) ++n;
    return n;
  }();
  const std::size_t entry = l.ptx.find(".visible .entry " + l.name + "(");
  if (entries != 1 || entry == std::string::npos || (entry > 0 && l.ptx[entry - 1] != '\n')) return l;
  // The preamble without comments: LLVM's "// .globl NAME" names the function, nothing else.
  for (const std::string& line : lines_of(l.ptx.substr(0, entry)))
    if (line.find("//") == std::string::npos) l.preamble += line + '\n';
  l.function = l.ptx.substr(entry);
  l.batchable = true;
  return l;
}

bool same_resources(const core::KernelResources& a, const core::KernelResources& b) {
  return a.registers == b.registers && a.shared_static_bytes == b.shared_static_bytes && a.stack_bytes == b.stack_bytes &&
         a.spill_store_bytes == b.spill_store_bytes && a.spill_load_bytes == b.spill_load_bytes && a.barriers == b.barriers;
}

// Whether an assembler log says anything beyond the resource report: then each kernel's log
// must be its own (a batch's would hand one kernel's advisory to all).
bool clean_log(const std::string& log) {
  if (!core::assembler_advisories(log).empty()) return false;
  std::string lower = log;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("warning") == std::string::npos && lower.find("error") == std::string::npos;
}

// The production path for one kernel: compile_module (lowering and ptxas) and nvdisasm; the
// listing too, where asked.
KernelProof prove_alone(const std::string& mlir_text, const core::ArchSpec& arch, std::string* listing = nullptr) {
  KernelProof p;
  p.alone = true;
  try {
    core::CompileResult r = core::compile_module(mlir_text, arch, core::CompileOptions{});
    if (r.units.size() != 1 || r.units[0].kernels.size() != 1)
      throw core::Error(core::ErrorKind::Compile, "a module of the space holds one kernel");
    const core::CompiledUnit& u = r.units[0];
    if (r.assembler != core::Assembler::Ptxas)
      throw core::Error(core::ErrorKind::Compile, fmt::format("assembled by {}, not ptxas", core::to_string(r.assembler)));
    p.ptx = u.ptx;
    p.resources = u.cubin.kernels.at(u.kernels[0]);
    p.log = u.cubin.log;
    std::string sass = core::disassemble(u.cubin.image);
    p.profile = core::profile_sass(sass, u.kernels[0]);
    if (listing) *listing = std::move(sass);
  } catch (const std::exception& e) {
    p.error = e.what();
  }
  return p;
}

// One function's section of a listing, as listed.
std::string function_listing(const std::string& listing, const std::string& function) {
  const std::string head = "//--------------------- .text." + function;
  std::size_t at = listing.find(head + " ");
  if (at == std::string::npos) at = listing.find(head + "\n");
  if (at == std::string::npos) return "";
  const std::size_t end = listing.find("//--------------------- ", at + head.size());
  return listing.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

std::string rename_entry(const std::string& ptx, const std::string& name, const std::string& to) {
  std::string out;
  out.reserve(ptx.size() + 64);
  const std::string param = name + "_param_";
  for (std::size_t i = 0; i < ptx.size();) {
    if (is_identifier_char(ptx[i]) && (i == 0 || !is_identifier_char(ptx[i - 1]))) {
      std::size_t j = i;
      while (j < ptx.size() && is_identifier_char(ptx[j])) ++j;
      const std::string_view word(ptx.data() + i, j - i);
      if (word == name) out += to;
      else if (word.substr(0, param.size()) == param) out += to + "_param_" + std::string(word.substr(param.size()));
      else out += word;
      i = j;
    } else {
      out += ptx[i++];
    }
  }
  return out;
}

std::string neutral_listing(const std::string& listing, const std::string& function) {
  const std::string part = rename_entry(function_listing(listing, function), function, "F");
  // Numbered names ptxas and nvdisasm make up per module: labels (.L_x_N) and the internal
  // subroutines a kernel calls ($__internal_N_$__cuda_sm20_div_u64, stream-K's 64-bit division),
  // renumbered in order of appearance.
  std::map<std::string, int> label_number, internal_number;
  std::string out;
  auto numbered = [&](std::size_t i, const char* prefix, std::map<std::string, int>& numbers) -> std::size_t {
    const std::size_t n = std::strlen(prefix);
    if (part.compare(i, n, prefix) != 0) return 0;
    std::size_t j = i + n;
    while (j < part.size() && std::isdigit(static_cast<unsigned char>(part[j]))) ++j;
    if (j == i + n) return 0;
    auto [it, fresh] = numbers.try_emplace(part.substr(i, j - i), int(numbers.size()));
    out += prefix + std::to_string(it->second);
    return j;
  };
  for (std::size_t i = 0; i < part.size();) {
    if (std::size_t j = numbered(i, ".L_x_", label_number)) {
      i = j;
    } else if (std::size_t k = numbered(i, "$__internal_", internal_number)) {
      i = k;
    } else if (part[i] == ' ' || part[i] == '\t') {
      // Blanks folded: nvdisasm pads a section's banner to a width that depends on its name.
      if (out.empty() || out.back() != ' ') out += ' ';
      ++i;
    } else {
      out += part[i++];
    }
  }
  return out;
}

std::map<std::string, KernelProof> prove_kernels(const std::vector<const std::string*>& mlir_texts,
                                                 const core::ArchSpec& arch, int batch, int threads) {
  std::vector<const std::string*> texts;
  {
    std::map<std::string_view, bool> seen;
    for (const std::string* t : mlir_texts)
      if (seen.emplace(*t, true).second) texts.push_back(t);
  }
  std::vector<KernelProof> proofs(texts.size());
  std::vector<Lowered> lowered(texts.size());
  parallel_for(texts.size(), threads, [&](std::size_t i) {
    try {
      core::LoweredPtx l = core::lower_mlir_to_ptx(*texts[i], arch);
      if (l.modules.size() != 1 || l.modules[0].kernels.size() != 1)
        throw core::Error(core::ErrorKind::Compile, "a module of the space holds one kernel");
      lowered[i] = split_entry(l.modules[0].kernels[0], std::move(l.modules[0].ptx));
    } catch (const std::exception& e) {
      proofs[i].error = e.what();
    }
  });

  // Batches: kernels with the same preamble (header and declarations), `batch` at most; a
  // kernel whose PTX does not split as expected is proved alone.
  std::vector<std::vector<std::size_t>> batches;
  {
    std::map<std::string, std::vector<std::size_t>> open;  // preamble -> the batch being filled
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (!proofs[i].error.empty()) continue;
      if (!lowered[i].batchable) {
        batches.push_back({i});
        continue;
      }
      std::vector<std::size_t>& b = open[lowered[i].preamble];
      b.push_back(i);
      if (static_cast<int>(b.size()) == batch) batches.push_back(std::exchange(b, {}));
    }
    for (auto& [preamble, b] : open)
      if (!b.empty()) batches.push_back(std::move(b));
  }

  parallel_for(batches.size(), threads, [&](std::size_t bi) {
    const std::vector<std::size_t>& b = batches[bi];
    auto each_alone = [&] {
      for (std::size_t i : b) proofs[i] = prove_alone(*texts[i], arch);
    };
    if (b.size() == 1) return each_alone();
    std::string joined = lowered[b[0]].preamble;
    std::vector<std::string> names;
    for (std::size_t j = 0; j < b.size(); ++j) {
      names.push_back(fmt::format("mgpu_batch_{}", j));
      joined += '\n' + rename_entry(lowered[b[j]].function, lowered[b[j]].name, names.back());
    }
    core::Cubin cubin;
    std::string listing;
    try {
      cubin = core::assemble_with_ptxas(joined, arch, 3);
      listing = core::disassemble(cubin.image);
    } catch (const std::exception&) {
      return each_alone();  // a kernel that does not assemble: each says its own error
    }
    if (!clean_log(cubin.log)) return each_alone();
    for (std::size_t j = 0; j < b.size(); ++j) {
      KernelProof& p = proofs[b[j]];
      p.ptx = lowered[b[j]].ptx;
      auto r = cubin.kernels.find(names[j]);
      if (r == cubin.kernels.end()) {
        p.error = fmt::format("ptxas reported no resources of {} in its batch", lowered[b[j]].name);
        continue;
      }
      p.resources = r->second;
      p.profile = core::profile_sass(function_listing(listing, names[j]), names[j]);
      p.profile.function = lowered[b[j]].name;
    }
    // The check that a batch assembles each kernel as the compiler does: its first kernel alone.
    std::string alone_listing;
    KernelProof alone = prove_alone(*texts[b[0]], arch, &alone_listing);
    std::string why;
    if (!alone.error.empty()) why = "alone it failed: " + alone.error;
    else if (alone.ptx != lowered[b[0]].ptx) why = "its PTX differs from the lowering's";
    else if (!same_resources(alone.resources, proofs[b[0]].resources)) why = "its registers, stack or spills differ";
    else if (neutral_listing(alone_listing, lowered[b[0]].name) != neutral_listing(listing, names[0]))
      why = "its machine code differs";
    if (!why.empty()) {
      for (std::size_t i : b)
        proofs[i].error = fmt::format("assembled in a batch of {} kernels, the batch's first kernel is not the one the "
                                      "compiler builds alone ({}): the batched proof does not hold", b.size(), why);
      return;
    }
    proofs[b[0]] = std::move(alone);
  });

  std::map<std::string, KernelProof> out;
  for (std::size_t i = 0; i < texts.size(); ++i) out.emplace(*texts[i], std::move(proofs[i]));
  return out;
}

}  // namespace mgpu::testing
