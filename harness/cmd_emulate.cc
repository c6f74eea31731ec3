#include "harness/cmd_emulate.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/arch.h"
#include "core/compiler.h"
#include "core/emu/device.h"
#include "core/emu/ptx/parser.h"
#include "core/emu/check/launch_json.h"
#include "core/error.h"
#include "core/half.h"
#include "harness/cli.h"
#include "harness/numeric_options.h"

namespace mgpu::harness {
namespace {

using core::Error;
using core::ErrorKind;
using nlohmann::json;

struct Options {
  std::string ptx_file, mlir_file, launch;
  std::string arch = "sm_90a";
  std::int64_t seed = 1, schedules = 1;
  bool json_out = false;
  bool races = false;
};

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::InvalidInput, fmt::format("cannot read {} '{}'", what, path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::InvalidInput, "launch description: " + what); }

std::array<std::uint32_t, 3> dims(const json& j, const char* key, std::uint32_t dflt) {
  std::array<std::uint32_t, 3> d = {dflt, 1, 1};
  if (!j.contains(key)) return d;
  const json& v = j[key];
  if (v.is_number_unsigned()) d[0] = v.get<std::uint32_t>();
  else if (v.is_array() && !v.empty() && v.size() <= 3) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_unsigned() || v[i].get<std::uint64_t>() == 0 || v[i].get<std::uint64_t>() > 0x7FFFFFFF)
        bad(fmt::format("'{}' must hold positive integers", key));
      d[i] = v[i].get<std::uint32_t>();
    }
  } else {
    bad(fmt::format("'{}' must be a positive integer or a list of 1 to 3", key));
  }
  return d;
}

// One argument's bytes, and for buffers the device allocation they live in.
struct Arg {
  std::vector<std::uint8_t> value;  // what the kernel parameter holds
  std::uint64_t device = 0;         // buffers: the allocation
  std::uint64_t bytes = 0;
  std::string name, print_as;
  std::int64_t print_count = 0;
};

// Fills: zero, poison (NaN in every float format), iota-i32, iota-f32, random-f32, random-bf16,
// random-f16 (uniform in [-1, 1), seeded by the buffer's "seed").
void fill(std::vector<std::uint8_t>& b, const std::string& how, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  if (how == "zero") std::fill(b.begin(), b.end(), 0);
  else if (how == "poison") std::fill(b.begin(), b.end(), 0xFF);
  else if (how == "iota-i32" || how == "iota-f32" || how == "random-f32") {
    for (std::size_t i = 0; i + 4 <= b.size(); i += 4) {
      std::uint32_t v;
      if (how == "iota-i32") v = static_cast<std::uint32_t>(i / 4);
      else {
        float f = how == "iota-f32" ? static_cast<float>(i / 4) : u(rng);
        std::memcpy(&v, &f, 4);
      }
      std::memcpy(&b[i], &v, 4);
    }
  } else if (how == "random-bf16" || how == "random-f16") {
    for (std::size_t i = 0; i + 2 <= b.size(); i += 2) {
      std::uint16_t h = how == "random-bf16" ? core::to_bf16(u(rng)) : core::to_f16(u(rng));
      std::memcpy(&b[i], &h, 2);
    }
  } else {
    bad(fmt::format("unknown fill '{}': zero, poison, iota-i32, iota-f32, random-f32, random-bf16, random-f16", how));
  }
}

std::vector<Arg> make_args(const json& launch, emu::Device& dev) {
  std::vector<Arg> out;
  if (!launch.contains("args")) return out;
  if (!launch["args"].is_array()) bad("'args' must be a list");
  for (const json& a : launch["args"]) {
    Arg arg;
    if (!a.is_object() || a.size() < 1) bad("each argument is an object such as {\"u32\": 5} or {\"buffer\": {...}}");
    auto scalar = [&](const char* key, int bytes, bool is_float) {
      if (!a.contains(key)) return false;
      const json& v = a[key];
      if (!v.is_number()) bad(fmt::format("'{}' takes a number", key));
      arg.value.resize(bytes);
      if (is_float) {
        float f = v.get<float>();
        std::memcpy(arg.value.data(), &f, 4);
      } else {
        std::int64_t i = v.get<std::int64_t>();
        std::memcpy(arg.value.data(), &i, bytes);
      }
      return true;
    };
    if (scalar("i32", 4, false) || scalar("u32", 4, false) || scalar("i64", 8, false) || scalar("u64", 8, false) ||
        scalar("f32", 4, true)) {
      out.push_back(std::move(arg));
      continue;
    }
    if (!a.contains("buffer") || !a["buffer"].is_object()) bad("unknown argument " + a.dump());
    const json& b = a["buffer"];
    if (!b.contains("bytes") || !b["bytes"].is_number_unsigned() || b["bytes"].get<std::uint64_t>() == 0 ||
        b["bytes"].get<std::uint64_t>() > (std::uint64_t{8} << 30))
      bad("a buffer needs \"bytes\": a positive size up to 8 GiB");
    arg.bytes = b["bytes"].get<std::uint64_t>();
    arg.name = b.value("name", fmt::format("arg{}", out.size()));
    std::vector<std::uint8_t> host(arg.bytes);
    fill(host, b.value("fill", "zero"), b.value("seed", std::uint64_t{1}));
    arg.device = dev.memory().alloc(arg.bytes);
    std::memcpy(dev.memory().find(arg.device, arg.bytes), host.data(), arg.bytes);
    arg.value.resize(8);
    std::memcpy(arg.value.data(), &arg.device, 8);
    arg.print_as = b.value("print", "");
    arg.print_count = b.value("print_count", std::int64_t{16});
    if (!arg.print_as.empty() && arg.print_as != "i32" && arg.print_as != "f32" && arg.print_as != "bf16" && arg.print_as != "f16")
      bad(fmt::format("buffer '{}': print as i32, f32, bf16 or f16", arg.name));
    out.push_back(std::move(arg));
  }
  return out;
}

