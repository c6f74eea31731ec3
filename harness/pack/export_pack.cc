#include "harness/pack/export_pack.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/c_literal.h"
#include "core/error.h"
#include "harness/measure/trial_record.h"
#include "harness/pack/pack_sources.h"
#include "harness/stop_signals.h"
#include "harness/version.h"
#include "kernels/matmul_pack/pack_export.h"
#include "results/output_file.h"
#include "results/stored_config.h"
#include "results/verified_best.h"

namespace mgpu::harness {
namespace {

namespace fs = std::filesystem;

using kernels::PackKernel;

// One entry's description (mgpu_pack_entry_info), as the pack's tables hold it.
struct Info {
  std::string tmpl, arch, problem_key, config_json, verification, source, source_hash, kernel_hash;
  double median_ms = 0;
};

// The folder the pack will be: `dir` made absolute and normal ("DIR/", "DIR/." and "DIR//" are
// DIR: round 17, F1), a symbolic link followed to the folder it names (the link stays, its
// target is replaced: F3). Refused, before anything is built: a file; a folder holding anything
// but an earlier pack; a path under a file; the current folder or one above it; a folder that
// holds the results database (replacing the folder would delete it: F2).
fs::path check_output(const std::string& dir, results::Store& store) {
  if (dir.empty()) throw core::Error(core::ErrorKind::InvalidInput, "the output path is empty");
  results::refuse_database_path(dir, {store.path()});
  std::error_code ec;
  fs::path target = fs::absolute(dir).lexically_normal();
  if (target.has_parent_path() && target.filename().empty()) target = target.parent_path();
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    const fs::path to = fs::weakly_canonical(target, ec);
    if (ec || !fs::exists(to, ec))
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{} is a symbolic link to nowhere: give the pack's folder itself", dir));
    target = to;
  }
  for (fs::path up = target.parent_path(); !up.empty() && up != up.parent_path(); up = up.parent_path())
    if (fs::exists(up, ec)) {
      if (!fs::is_directory(up, ec))
        throw core::Error(core::ErrorKind::InvalidInput,
                          fmt::format("cannot write {}: {} is a file, not a folder, so nothing can be under it", dir,
                                      up.string()));
      break;
    }
  const fs::path here = fs::weakly_canonical(fs::current_path(ec), ec);
  const fs::path real = fs::weakly_canonical(target, ec);
  auto inside = [](const fs::path& child, const fs::path& folder) {
    const auto [end, rest] = std::mismatch(folder.begin(), folder.end(), child.begin(), child.end());
    return end == folder.end();
  };
  if (inside(here, real))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is the current folder or holds it: a pack replaces its folder whole; give "
                                  "another folder", dir));
  const fs::path db = fs::weakly_canonical(fs::absolute(store.path()), ec);
  if (inside(db, real))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("the database {} is inside {}, which a pack replaces whole (it would be deleted): "
                                  "write the pack to another folder", store.path(), dir));
  const fs::file_status st = fs::status(target, ec);
  if (!fs::exists(st)) return target;
  if (!fs::is_directory(st))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is a file, but --format pack writes a folder (a C library): give a folder path", dir));
  if (!fs::is_empty(target, ec) && !is_pack_folder(target))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} holds files and is no kernel pack (no pack's manifest.json): a pack replaces "
                                  "only an earlier pack or an empty folder; give a new folder",
                                  dir));
  // An earlier pack is replaced whole: what a pack never holds at its top (a build folder, the
  // user's notes) would go with it unsaid (battery round 18, F25), so it is named and refused.
  std::vector<std::string> foreign;
  for (fs::directory_iterator it(target, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name != "include" && name != "src" && name != "example" && name != "cmake" && name != "CMakeLists.txt" &&
        name != "mgpu_pack.pc.in" && name != "manifest.json")
      foreign.push_back(name);
  }
  std::sort(foreign.begin(), foreign.end());
  std::string names;
  for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) names += (i ? ", " : "") + foreign[i];
  if (foreign.size() > 5) names += ", ...";
  if (!foreign.empty())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is an earlier pack that also holds what no pack writes ({}): a pack replaces "
                                  "its folder whole, so move {} out first (build a pack in a folder beside it)",
                                  dir, names, foreign.size() == 1 ? "it" : "them"));
  return target;
}

// Bytes as the body of a C array: decimal, 32 per line (any C compiler, any pedantic level: a
// string literal past 4095 characters is not portable C).
std::string c_bytes(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size() * 4 + bytes.size() / 8);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out += std::to_string(static_cast<unsigned char>(bytes[i]));
    out += i + 1 == bytes.size() ? "\n" : (i % 32 == 31 ? ",\n" : ",");
  }
  return out;
}

