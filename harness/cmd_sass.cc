#include "harness/cmd_sass.h"

#include <algorithm>
#include <map>
#include <regex>
#include <cctype>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cubin.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/sass/cubin_elf.h"
#include "core/sass/nvdisasm.h"
#include "core/sass/ptx_main_loop.h"
#include "core/sass/sass_profile.h"
#include "harness/exit_codes.h"
#include "harness/sass_report.h"

namespace mgpu::harness {
namespace {

struct Options {
  std::string cubin, kernel, ptxas_log, ptx;
  bool json = false;
};

std::string read_file(const std::string& path, const char* what) { return core::read_input_file(path, what); }

std::string names_of(const std::vector<core::CubinFunction>& fs) {
  std::string out;
  for (const auto& f : fs) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

// Why `text` is not PTX: text holds no NUL or other control bytes, and a module starts, comments
// aside, with its .version directive (PTX ISA, ".version": "Each PTX module must begin with a
// .version directive"). Random bytes or another file must not pass for "asks for no setmaxnreg".
std::optional<std::string> why_not_ptx(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return "it holds binary bytes";
  size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    else if (text.compare(i, 2, "//") == 0) i = std::min(text.find('\n', i), text.size());
    else if (text.compare(i, 2, "/*") == 0) i = std::min(text.find("*/", i + 2), text.size() - 2) + 2;
    else break;
  }
  if (text.compare(i, 8, ".version") != 0) return "it does not begin with a .version directive";
  return std::nullopt;
}

// Where the PTX declares `kernel` (".entry NAME"), as the PTX this cubin came from does; npos if
// it does not.
size_t kernel_entry(const std::string& ptx, const std::string& kernel) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; };
  for (size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 1)) {
    size_t i = at + 6;
    while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i]))) ++i;
    if (ptx.compare(i, kernel.size(), kernel) == 0 && (i + kernel.size() == ptx.size() || !ident(ptx[i + kernel.size()])))
      return at;
  }
  return std::string::npos;
}
bool declares_kernel(const std::string& ptx, const std::string& kernel) { return kernel_entry(ptx, kernel) != std::string::npos; }

// The MMA shapes of a kernel, counted: "64x128x16" -> 16. ptxas issues one HGMMA for each
// wgmma.mma_async of the PTX, of its shape (sm_90a, ptxas 13.0: 16 and 32 in the attention
// kernels, 16 in matmul's), so a PTX of another config -- a schedule that peels a step, another
// head dim or tile -- is told apart from the cubin's own.
using MmaShapes = std::map<std::string, int>;

// The wgmma.mma_async shapes of `kernel`'s body in the PTX (to the next entry).
MmaShapes ptx_mma_shapes(const std::string& ptx, const std::string& kernel) {
  static const std::regex wgmma(R"(wgmma\.mma_async[a-z0-9_.]*?\.m(\d+)n(\d+)k(\d+))");
  const size_t begin = kernel_entry(ptx, kernel);
  const size_t end = std::min(ptx.find(".entry", begin + 6), ptx.size());
  MmaShapes out;
  for (std::sregex_iterator it(ptx.begin() + begin, ptx.begin() + end, wgmma), last; it != last; ++it)
    ++out[fmt::format("{}x{}x{}", (*it)[1].str(), (*it)[2].str(), (*it)[3].str())];
  return out;
}

// The HGMMA shapes of `kernel`'s section of an nvdisasm listing.
MmaShapes sass_mma_shapes(const std::string& listing, const std::string& kernel) {
  static const std::regex hgmma(R"(HGMMA\.(\d+)x(\d+)x(\d+))");
  size_t begin = listing.find("\n.text." + kernel + ":");
  if (begin == std::string::npos) return {};
  const size_t end = std::min(listing.find("//----", begin), listing.size());
  MmaShapes out;
  for (std::sregex_iterator it(listing.begin() + begin, listing.begin() + end, hgmma), last; it != last; ++it)
    ++out[fmt::format("{}x{}x{}", (*it)[1].str(), (*it)[2].str(), (*it)[3].str())];
  return out;
}

std::string shapes_text(const MmaShapes& shapes) {
  std::string out;
  for (const auto& [shape, n] : shapes) out += fmt::format("{}{} x {}", out.empty() ? "" : ", ", n, shape);
  return out.empty() ? "none" : out;
}

// The PTX the user named, checked to be PTX and this kernel's: whether it asks for setmaxnreg.
// The PTX's text, checked to be the cubin's (it declares the kernel).
std::string kernels_ptx(const std::string& path, const std::string& kernel) {
  const std::string ptx = read_file(path, "PTX file");
  if (auto why = why_not_ptx(ptx))
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("'{}' is not PTX: {}", path, *why));
  if (!declares_kernel(ptx, kernel))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("the PTX file '{}' declares no kernel '{}' (.entry {}): give the PTX this cubin was "
                                  "assembled from", path, kernel, kernel));
  return ptx;
}