// One line for the text output: the extra wavefronts, and the three PTX lines and the label
// regions that cause most of them.
std::string bank_summary(const emu::BankReport& b) {
  std::string s = fmt::format("shared-memory bank conflicts: {} extra wavefronts in {} accesses ({} wavefronts, ideal {})",
                              b.total.conflicts(), b.total.accesses, b.total.wavefronts, b.total.ideal);
  std::vector<const emu::BankLine*> worst;
  for (const auto& l : b.lines)
    if (l.tally.conflicts()) worst.push_back(&l);
  std::stable_sort(worst.begin(), worst.end(),
                   [](const emu::BankLine* x, const emu::BankLine* y) { return x->tally.conflicts() > y->tally.conflicts(); });
  if (worst.size() > 3) worst.resize(3);
  if (!worst.empty()) {
    s += "; top lines:";
    for (const auto* l : worst)
      s += fmt::format(" line {} in {}: {} in {} accesses,", l->line, l->region, l->tally.conflicts(), l->tally.accesses);
    s.pop_back();
    s += "; by label:";
    for (const auto& g : b.regions)
      if (g.tally.conflicts()) s += fmt::format(" {} {},", g.label, g.tally.conflicts());
    s.pop_back();
  }
  return s;
}

json print_buffer(emu::Device& dev, const Arg& a) {
  int eb = a.print_as == "bf16" || a.print_as == "f16" ? 2 : 4;
  std::int64_t n = std::min<std::int64_t>(a.print_count, static_cast<std::int64_t>(a.bytes / eb));
  const std::uint8_t* p = dev.memory().find(a.device, a.bytes);
  json values = json::array();
  for (std::int64_t i = 0; i < n; ++i) {
    if (a.print_as == "i32") {
      std::int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      values.push_back(v);
    } else if (a.print_as == "f32") {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      values.push_back(v);
    } else {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      values.push_back(a.print_as == "bf16" ? core::from_bf16(h) : core::from_f16(h));
    }
  }
  return values;
}