std::string kernel_source(const PackKernel& k, std::size_t index) {
  // The PTX is NUL-terminated: cuModuleLoadData reads it as a C string.
  std::string ptx = k.ptx;
  ptx.push_back('\0');
  return fmt::format(
      "/* Generated by mgpu-tune export --format pack: kernel {0}, {1} for {2} (kernel hash {3}). */\n"
      "const unsigned char mgpu_pk_k{0}_ptx[{4}] = {{\n{5}}};\n"
      "const unsigned char mgpu_pk_k{0}_cubin[{6}] = {{\n{7}}};\n",
      index, k.name, k.arch, k.kernel_hash, ptx.size(), c_bytes(ptx), k.cubin.size(), c_bytes(k.cubin));
}

std::string tables_source(const std::vector<PackKernel>& kernels, const std::vector<Info>& infos,
                          const std::string& tool) {
  using core::c_string_literal;
  std::string out =
      "/* Generated by mgpu-tune export --format pack: the pack's kernels and what each entry is. */\n"
      "#include \"pack_internal.h\"\n\n";
  for (std::size_t i = 0; i < kernels.size(); ++i)
    out += fmt::format("extern const unsigned char mgpu_pk_k{0}_ptx[{1}];\nextern const unsigned char mgpu_pk_k{0}_cubin[{2}];\n",
                       i, kernels[i].ptx.size() + 1, kernels[i].cubin.size());
  out += fmt::format("\nstatic const mgpu_pk_kernel kernels[{}] = {{\n", std::max<std::size_t>(kernels.size(), 1));
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const PackKernel& k = kernels[i];
    std::string maps;
    for (const kernels::PackMap& m : k.maps)
      maps += fmt::format("{}{{{}, {}, {}, {}u, {}u, {}}}", maps.empty() ? "" : ", ", m.element, m.rows_of, m.cols_of,
                          m.box_rows, m.box_cols, m.swizzle_bytes);
    out += fmt::format("  {{{}, {}, {}, {}, mgpu_pk_k{}_ptx, sizeof mgpu_pk_k{}_ptx, mgpu_pk_k{}_cubin, sizeof mgpu_pk_k{}_cubin, "
                       "{}, {}, {}, {}, {}, {{{}}}}},\n",
                       c_string_literal(k.name), c_string_literal(k.arch), k.cc_major, k.cc_minor, i, i, i, i,
                       k.block_threads, k.cluster_size, k.dynamic_smem_bytes, k.takes_workspace ? 1 : 0, k.maps.size(), maps);
  }
  if (kernels.empty()) out += "  {0}\n";
  out += fmt::format("}};\n\nstatic const mgpu_pack_entry_info infos[{}] = {{\n", std::max<std::size_t>(infos.size(), 1));
  for (const Info& e : infos)
    out += fmt::format("  {{\"matmul\", {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}},\n", c_string_literal(e.tmpl),
                       c_string_literal(e.arch), c_string_literal(e.problem_key), c_string_literal(e.config_json),
                       c_string_literal(e.verification), c_string_literal(e.source), c_string_literal(tool),
                       c_string_literal(e.source_hash), c_string_literal(e.kernel_hash), e.median_ms);
  if (infos.empty()) out += "  {0}\n";
  out += fmt::format("}};\n\nstatic const mgpu_pk_common_tables tables = {{kernels, {}, infos, {}}};\n"
                     "const mgpu_pk_common_tables* mgpu_pk_common(void) {{ return &tables; }}\n",
                     kernels.size(), infos.size());
  return out;
}

// A row measured on hardware before a predicted one, then the faster.
bool preferred(const results::LabelledRow& a, const results::LabelledRow& b) {
  if ((a.row.source == "cuda") != (b.row.source == "cuda")) return a.row.source == "cuda";
  return a.row.median_ms.value_or(1e300) < b.row.median_ms.value_or(1e300);
}

void write_text(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  // Said with its reason (a full disk was "cannot write X" alone: round 17, F13).
  if (!out || ec)
    throw core::Error(core::ErrorKind::IO, fmt::format("cannot write {} ({})", path.string(),
                                                       ec ? ec.message() : std::strerror(errno ? errno : EIO)));
}

// The folder written beside `dir`, removed unless it was renamed into place.
struct StagingFolder {
  fs::path path;
  bool moved = false;
  ~StagingFolder() {
    std::error_code ec;
    if (!moved) fs::remove_all(path, ec);
  }
};

}  // namespace

