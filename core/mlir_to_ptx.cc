// The only translation unit of the compile pipeline that includes MLIR's heavy headers.
#include "core/mlir_to_ptx.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/mlir_context.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mgpu::core {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void register_passes_once() {
  // Pass registration is process-global and makes the textual pipeline parseable.
  static std::once_flag once;
  std::call_once(once, [] {
    // Only the passes nvvm_pipeline() names: registering a pass links its library, and the
    // static device bundle stays small when nothing else is pulled in.
    mlir::registerGpuNVVMAttachTarget();
    mlir::registerConvertNVGPUToNVVMPass();
    mlir::registerConvertVectorToSCF();
    mlir::registerSCFToControlFlowPass();
    mlir::registerConvertNVVMToLLVMPass();
    mlir::memref::registerExpandStridedMetadataPass();
    mlir::registerLowerAffinePass();
    mlir::registerConvertGpuOpsToNVVMOps();
    mlir::registerCanonicalizer();
    mlir::registerCSE();
    mlir::registerReconcileUnrealizedCastsPass();
    mlir::registerGpuModuleToBinaryPass();
  });
}

// Collects every diagnostic MLIR emits, so errors carry them verbatim.
class DiagnosticCollector {
 public:
  // `source_name`: the file the text came from; a line of it is named by that file, not "-".
  DiagnosticCollector(mlir::MLIRContext& ctx, std::string source_name)
      : source_name_(std::move(source_name)), handler_(&ctx, [this](mlir::Diagnostic& d) {
          std::string loc;
          llvm::raw_string_ostream los(loc);
          if (auto at = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()); at && !source_name_.empty())
            los << "loc(\"" << source_name_ << "\":" << at.getLine() << ":" << at.getColumn() << ")";
          else
            d.getLocation().print(los);
          los.flush();
          text_ += fmt::format("\n  {}: {}", loc, d.str());
          for (const mlir::Diagnostic& note : d.getNotes()) text_ += fmt::format("\n    note: {}", note.str());
          return mlir::success();
        }) {}
  const std::string& text() const { return text_; }

 private:
  std::string source_name_;
  std::string text_;
  mlir::ScopedDiagnosticHandler handler_;
};

void write_file(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw Error(ErrorKind::IO, fmt::format("cannot write dump file {}", path.string()));
}

}  // namespace

std::string nvvm_pipeline(const ArchSpec& arch, const LoweringOptions& options) {
  // Device code only: the host side launches through the driver API, so there is no
  // gpu-to-llvm host lowering. Order matters: NVGPU/NVVM ops become LLVM-ready before
  // convert-gpu-to-nvvm, which lowers arith/cf/memref/index/math through their
  // ConvertToLLVM interfaces; gpu-module-to-binary{format=isa} stops at PTX so the assembler
  // (nvJitLink or ptxas) is ours to choose and to time.
  return fmt::format(
      "builtin.module("
      "nvvm-attach-target{{chip={0} features={1} O={2}}},"
      "gpu.module("
      "convert-nvgpu-to-nvvm,"
      "convert-vector-to-scf,"
      "convert-scf-to-cf,"
      "convert-nvvm-to-llvm,"
      "expand-strided-metadata,"
      "lower-affine,"
      "convert-gpu-to-nvvm{{index-bitwidth=64 use-bare-ptr-memref-call-conv=true}},"
      "canonicalize,"
      "cse,"
      "reconcile-unrealized-casts),"
      "gpu-module-to-binary{{format=isa}})",
      arch.name, arch.ptx_feature(), options.opt_level);
}

// MLIR's parser recurses once per nesting level: a module nested thousands deep overflowed the
// stack (SIGSEGV). Our templates nest a few dozen levels; brackets inside strings and comments
// do not count. Types and attributes nest with < > (tuple<tuple<...>>, vector<...>,
// #gpu.address_space<...>): those count too, but not the '>' of an arrow (->) nor a comparison
// (>= in an affine set), and a '>' with no '<' open never closes a ( [ { level.
constexpr int kMaxMlirNesting = 256;

