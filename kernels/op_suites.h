// The named problem suites of the ops in the registry (`mgpu-tune <op> --shapes NAME`): the
// problems a model or a paper's benchmark runs, each a row of problem-flag values by flag name
// ("seq-q" -> "4096"; a switch present as "true"), read by the op's template like the command
// line's. Kept outside the templates' folders: a suite shapes no kernel, so adding one leaves
// the template's source hash (and its stored rows) as they are.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mgpu::kernels {

struct OpSuite {
  std::string name;
  std::string description;
  std::vector<std::map<std::string, std::string>> rows;
};

// The attention suites: "fa3" (FlashAttention-2/3's forward benchmark: 16k tokens per batch,
// hidden size 2048, head dims 64/128/256, seq 512..16k, causal and not) and prefill suites of
// models' attention layers.
std::vector<OpSuite> attention_suites();

}  // namespace mgpu::kernels