// What a pack folder is known by: its manifest's "format". Only such a folder, or an empty one,
// is replaced.
constexpr const char* kManifestFormat = "mgpu-tune kernel pack";

bool is_pack_folder(const std::filesystem::path& dir) {
  // Only a regular file of a manifest's size is read: a FIFO would block the open forever
  // (battery round 18, F18), a device would never end.
  std::error_code ec;
  const fs::path manifest = dir / "manifest.json";
  if (!fs::is_regular_file(manifest, ec) || fs::file_size(manifest, ec) > (std::uintmax_t(64) << 20)) return false;
  std::ifstream in(manifest);
  if (!in) return false;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    return j.is_object() && j.value("format", "") == kManifestFormat;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}


PackSummary export_pack(results::Store& store, const std::string& dir, bool include_model,
                        const std::vector<results::TemplateId>& current, bool require_verified_rows,
                        const std::string& cache_dir) {
  const fs::path target = check_output(dir, store);
  results::VerifiedBest best = results::verified_best(store, include_model, current);
  if (require_verified_rows) results::require_verified(best);
  PackSummary summary;

  // One row per (arch, problem) of each matmul template this binary builds.
  std::map<std::pair<std::string, std::string>, const results::LabelledRow*> chosen;
  for (const results::LabelledRow& lr : best.rows) {
    const results::TrialRow& r = lr.row;
    const core::ArchSpec* arch = nullptr;
    try {
      if (r.problem.kernel == "matmul") arch = &core::parse_arch(r.env.arch);
    } catch (const core::Error&) {
    }
    if (!arch || kernels::matmul_template(*arch).name() != r.tmpl.name) {
      ++summary.left_out;  // another op, or an imported landscape of a kernel this binary does not build
      continue;
    }
    auto [it, fresh] = chosen.emplace(std::make_pair(std::string(arch->name), r.problem.key), &lr);
    if (!fresh && preferred(lr, *it->second)) it->second = &lr;
  }
  if (chosen.empty())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} holds no {}matmul result of a template this mgpu-tune builds: a pack would "
                                  "hold no tuned kernel{}",
                                  store.path(), include_model ? "" : "measured, verified ",
                                  include_model ? "" : " (predictions need --include-model)"));

  core::CompileOptions options;
  options.cache_dir = cache_dir;
  std::vector<PackKernel> packed;
  std::map<std::string, int> kernel_of_hash;
  std::vector<Info> infos;
  std::vector<kernels::MatmulPackEntry> entries;
  std::set<std::string> archs;
  std::set<std::tuple<std::string, int, int, int>> tuned_kinds;  // arch, dtypes, layout
  std::size_t done = 0;
  auto add = [&](const kernels::MatmulTemplate& t, const kernels::MatmulProblem& p, const core::TuningConfig& c,
                 Info info, const std::string& recorded_hash, bool is_default) {
    // A stop between kernels ends the export with nothing written (each build takes seconds).
    exit_if_stopped("the pack export stopped before it wrote anything (the database was only read)");
    std::fprintf(stderr, "pack: building %s %s at %s (%zu)\n", std::string(t.name()).c_str(), c.to_json().c_str(),
                 p.key().c_str(), ++done);
    PackKernel k;
    try {
      k = kernels::matmul_pack_kernel(t, p, c, options);
    } catch (const core::Error&) {
      // A stop reaches ptxas too: said as the stop it is, not as the tool's failure (round 17, F4).
      exit_if_stopped("the pack export stopped before it wrote anything (the database was only read)");
      throw;
    }
    if (!recorded_hash.empty() && recorded_hash != k.kernel_hash)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{}: the {} kernel of {} at {} was recorded as {}, but this mgpu-tune builds {}: "
                                    "the pack would ship a kernel other than the one measured and verified (re-tune "
                                    "with this mgpu-tune)",
                                    store.path(), t.name(), c.to_json(), p.key(), recorded_hash, k.kernel_hash));
    auto [it, fresh] = kernel_of_hash.emplace(k.kernel_hash, int(packed.size()));
    if (fresh) packed.push_back(std::move(k));
    info.kernel_hash = packed[std::size_t(it->second)].kernel_hash;
    kernels::MatmulPackEntry e;
    e.info = int(infos.size());
    e.kernel = it->second;
    e.consts = t.launch_consts(c);
    e.problem = p;
    e.is_default = is_default;
    entries.push_back(e);
    infos.push_back(std::move(info));
  };
  for (const auto& [key, lr] : chosen) {
    const results::TrialRow& r = lr->row;
    const core::ArchSpec& arch = core::parse_arch(key.first);
    const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
    const kernels::MatmulProblem p = matmul_problem(r.problem);
    const core::TuningConfig c = results::stored_config(store.path(), r);
    add(t, p, c,
        {r.tmpl.name, key.first, p.key(), c.to_json(), lr->verification, r.source, r.tmpl.source_hash, "",
         r.median_ms.value_or(0)},
        r.kernel_hash, false);
    archs.insert(key.first);
    tuned_kinds.insert({key.first, int(p.in_dtype), int(p.out_dtype), int(p.b_layout)});
  }
  summary.entries = int(entries.size());
  // The default of every kind the template takes and nothing tunes: mgpu_matmul() falls back to
  // it (for a tuned kind, the nearest tuned problem always serves).
  // With --require-verified none: a default is a config no row proved (round 17, F6), so an
  // untuned kind is MGPU_ERR_NO_KERNEL rather than an unverified kernel.
  for (const std::string& a : require_verified_rows ? std::set<std::string>{} : archs) {
    const kernels::MatmulTemplate& t = kernels::matmul_template(core::parse_arch(a));
    for (const kernels::MatmulProblem& p : kernels::matmul_pack_default_problems(t)) {
      if (tuned_kinds.count({a, int(p.in_dtype), int(p.out_dtype), int(p.b_layout)})) continue;
      const core::TuningConfig c = t.default_config();
      add(t, p, c, {std::string(t.name()), a, p.key(), c.to_json(), "none", "default", std::string(t.source_hash()), "", 0},
          "", true);
      ++summary.defaults;
    }
  }
  summary.kernels = int(packed.size());
  summary.archs.assign(archs.begin(), archs.end());

  // Written beside the target, then renamed into place: a failure leaves `dir` as it was.
  StagingFolder staging{target.parent_path() / fmt::format(".{}.partial-{}", target.filename().string(), ::getpid())};
  std::error_code ec;
  fs::remove_all(staging.path, ec);
  fs::create_directories(staging.path, ec);
  if (ec)  // no space or inode left is the disk's failure (exit 1, round 20, F59)
    throw core::Error(results::environment_errno(ec.value()) ? core::ErrorKind::IO : core::ErrorKind::InvalidInput,
                      fmt::format("cannot create a folder beside {}: {}", dir, ec.message()));
  for (const PackSourceFile& f : kPackSourceFiles) write_text(staging.path / f.path, f.text);
  const std::string tool = version_string();
  write_text(staging.path / "src" / "tables.c", tables_source(packed, infos, tool));
  write_text(staging.path / "src" / "matmul_table.c", kernels::matmul_pack_table_c(entries));
  nlohmann::json manifest{{"format", kManifestFormat}, {"format_version", 1}, {"tool", tool}, {"database", store.path()}};
  for (std::size_t i = 0; i < packed.size(); ++i) {
    write_text(staging.path / "src" / "kernels" / fmt::format("kernel_{:03}.c", i), kernel_source(packed[i], i));
    manifest["kernels"].push_back({{"index", i}, {"name", packed[i].name}, {"arch", packed[i].arch},
                                   {"kernel_hash", packed[i].kernel_hash}, {"ptx_bytes", packed[i].ptx.size()},
                                   {"cubin_bytes", packed[i].cubin.size()}});
  }
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const Info& e = infos[i];
    manifest["entries"].push_back({{"index", i}, {"op", "matmul"}, {"template", e.tmpl}, {"arch", e.arch},
                                   {"problem", e.problem_key}, {"config", nlohmann::json::parse(e.config_json)},
                                   {"verification", e.verification}, {"source", e.source}, {"source_hash", e.source_hash},
                                   {"kernel_hash", e.kernel_hash}, {"kernel", entries[i].kernel},
                                   {"median_ms", e.median_ms}});
  }
  write_text(staging.path / "manifest.json",
             manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  // An earlier pack (or an empty folder) is moved aside, the new one renamed in, the old removed.
  const fs::path old = target.parent_path() / fmt::format(".{}.old-{}", target.filename().string(), ::getpid());
  const bool replacing = fs::exists(target, ec);
  if (replacing) {
    fs::rename(target, old, ec);
    if (ec) throw core::Error(core::ErrorKind::IO, fmt::format("cannot replace {}: {}", dir, ec.message()));
  }
  fs::rename(staging.path, target, ec);
  if (ec) {
    std::error_code back;
    if (replacing) fs::rename(old, target, back);
    throw core::Error(core::ErrorKind::IO, fmt::format("cannot move the pack into {}: {}", dir, ec.message()));
  }
  staging.moved = true;
  if (replacing) fs::remove_all(old, ec);
  return summary;
}

}  // namespace mgpu::harness
