#include "tests/support/compile_space.h"

#include <set>

#include "core/compiler.h"

namespace mgpu::testing {

CompiledSpace compile_unique(const std::vector<std::pair<std::string, const std::string*>>& configs,
                             const core::ArchSpec& arch) {
  CompiledSpace out;
  for (const auto& [json, text] : configs) out.by_text.try_emplace(*text);
  std::vector<core::CompileJob> jobs;
  for (const auto& [text, outcome] : out.by_text) jobs.push_back({text, &arch});
  auto outcomes = core::compile_all(jobs, core::CompileOptions{}, 0);
  size_t i = 0;
  for (auto& [text, outcome] : out.by_text) outcome = std::move(outcomes[i++]);
  for (const auto& [json, text] : configs) out.text_of[json] = &out.by_text.find(*text)->first;
  return out;
}

std::string folded(const std::string& ptx) {
  std::string f;
  for (char c : ptx) {
    bool blank = c == ' ' || c == '\t';
    if (blank && !f.empty() && f.back() == ' ') continue;
    f += blank ? ' ' : c;
  }
  return f;
}

}  // namespace mgpu::testing
