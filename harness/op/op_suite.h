// A suite of an op's problems to tune in turn (`mgpu-tune <op> --shapes FILE|NAME`): a named
// suite of the op (kernels/op_suites.h), or a file whose rows give problem flags by name, read
// by the op's template as the command line's are. Contract: load_op_suite() returns the problems
// in file order, duplicates (same key) dropped; what a row leaves out takes the value the
// command line gave explicitly (`given`), else the flag's default (a flag given that every row
// gives fills nothing: Error{InvalidInput}, it would be dropped unsaid); a row the template refuses
// throws Error{InvalidInput} naming the file and the row ("s.csv line 3: --heads: ...").
//   CSV:  a header line naming the columns (the op's problem flags, '-' or '_' alike: batch,
//         heads, kv_heads, seq_q, ...; and name and note, for people), then one problem per line
//         (LF or CRLF); lines starting with '#' (comments, counted and said: a name cell "#1" first
//         in its row would read as one) and blank lines skipped; a UTF-8 byte
//         order mark skipped; no quoting. An empty cell leaves its column out. A switch column
//         (causal) holds true/false or 1/0.
//   JSON: [{"heads": 32, "seq_q": 4096, "causal": true, ...}, ...] or {"name": "...", "problems": [...]}.
// An unknown column or key, one named twice (seq_q and seq-q are one), a row with more or fewer cells than the header, or
// an empty suite is Error{InvalidInput}.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernels/op_registry.h"

namespace mgpu::harness {

struct OpProblemSuite {
  std::string name;
  std::vector<kernels::Problem> problems;
  std::vector<std::string> where;  // per problem: "s.csv line 3", "s.json problem #2", "suite fa3 row 4"
  int duplicates_dropped = 0;
  std::vector<std::string> comments;  // a CSV's lines skipped as comments ("s.csv line 2"), said with the summary
};

// " (2 lines beginning with '#' skipped as comments: the first s.csv line 2)", or "" when none.
std::string comments_note(const OpProblemSuite& suite);

OpProblemSuite load_op_suite(const kernels::OpEntry& op, const kernels::OpTemplate& t, const std::string& file_or_name,
                             const std::map<std::string, std::string>& given);

}  // namespace mgpu::harness