static void check_nesting(std::string_view text) {
  int depth = 0, angles = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {  // a string literal, with its escapes
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == std::string_view::npos) break;
    } else if (c == '{' || c == '(' || c == '[') {
      deepest = std::max(deepest, ++depth + angles);
    } else if (c == '}' || c == ')' || c == ']') {
      --depth;
    } else if (c == '<' && !(i + 1 < text.size() && text[i + 1] == '=')) {
      deepest = std::max(deepest, depth + ++angles);
    } else if (c == '>' && angles > 0 && !(i > 0 && text[i - 1] == '-') &&
               !(i + 1 < text.size() && text[i + 1] == '=')) {
      --angles;
    }
  }
  if (deepest > kMaxMlirNesting)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("the MLIR module nests {} levels deep; at most {} are read", deepest, kMaxMlirNesting));
}

// LLVM's NVPTX back end cannot quote symbol names: MCContext aborts the process ("LLVM ERROR:
// Symbol name with unsupported characters") on a name such as @"fé", @"a b" or @"f@x", and
// ptxas rejects what is no PTX identifier (@"f.x", @"1f"). Every symbol inside a gpu.module
// (kernels, functions, globals) becomes a PTX symbol, so each must be a PTX identifier as LLVM
// writes it: [A-Za-z_$][A-Za-z0-9_$]* (PTX's leading '%' makes LLVM abort too). Declarations of
// LLVM intrinsics (@llvm.nvvm.*) never reach the PTX text under their own names.
static bool ptx_symbol_name(llvm::StringRef n) {
  if (n.starts_with("llvm.")) return true;
  auto first = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; };
  auto rest = [&](char c) { return first(c) || (c >= '0' && c <= '9'); };
  return !n.empty() && first(n.front()) && std::all_of(n.begin() + 1, n.end(), rest);
}

static std::string printable_name(llvm::StringRef name) {
  std::string out;
  for (unsigned char c : name) {
    if (c == '"' || c == '\\') out += fmt::format("\\{}", static_cast<char>(c));
    else if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += fmt::format("\\{:02X}", c);  // MLIR's own escape form
  }
  return out;
}

static void check_symbol_names(mlir::gpu::GPUModuleOp gm) {
  // Collected first and thrown after the walk: no exception crosses MLIR's own frames.
  std::optional<std::pair<std::string, std::string>> bad;  // name, op
  gm.walk([&](mlir::Operation* op) {
    if (bad || op == gm.getOperation()) return;
    auto name = op->getAttrOfType<mlir::StringAttr>(mlir::SymbolTable::getSymbolAttrName());
    if (!name) return;
    llvm::StringRef n = name.getValue();
    if (ptx_symbol_name(n)) return;
    bad.emplace(printable_name(n), op->getName().getStringRef().str());
  });
  if (bad)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("symbol name @\"{}\" ({}) in gpu.module @{} is not allowed: a PTX symbol name is "
                            "ASCII letters, digits, '_' and '$', not starting with a digit",
                            bad->first, bad->second, printable_name(gm.getSymName())));
}