void run(const Options& o) {
  // Everything the user gave is checked before nvdisasm runs (it takes a quarter second).
  const std::string image = read_file(o.cubin, "cubin");
  std::vector<core::CubinFunction> functions;
  try {
    functions = core::cubin_functions(image);
  } catch (const core::Error& e) {
    throw core::Error(e.kind(), fmt::format("'{}' is {}", o.cubin, e.what()));
  }
  if (functions.empty()) throw core::Error(core::ErrorKind::InvalidInput, fmt::format("'{}' holds no code", o.cubin));
  const core::CubinFunction* f = &functions.front();
  if (!o.kernel.empty()) {
    f = nullptr;
    for (const auto& c : functions) if (c.name == o.kernel) f = &c;
    if (!f)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("no kernel '{}' in '{}'; it holds: {}", o.kernel, o.cubin, names_of(functions)));
  }
  std::optional<core::KernelResources> from_log;
  std::vector<std::string> advisories;
  if (!o.ptxas_log.empty()) {
    const std::string log = read_file(o.ptxas_log, "ptxas log");
    auto reported = core::parse_assembler_report(log);
    auto r = reported.find(f->name);
    if (r == reported.end())
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("the ptxas log '{}' reports no function '{}' (give the `ptxas -v` output "
                                    "of the PTX this cubin was assembled from)", o.ptxas_log, f->name));
    from_log = r->second;
    advisories = core::assembler_advisories(log);
  }
  const std::string ptx = o.ptx.empty() ? std::string() : kernels_ptx(o.ptx, f->name);
  require_nvdisasm("sass");

  const std::string listing = core::disassemble(image);
  core::KernelEvidence k{core::profile_sass(listing, f->name), advisories,
                         from_log ? from_log->spill_store_bytes : 0, ptx.find("setmaxnreg") != std::string::npos};
  if (!ptx.empty() && ptx_mma_shapes(ptx, f->name) != sass_mma_shapes(listing, f->name))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("the PTX file '{}' is not this cubin's: its kernel '{}' has wgmma.mma_async {} where "
                                  "the cubin has HGMMA {} (the assembler issues one of each shape for each): give the "
                                  "PTX this cubin was assembled from",
                                  o.ptx, f->name, shapes_text(ptx_mma_shapes(ptx, f->name)),
                                  shapes_text(sass_mma_shapes(listing, f->name))));
  // What the PTX's main loop asked for, so the assembler's additions can be told apart.
  if (const core::PtxMainLoop loop = core::ptx_main_loop(ptx); loop.found)
    k.ptx_main_loop_warpgroup_sync = loop.warpgroup_sync;
  const int registers = from_log ? from_log->registers : f->registers;
  nlohmann::json functions_json = nlohmann::json::array();
  for (const auto& c : functions) functions_json.push_back({{"name", c.name}, {"registers", c.registers}});
  nlohmann::json out = {{"cubin", o.cubin},
                        {"kernel", f->name},
                        {"functions", functions_json},
                        {"registers", registers},
                        {"registers_from", from_log ? "ptxas log" : "cubin"},
                        {"spill_store_bytes", from_log ? nlohmann::json(from_log->spill_store_bytes) : nlohmann::json()},
                        {"spill_load_bytes", from_log ? nlohmann::json(from_log->spill_load_bytes) : nlohmann::json()},
                        {"ptx_asks_setmaxnreg", ptx.empty() ? nlohmann::json() : nlohmann::json(k.ptx_has_setmaxnreg)},
                        {"sass", sass_evidence_json(k)}};
  if (o.json) {
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  std::string spills = from_log ? fmt::format("{} bytes spill stores, {} bytes spill loads", from_log->spill_store_bytes,
                                              from_log->spill_load_bytes)
                                : "spills unknown (give --ptxas-log)";
  fmt::print("{}: kernel {} ({} of {} in the cubin): {} registers, {}\n", o.cubin, f->name, f - functions.data() + 1,
             functions.size(), registers, spills);
  fmt::print("{}\n", sass_line(out["sass"]));
  if (!ptx.empty() && !k.ptx_has_setmaxnreg)
    fmt::print("      (the PTX asks for no setmaxnreg: one register budget for every warp)\n");
  if (ptx.empty() && k.sass.has_main_loop && k.sass.whole.mma > 0)
    fmt::print("      (without --ptx the main loop's {} warpgroup arrive/wait are not judged: serialised-mma measures "
               "the assembler against its PTX)\n", k.sass.main_loop.warpgroup_sync);
}

}  // namespace

void add_sass_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "sass",
      "What the machine code of any cubin shows (nvdisasm): whether setmaxnreg survived, the main loop's "
      "(the innermost loop holding an MMA: a matmul's k-loop) MMA/TMA/barrier/warpgroup-wait/local-memory counts, "
      "and performance lints -- the evidence of 'compile matmul --sass', for a cubin from any compiler");
  cmd->add_option("cubin", o->cubin, "The cubin (ELF written by ptxas or nvJitLink)")->required();
  cmd->add_option("--kernel", o->kernel, "The function to profile (default: the cubin's first)");
  cmd->add_option("--ptxas-log", o->ptxas_log,
                  "The `ptxas -v` output of this cubin: registers and spill bytes as the assembler reports them, and "
                  "its advisory codes (e.g. C7504: setmaxnreg ignored)");
  cmd->add_option("--ptx", o->ptx, "The PTX this cubin was assembled from: tells whether it asked for setmaxnreg, "
                                   "so that a dropped one is linted, and how many wgmma fences and waits its main "
                                   "loop asked for (without it, a pipelined matmul k-step's 2 is assumed)");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->footer(std::string(
      "Examples:\n"
      "  mgpu-tune compile matmul --arch sm_90a --config {} --emit-dir out/\n"
      "  mgpu-tune sass out/*.cubin\n"
      "  ptxas -arch=sm_90a -v k.ptx -o k.cubin 2> k.log && mgpu-tune sass k.cubin --ptx k.ptx --ptxas-log k.log --json\n"
      "Needs nvdisasm (the CUDA toolkit's, $MGPU_NVDISASM, or scripts/cuda_tools.sh's). Counts are per loop\n"
      "iteration of one warpgroup's code; a compiler that unrolls the k-loop puts several k-steps in one.\n") +
              kExitCodesHelp);  // replacing the footer drops the inherited one: say it again
  cmd->callback([o] { run(*o); });
}

}  // namespace mgpu::harness
