// export --format pack: a kernel pack, a self-contained C library folder a program links to
// call the tuned kernels without mgpu-tune, MLIR, Python or SQLite (issue 34).
// Contract: export_pack() takes verified_best()'s matmul rows (one per problem and arch: a
// measured row before a predicted one, then the fastest), rebuilds each config at its problem
// with this binary's template, and refuses (Error{InvalidInput}, nothing written) a row whose
// recorded kernel_hash is not the PTX this binary builds (the pack would ship a kernel other
// than the one measured and verified). It adds, per arch, the template's default config for
// each dtype/layout combination it accepts and no row tunes (what mgpu_matmul() falls back to),
// except with require_verified_rows (then every entry is a verified row, and an untuned kind has
// no kernel).
// The folder holds: include/mgpu_pack.h (the ABI), src/ (the runtime, the generated tables, one
// .c per kernel with its PTX and cubin), CMakeLists.txt (library mgpu_pack, target
// mgpu_pack::mgpu_pack, install with a CMake package and mgpu_pack.pc), example/ (a program that
// runs every entry through the ABI against a CPU reference), manifest.json. It is written
// beside DIR and renamed into place: DIR is replaced whole when it is a pack (it holds a pack's
// manifest.json) or empty, refused when it holds anything else, when it holds the database or
// the current folder, or lies under a file (a symbolic link is followed to the folder it names);
// a failure or a stop leaves DIR as it was.
// Rows of other ops are left out and counted (`left_out`). Returns the entries written.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "results/store.h"

namespace mgpu::harness {

struct PackSummary {
  int entries = 0;   // tuned entries
  int defaults = 0;  // default entries
  int kernels = 0;   // distinct binaries
  std::vector<std::string> archs;
  int left_out = 0;  // rows of ops a pack does not hold yet
};

// Whether `dir` is a pack folder: its manifest.json says it is one (what export_pack writes).
bool is_pack_folder(const std::filesystem::path& dir);

PackSummary export_pack(results::Store& store, const std::string& dir, bool include_model,
                        const std::vector<results::TemplateId>& current, bool require_verified_rows,
                        const std::string& cache_dir);

}  // namespace mgpu::harness