LoweredPtx lower_mlir_to_ptx(std::string_view mlir_text, const ArchSpec& arch,
                             const LoweringOptions& options) {
  register_passes_once();
  std::unique_ptr<mlir::MLIRContext> owned = make_mlir_context();
  mlir::MLIRContext& ctx = *owned;
  DiagnosticCollector diags(ctx, options.source_name);
  LoweredPtx out;

  auto t0 = Clock::now();
  check_nesting(mlir_text);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(llvm::StringRef(mlir_text.data(), mlir_text.size()),
                                              mlir::ParserConfig(&ctx));
  // Text that does not parse is bad input, not a compiler failure.
  if (!module) {
    // A compressed file reads as "unexpected character" at 1:1: say what it is.
    const bool gzip = mlir_text.substr(0, 2) == "\x1f\x8b";
    throw Error(ErrorKind::InvalidInput,
                "MLIR parse failed:" + diags.text() +
                    (gzip ? fmt::format("\n  ({} is gzip-compressed: gunzip it first)",
                                        options.source_name.empty() ? std::string("the text") : options.source_name)
                          : std::string()));
  }
  out.parse_ms = ms_since(t0);

  // Kernel names before lowering: gpu.binary keeps only the objects.
  std::vector<PtxModule> found;
  std::optional<std::string> too_big;  // thrown after the walk: no exception through MLIR's frames
  module->walk([&](mlir::gpu::GPUModuleOp gm) {
    gm->removeAttr("targets");  // the pipeline attaches the target for `arch`
    PtxModule m;
    m.name = gm.getSymName().str();
    gm.walk([&](mlir::gpu::GPUFuncOp f) {
      if (!f.isKernel()) return;
      m.kernels.push_back(f.getName().str());
      // Workgroup attributions are shared memory the kernel asks for; one it never uses is
      // dropped by the lowering, so a kernel asking more than a block may have would compile
      // and report "0 B static SMEM". Said here, whether or not it is used.
      unsigned __int128 bytes = 0;
      for (mlir::BlockArgument a : f.getWorkgroupAttributions()) {
        auto mt = llvm::dyn_cast<mlir::MemRefType>(a.getType());
        if (!mt || !mt.hasStaticShape() || !mt.getElementType().isIntOrIndexOrFloat()) continue;
        const unsigned bits = mt.getElementType().isIndex() ? 64 : mt.getElementType().getIntOrFloatBitWidth();
        bytes += static_cast<unsigned __int128>(mt.getNumElements()) * ((bits + 7) / 8);
      }
      if (bytes > static_cast<unsigned __int128>(arch.smem_per_block_optin) && !too_big)
        too_big = fmt::format("kernel @{}::{} asks {} bytes of shared memory in its workgroup attributions; a block "
                                "on {} has at most {} (it could never launch)",
                                gm.getSymName().str(), f.getName().str(),
                                bytes > static_cast<unsigned __int128>(UINT64_MAX) ? std::string("more than 2^64")
                                                                                    : std::to_string(static_cast<std::uint64_t>(bytes)),
                                arch.name, arch.smem_per_block_optin);
    });
    found.push_back(std::move(m));
  });
  if (too_big) throw Error(ErrorKind::InvalidInput, *too_big);
  if (found.empty())
    throw Error(ErrorKind::InvalidInput, "the module holds no gpu.module to compile");
  {
    std::vector<mlir::gpu::GPUModuleOp> gms;
    module->walk([&](mlir::gpu::GPUModuleOp gm) { gms.push_back(gm); });
    for (mlir::gpu::GPUModuleOp gm : gms) check_symbol_names(gm);
  }

  // The anchored form ("builtin.module(...)") is what mlir-opt takes too, so a dumped pipeline
  // can be replayed by hand; parse it as such and copy it into the context's pass manager.
  std::string parse_errors;
  llvm::raw_string_ostream parse_os(parse_errors);
  mlir::FailureOr<mlir::OpPassManager> parsed =
      mlir::parsePassPipeline(nvvm_pipeline(arch, options), parse_os);
  if (mlir::failed(parsed))
    throw Error(ErrorKind::Compile, "MLIR pipeline is malformed: " + parse_errors);
  mlir::PassManager pm(&ctx);
  static_cast<mlir::OpPassManager&>(pm) = *parsed;
  if (!options.dump_dir.empty()) {
    std::filesystem::create_directories(options.dump_dir);
    ctx.disableMultithreading();
    pm.enableIRPrintingToFileTree([](mlir::Pass*, mlir::Operation*) { return false; },
                                  [](mlir::Pass*, mlir::Operation*) { return true; },
                                  /*printModuleScope=*/false, /*printAfterOnlyOnChange=*/true,
                                  /*printAfterOnlyOnFailure=*/false, options.dump_dir);
  }
  t0 = Clock::now();
  if (mlir::failed(pm.run(*module)))
    throw Error(ErrorKind::Compile, fmt::format("MLIR lower failed for {}:{}", arch.name, diags.text()));
  out.lower_ms = ms_since(t0);

  module->walk([&](mlir::gpu::BinaryOp bin) {
    for (PtxModule& m : found) {
      if (m.name != bin.getSymName()) continue;
      auto obj = mlir::cast<mlir::gpu::ObjectAttr>(bin.getObjects()[0]);
      m.ptx = obj.getObject().str();
    }
  });
  for (PtxModule& m : found) {
    if (m.ptx.empty())
      throw Error(ErrorKind::Compile, fmt::format("MLIR lower produced no PTX for gpu.module @{}", m.name));
    if (!options.dump_dir.empty())
      write_file(std::filesystem::path(options.dump_dir) / (m.name + ".ptx"), m.ptx);
  }
  out.modules = std::move(found);
  return out;
}

}  // namespace mgpu::core