void run(const Options& o) {
  if (o.ptx_file.empty() == o.mlir_file.empty()) throw Error(ErrorKind::InvalidInput, "give one of --ptx FILE or --mlir FILE");
  std::string ptx;
  if (!o.ptx_file.empty()) {
    ptx = read_file(o.ptx_file, "PTX file");
  } else {
    const core::ArchSpec& arch = core::parse_arch(o.arch);
    if (arch.name != std::string_view("sm_90a") && arch.name != std::string_view("sm_100a"))
      throw Error(ErrorKind::InvalidInput, fmt::format("the virtual device presents sm_90a or sm_100a, not {}", arch.name));
    core::CompileResult r = core::compile_module(read_file(o.mlir_file, "MLIR file"), arch, core::CompileOptions::from_environment());
    if (r.units.size() != 1)
      throw Error(ErrorKind::InvalidInput, fmt::format("{} has {} gpu.modules; emulate takes one", o.mlir_file, r.units.size()));
    ptx = r.units[0].ptx;
  }
  json launch;
  try {
    std::string text = o.launch;
    if (!text.empty() && text[0] != '{') text = read_file(o.launch, "launch description");
    launch = json::parse(text.empty() ? "{}" : text);
  } catch (const json::exception& e) {
    bad(std::string("not JSON: ") + e.what());
  }
  if (!launch.is_object()) bad("must be a JSON object");

  json results = json::array();
  int with_findings = 0;
  for (std::int64_t s = 0; s < o.schedules; ++s) {
    // A fresh device per schedule, the module loaded again: every schedule starts from the same
    // inputs, .global variables from their initializers included.
    emu::Device dev;
    emu::LoadedModule* mod = nullptr;
    try {
      mod = &dev.load(ptx);
    } catch (const emu::ptx::ParseError& e) {
      throw Error(ErrorKind::InvalidInput, fmt::format("the PTX does not parse: {}", e.what()));
    } catch (const emu::Fault& f) {
      throw Error(ErrorKind::InvalidInput, fmt::format("the virtual device cannot run this PTX: {}", f.report.format()));
    }
    std::string kernel = launch.value("kernel", mod->ptx.kernels.size() == 1 ? mod->ptx.kernels[0].name : "");
    const emu::ptx::Kernel* k = mod->ptx.find(kernel);
    if (!k) bad(kernel.empty() ? "the module has several kernels: name one with \"kernel\"" : "no kernel named '" + kernel + "'");
    std::vector<Arg> args = make_args(launch, dev);
    if (args.size() != k->params.size())
      bad(fmt::format("kernel {} takes {} parameters, the description gives {}", kernel, k->params.size(), args.size()));
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args[i].value.size() < k->params[i].size)
        bad(fmt::format("parameter {} of {} is {} bytes; the argument gives {}", i, kernel, k->params[i].size, args[i].value.size()));
    std::vector<void*> ptrs;
    for (Arg& a : args) ptrs.push_back(a.value.data());
    emu::LaunchConfig c;
    auto g = dims(launch, "grid", 1), b = dims(launch, "block", 32), cl = dims(launch, "cluster", 1);
    for (int i = 0; i < 3; ++i) {
      c.grid[i] = g[i];
      c.block[i] = b[i];
      c.cluster[i] = cl[i];
    }
    c.dynamic_smem = launch.value("dynamic_smem", 0u);
    c.seed = static_cast<std::uint64_t>(o.seed + s);
    c.detect_races = o.races;
    emu::LaunchResult r = dev.launch(*mod, kernel, c, ptrs.data());
    json one = json::parse(emu::launch_json(r));
    one["seed"] = c.seed;
    json buffers = json::object();
    for (const Arg& a : args)
      if (!a.print_as.empty() && r.ok) buffers[a.name] = print_buffer(dev, a);
    if (!buffers.empty()) one["buffers"] = buffers;
    with_findings += !r.ok || !r.reports.empty();
    if (!o.json_out) {
      fmt::print("schedule {} (seed {}): {}, {} warp-instructions\n", s + 1, c.seed,
                 !r.ok ? "FAILED" : r.reports.empty() ? "clean" : fmt::format("{} finding(s)", r.reports.size()), r.instructions);
      if (!r.printf_output.empty()) fmt::print("{}", r.printf_output);
      for (const auto& rep : r.reports) fmt::print("  {}\n", rep.format());
      if (r.banks.total.accesses) fmt::print("  {}\n", bank_summary(r.banks));
      for (auto& [name, values] : buffers.items()) fmt::print("  {} = {}\n", name, values.dump());
    }
    results.push_back(std::move(one));
  }
  if (o.json_out)
    std::cout << json{{"kernel_source", o.ptx_file.empty() ? o.mlir_file : o.ptx_file}, {"schedules", results},
                      {"with_findings", with_findings}}
                     .dump(2)
              << "\n";
  else
    fmt::print("{} of {} schedules clean\n", o.schedules - with_findings, o.schedules);
  if (with_findings) throw ExitWith{1};
}

}  // namespace

void add_emulate_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "emulate",
      "Run a kernel on the virtual device (no GPU; sm_90a, or sm_100a for a module targeting it): the exact PTX, with TMA, mbarrier, wgmma, tcgen05 and clusters, "
      "under seeded schedules; prints races, hazards, deadlocks and faults with their PTX lines, and shared-memory bank "
      "conflicts per PTX line (exit 1 when any "
      "schedule has a finding)");
  cmd->add_option("--ptx", o->ptx_file, "PTX file to run");
  cmd->add_option("--mlir", o->mlir_file, "MLIR module (one gpu.module) compiled through the MGPU backend, then run");
  cmd->add_option("--arch", o->arch, "Architecture to compile --mlir for: sm_90a or sm_100a");
  cmd->add_option("--launch", o->launch,
                  "Launch description, a file or inline JSON: {\"kernel\": NAME, \"grid\": [x,y,z], \"block\": [x,y,z], "
                  "\"cluster\": [x,y,z], \"dynamic_smem\": BYTES, \"args\": [{\"u32\": 5}, {\"f32\": 1.5}, {\"buffer\": "
                  "{\"bytes\": N, \"fill\": \"zero|poison|iota-i32|iota-f32|random-f32|random-bf16|random-f16\", \"seed\": S, "
                  "\"name\": \"c\", \"print\": \"i32|f32|bf16|f16\", \"print_count\": 16}}]}");
  cmd->add_option("--seed", o->seed, "First scheduler seed (seeds divisible by 4 land async operations at the latest moment, "
                                     "odd seeds hand over to woken waiters at once)")
      ->check(whole_number(0));
  cmd->add_option("--schedules", o->schedules, "Schedules to run, seeds --seed, --seed+1, ...")->check(whole_number(1, 10000));
  cmd->add_flag("--races", o->races, "Also detect shared-memory data races between threads (vector clocks; slower)");
  cmd->add_flag("--json", o->json_out, "Print JSON");
  cmd->callback([o] { run(*o); });
}

}  // namespace mgpu::harness
