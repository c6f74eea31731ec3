// Compiling a template's configs for the whole-space tests: each distinct module text once
// (configs that differ only in run-time parameters share one binary), on every core. Module
// texts are held once each, never per config: a part of the space is tens of thousands of
// configs over a thousand or so kernels (a copy per config took 24 GB for the split_k part).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/arch.h"
#include "core/compile_pool.h"

namespace mgpu::testing {

struct CompiledSpace {
  std::map<std::string, core::CompileOutcome> by_text;  // module text -> outcome
  std::map<std::string, const std::string*> text_of;    // config JSON -> a key of by_text
  const core::CompileOutcome& of(const std::string& config_json) const { return by_text.at(*text_of.at(config_json)); }
};

// configs: (config JSON, module text) pairs; the texts need only live through the call.
CompiledSpace compile_unique(const std::vector<std::pair<std::string, const std::string*>>& configs,
                             const core::ArchSpec& arch);

// PTX with runs of blanks folded to one space, for substring checks.
std::string folded(const std::string& ptx);

}  // namespace mgpu::testing
