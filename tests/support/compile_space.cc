#include "tests/support/compile_space.h"

#include <set>

#include "core/compiler.h"

namespace mgpu::testing {

CompiledSpace compile_unique(const std::vector<std::pair<std::string, std::string>>& configs,
                             const core::ArchSpec& arch) {
  CompiledSpace out;
  std::vector<core::CompileJob> jobs;
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const auto& [json, text] : configs) {
    out.text_of[json] = text;
    if (!seen.insert(text).second) continue;
    jobs.push_back({text, &arch});
    keys.push_back(text);
  }
  auto outcomes = core::compile_all(jobs, core::CompileOptions{}, 0);
  for (size_t i = 0; i < keys.size(); ++i) out.by_text[keys[i]] = std::move(outcomes[i]);
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
