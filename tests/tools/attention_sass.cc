// Builds the sm_90a FlashAttention forward kernel (kernels/attention/sm90_kernel.h) for one
// head_dim / block_kv / stages / mask, compiles it through the whole pipeline (MLIR -> PTX ->
// cubin, no GPU needed) and writes what came out to a folder, for SASS side-by-sides
// (scripts/attention_sass_compare.sh). Not a test.
//   attention_sass --out DIR [--head-dim 128] [--block-kv 128] [--stages 2] [--causal]
//                  [--dtype bf16|f16] [--seq-q N] [--seq-kv N] [--assembler auto|ptxas|nvjitlink]
// Writes DIR/attention.mlir, attention.ptx, attention.cubin, attention.assembler.log and
// attention.json (config, launch shape and the assembler's resource report).
// Exit: 0 written; 1 the compile or a write failed; 2 bad input (--help: 0).
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/compiler.h"
#include "core/error.h"
#include "kernels/attention/attention_problem.h"
#include "kernels/attention/sm90_kernel.h"

namespace {

using mgpu::core::Error;
using mgpu::core::ErrorKind;
namespace att = mgpu::kernels::attention;

constexpr std::string_view kUsage =
    "usage: attention_sass --out DIR [options]\n"
    "Build the sm_90a FlashAttention forward kernel for one config, compile it (no GPU needed)\n"
    "and write DIR/attention.{mlir,ptx,cubin,assembler.log,json}.\n"
    "\n"
    "  --out DIR            output folder (created if missing; files in it are overwritten)\n"
    "  --head-dim N         64, 128 or 256 (default 128)\n"
    "  --block-kv N         keys per main-loop step: 64 or 128 (default 128)\n"
    "  --stages N           K/V stages in flight, 1 to 4 (default 2)\n"
    "  --causal             causal mask (default: non-causal)\n"
    "  --dtype T            bf16 or f16 (default bf16)\n"
    "  --seq-q N, --seq-kv N  sequence lengths the problem names (default 4096; the kernel\n"
    "                       takes them as arguments, so they do not change its code)\n"
    "  --assembler A        auto, ptxas or nvjitlink (default auto: the toolkit's ptxas)\n"
    "  -h, --help           this text\n"
    "\n"
    "Exit codes: 0 written; 1 the compile or a write failed; 2 bad input.\n";

[[noreturn]] void bad_input(const std::string& msg) {
  std::cerr << "attention_sass: error: " << msg << " (run with --help for usage)\n";
  std::exit(mgpu::core::kExitBadInput);
}

std::int64_t parse_int(std::string_view flag, const std::string& text, std::int64_t lo, std::int64_t hi) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi || text[0] == '+' || text[0] == ' ')
    bad_input(fmt::format("{}: must be a whole number between {} and {}, got '{}'", flag, lo, hi, text));
  return v;
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw Error(ErrorKind::IO, fmt::format("cannot write {}", path.string()));
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  att::AttentionProblem p;
  p.batch = 1;
  p.heads = 1;
  p.kv_heads = 1;
  p.seq_q = 4096;
  p.seq_kv = 4096;
  p.head_dim = 128;
  p.dtype = mgpu::kernels::DType::BF16;
  att::AttentionConfig c;
  c.block_q = 64;
  c.block_kv = 128;
  c.max_concurrent_steps = 2;
  std::string out_dir, assembler = "auto";

  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) bad_input(fmt::format("{} needs a value", a));
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--out") {
      out_dir = value();
      if (out_dir.empty()) bad_input("--out: empty path");
    } else if (a == "--head-dim") {
      p.head_dim = parse_int(a, value(), 1, 1 << 20);
      if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
        bad_input(fmt::format("--head-dim: must be 64, 128 or 256, got {}", p.head_dim));
    } else if (a == "--block-kv") {
      c.block_kv = static_cast<int>(parse_int(a, value(), 1, 1 << 20));
      if (c.block_kv != 64 && c.block_kv != 128) bad_input(fmt::format("--block-kv: must be 64 or 128, got {}", c.block_kv));
    } else if (a == "--stages") {
      c.max_concurrent_steps = static_cast<int>(parse_int(a, value(), 1, 4));
    } else if (a == "--causal") {
      p.causal = true;
    } else if (a == "--dtype") {
      std::string t = value();
      if (t == "bf16") p.dtype = mgpu::kernels::DType::BF16;
      else if (t == "f16") p.dtype = mgpu::kernels::DType::F16;
      else bad_input(fmt::format("--dtype: unknown dtype '{}': choose bf16 or f16", t));
    } else if (a == "--seq-q") {
      p.seq_q = parse_int(a, value(), 1, std::int64_t{1} << 30);
    } else if (a == "--seq-kv") {
      p.seq_kv = parse_int(a, value(), 1, std::int64_t{1} << 30);
    } else if (a == "--assembler") {
      assembler = value();
      if (assembler != "auto" && assembler != "ptxas" && assembler != "nvjitlink")
        bad_input(fmt::format("--assembler: unknown assembler '{}': choose auto, ptxas or nvjitlink", assembler));
    } else {
      bad_input(fmt::format("unknown argument '{}'", a));
    }
  }
  if (out_dir.empty()) bad_input("--out DIR is required");

  try {
    att::validate(p);
    if (auto r = att::why_invalid(p, c)) bad_input(fmt::format("invalid config ({}): {}", r->rule, r->reason));
    att::BuiltAttention built = att::build_attention_sm90(p, c);
    mgpu::core::CompileOptions opt;
    opt.assembler = mgpu::core::parse_assembler(assembler);
    mgpu::core::CompileResult cr = mgpu::core::compile_module(built.mlir, mgpu::core::parse_arch("sm_90a"), opt);
    if (cr.units.size() != 1)
      throw Error(ErrorKind::Compile, fmt::format("expected one compiled unit, got {}", cr.units.size()));
    const mgpu::core::CompiledUnit& u = cr.units.front();
    auto res = u.cubin.kernels.find(built.kernel_name);
    if (res == u.cubin.kernels.end())
      throw Error(ErrorKind::Compile, fmt::format("the assembler's report names no kernel '{}'", built.kernel_name));

    std::filesystem::path dir(out_dir);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
      throw Error(ErrorKind::IO, fmt::format("cannot create the folder {}: {}", out_dir, ec ? ec.message() : "not a folder"));
    write_file(dir / "attention.mlir", built.mlir);
    write_file(dir / "attention.ptx", u.ptx);
    write_file(dir / "attention.cubin", u.cubin.image);
    write_file(dir / "attention.assembler.log", u.cubin.log);
    const mgpu::core::KernelResources& r = res->second;
    std::string json = fmt::format(
        "{{\n  \"kernel\": {},\n  \"problem\": {},\n  \"head_dim\": {},\n  \"block_q\": {},\n  \"cta_rows\": 128,\n"
        "  \"block_kv\": {},\n  \"stages\": {},\n  \"causal\": {},\n  \"dtype\": {},\n  \"threads\": {},\n"
        "  \"dynamic_smem_bytes\": {},\n  \"assembler\": {},\n  \"registers\": {},\n  \"spill_store_bytes\": {},\n"
        "  \"spill_load_bytes\": {},\n  \"stack_bytes\": {}\n}}\n",
        json_string(built.kernel_name), json_string(p.key()), p.head_dim, c.block_q, c.block_kv, c.max_concurrent_steps,
        p.causal ? "true" : "false", json_string(p.dtype == mgpu::kernels::DType::F16 ? "f16" : "bf16"),
        built.block_threads, built.dynamic_smem_bytes, json_string(mgpu::core::to_string(cr.assembler)), r.registers,
        r.spill_store_bytes, r.spill_load_bytes, r.stack_bytes);
    write_file(dir / "attention.json", json);
    std::cout << fmt::format("attention_sass: {} block_kv {} stages {}: {} registers, {} bytes spill stores, {} bytes "
                             "spill loads, {} threads, {} bytes dynamic smem -> {}\n",
                             p.key(), c.block_kv, c.max_concurrent_steps, r.registers, r.spill_store_bytes,
                             r.spill_load_bytes, built.block_threads, built.dynamic_smem_bytes, out_dir);
    return 0;
  } catch (const Error& e) {
    std::cerr << "attention_sass: error: " << e.what() << "\n";
    return mgpu::core::exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "attention_sass: error: " << e.what() << "\n";
    return mgpu::core::kExitFailure;
  }
}
