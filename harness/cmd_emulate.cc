#include "harness/cmd_emulate.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/arch.h"
#include "core/compiler.h"
#include "core/emu/device.h"
#include "core/emu/ptx/parser.h"
#include "core/emu/check/launch_json.h"
#include "core/emu/environment.h"
#include "core/input_file.h"
#include "core/json_input.h"
#include "core/emu/ptx/directives.h"
#include "core/error.h"
#include "core/half.h"
#include "harness/cli.h"
#include "harness/exit_codes.h"
#include "harness/numeric_options.h"

namespace mgpu::harness {
namespace {

namespace fs = std::filesystem;
using core::Error;
using core::ErrorKind;
using nlohmann::json;
using Dim3 = std::array<std::uint32_t, 3>;

struct Options {
  std::string ptx_file, mlir_file, launch;
  std::string arch = "sm_90a";
  std::int64_t seed = 1, schedules = 1;
  std::int64_t step_limit = 0;  // 0: MGPU_EMU_STEP_LIMIT, or the virtual device's default
  bool json_out = false;
  bool races = false;
  // Given on the command line: then the option wins over MGPU_EMU_SEED / MGPU_EMU_RACES.
  bool seed_given = false, races_given = false;
  std::uint64_t first_seed = 1;  // --seed, else MGPU_EMU_SEED, else 1
};

// Source and description files are read whole; these bounds keep a wrong path (a disk image, a
// log) from being read into memory before the parser could say it is no PTX.
constexpr std::uintmax_t kMaxSourceBytes = std::uintmax_t{256} << 20;
constexpr std::uintmax_t kMaxLaunchBytes = std::uintmax_t{16} << 20;
// The launch limits of every compute capability 9.0 and 10.0 device (CUDA C++ Programming Guide,
// "Features and Technical Specifications"); the virtual device itself only checks a block's
// thread count, so a larger dimension would otherwise be run as given.
constexpr Dim3 kMaxGrid = {0x7FFFFFFF, 65535, 65535};
constexpr Dim3 kMaxBlock = {1024, 1024, 64};
// CTAs per launch: the emulator draws its cluster order up front (12 bytes per cluster) and
// builds every CTA's shared memory and registers in turn, so a legal 2^31-block grid would
// exhaust memory or run for days. 2^20 empty CTAs take seconds; our matmul kernels launch at
// most a few thousand, even at 4096^3.
constexpr std::uint64_t kMaxCtas = std::uint64_t{1} << 20;
// All buffers of one description together: each is allocated and filled on the virtual device.
constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{8} << 30;
constexpr std::int64_t kMaxPrintCount = std::int64_t{1} << 20;

[[noreturn]] void refuse(const std::string& what) { throw Error(ErrorKind::InvalidInput, what); }
[[noreturn]] void bad(const std::string& what) { refuse("launch description: " + what); }

// ---- input files


// Checked before opening: a folder opens as a stream that reads nothing (so the error blamed
// its contents), and a FIFO or a device would block or never end.
void check_input_file(const std::string& path, const char* option, std::uintmax_t max_bytes) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) refuse(fmt::format("{} {}: no such file", option, path));
  if (ec) refuse(fmt::format("{} {}: cannot read it ({})", option, path, ec.message()));
  if (fs::is_directory(st)) refuse(fmt::format("{} {} is a folder, not a file", option, path));
  if (!fs::is_regular_file(st)) refuse(fmt::format("{} {} is {}: give a regular file", option, path, core::file_type_name(st.type())));
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes) refuse(fmt::format("{} {} is {} bytes; at most {} are read", option, path, size, max_bytes));
}

std::string read_file(const std::string& path, const char* option, std::uintmax_t max_bytes) {
  check_input_file(path, option, max_bytes);  // this command's wording for what it refuses
  return core::read_input_file(path, option, max_bytes);
}

// ---- JSON fields, each read exactly

// A value as a message quotes it: scalars as written (long strings cut short), containers by
// kind only (dumping one would recurse as deep as a hostile description nests).
std::string shown(const json& v) {
  if (v.is_object()) return fmt::format("an object of {} keys", v.size());
  if (v.is_array()) return fmt::format("a list of {}", v.size());
  // A whole number beyond 64 bits is read as a double: quoted as 1.8446744073709552e+19 it
  // looked like something else than what was typed (round 19, F42), so it is written out in
  // digits (2^64 exactly; 99999999999999999999 as the double nearest it, 1e20). 1e39 stays so.
  if (v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>()) &&
      std::fabs(v.get<double>()) >= 0x1p63 && std::fabs(v.get<double>()) < 1e21)
    return fmt::format("{:.0f}", v.get<double>());
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

// nlohmann's get<std::uint32_t>() and value(key, 0u) turn 4294967296 into 0, -1 into 4294967295
// and 1.5 into 1: a description saying those would run a launch other than the one it names.
std::int64_t whole(const json& v, const std::string& field, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) bad(fmt::format("'{}' must be a whole number in {}..{}, not {}", field, lo, hi, shown(v)));
  // Compared unsigned first: 2^63 and above do not fit the signed read.
  const bool above = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
  if (!above && v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi) return v.get<std::int64_t>();
  bad(fmt::format("'{}' = {} is out of range ({}..{})", field, shown(v), lo, hi));
}

std::uint64_t whole_u64(const json& v, const std::string& field) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) bad(fmt::format("'{}' = {} is out of range (0..{})", field, shown(v), UINT64_MAX));
  bad(fmt::format("'{}' must be a whole number in 0..{}, not {}", field, UINT64_MAX, shown(v)));
}

std::string text(const json& v, const std::string& field, std::initializer_list<std::string_view> choices = {}) {
  if (!v.is_string() || v.get_ref<const std::string&>().empty() || v.get_ref<const std::string&>().size() > 4096)
    bad(fmt::format("'{}' must be a name (a string of 1 to 4096 characters), not {}", field, shown(v)));
  const std::string& s = v.get_ref<const std::string&>();
  if (choices.size() && std::find(choices.begin(), choices.end(), s) == choices.end()) {
    std::string list;
    for (std::string_view c : choices) list += fmt::format("{}{}", list.empty() ? "" : ", ", c);
    const std::string what = field.substr(field.rfind('.') + 1);
    bad(fmt::format("unknown {} '{}' in '{}': {}", what, s.size() > 40 ? s.substr(0, 37) + "..." : s, field, list));
  }
  return s;
}

// A misspelt key ("dynamic_smen") would otherwise run the launch without what it says.
void known_keys(const json& obj, const std::string& where, std::initializer_list<std::string_view> keys) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (const std::string& k = it.key(); std::find(keys.begin(), keys.end(), k) == keys.end()) {
      std::string list;
      for (std::string_view c : keys) list += fmt::format("{}{}", list.empty() ? "" : ", ", c);
      bad(fmt::format("unknown key {} in {} (it takes {})", shown(json(k)), where, list));
    }
}

// ---- the launch description

struct BufferSpec {
  std::uint64_t bytes = 0, seed = 1;
  std::string name, fill = "zero", print_as;
  std::int64_t print_count = 16;
};

// One kernel argument: a scalar's bytes, or a buffer allocated on the device at each schedule.
struct ArgSpec {
  std::vector<std::uint8_t> value;
  bool is_signed = false;
  std::optional<BufferSpec> buffer;
};

struct LaunchSpec {
  std::string kernel;  // empty: the module's only kernel
  Dim3 grid = {1, 1, 1}, block = {32, 1, 1}, cluster = {1, 1, 1};
  std::uint32_t dynamic_smem = 0;
  std::vector<ArgSpec> args;
};

std::string dim_text(const Dim3& d) { return fmt::format("[{},{},{}]", d[0], d[1], d[2]); }

Dim3 dims(const json& launch, const char* key, std::uint32_t dflt, const Dim3& max) {
  Dim3 d = {dflt, 1, 1};
  if (!launch.contains(key)) return d;
  const json& v = launch[key];
  if (!v.is_array()) {
    d[0] = static_cast<std::uint32_t>(whole(v, key, 1, max[0]));
    return d;
  }
  if (v.empty() || v.size() > 3) bad(fmt::format("'{}' must be a whole number or a list of 1 to 3, not {}", key, shown(v)));
  for (std::size_t i = 0; i < v.size(); ++i) d[i] = static_cast<std::uint32_t>(whole(v[i], fmt::format("{}[{}]", key, i), 1, max[i]));
  return d;
}

template <typename T>
std::vector<std::uint8_t> bytes_of(T v) {
  std::vector<std::uint8_t> b(sizeof v);
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}

float f32_value(const json& v, const std::string& field) {
  if (!v.is_number()) bad(fmt::format("'{}' must be a number, not {}", field, shown(v)));
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > FLT_MAX) bad(fmt::format("'{}' = {} is beyond the f32 range", field, shown(v)));
  return static_cast<float>(d);
}

ArgSpec scalar_arg(const std::string& type, const json& v, const std::string& field) {
  ArgSpec a;
  a.is_signed = type[0] == 'i';
  if (type == "i32") a.value = bytes_of(static_cast<std::int32_t>(whole(v, field, INT32_MIN, INT32_MAX)));
  else if (type == "u32") a.value = bytes_of(static_cast<std::uint32_t>(whole(v, field, 0, UINT32_MAX)));
  else if (type == "i64") a.value = bytes_of(whole(v, field, INT64_MIN, INT64_MAX));
  else if (type == "u64") a.value = bytes_of(whole_u64(v, field));
  else a.value = bytes_of(f32_value(v, field));
  return a;
}

BufferSpec buffer_spec(const json& b, const std::string& field, std::size_t index) {
  if (!b.is_object()) bad(fmt::format("'{}' must be an object such as {{\"bytes\": 1024}}, not {}", field, shown(b)));
  known_keys(b, field, {"bytes", "name", "fill", "seed", "print", "print_count"});
  if (!b.contains("bytes")) bad(fmt::format("'{}' needs \"bytes\", its size", field));
  BufferSpec s;
  s.bytes = static_cast<std::uint64_t>(whole(b["bytes"], field + ".bytes", 1, static_cast<std::int64_t>(kMaxBufferBytes)));
  s.name = b.contains("name") ? text(b["name"], field + ".name") : fmt::format("arg{}", index);
  if (b.contains("fill"))
    s.fill = text(b["fill"], field + ".fill", {"zero", "poison", "iota-i32", "iota-f32", "random-f32", "random-bf16", "random-f16"});
  if (b.contains("seed")) s.seed = whole_u64(b["seed"], field + ".seed");
  if (b.contains("print")) s.print_as = text(b["print"], field + ".print", {"i32", "f32", "bf16", "f16"});
  if (b.contains("print_count")) s.print_count = whole(b["print_count"], field + ".print_count", 1, kMaxPrintCount);
  return s;
}

ArgSpec arg_spec(const json& a, std::size_t index) {
  const std::string field = fmt::format("args[{}]", index);
  if (!a.is_object() || a.size() != 1)
    bad(fmt::format("'{}' must be an object of one key, i32, u32, i64, u64, f32 or buffer, such as {{\"u32\": 5}}, not {}", field, shown(a)));
  const std::string type = a.begin().key();
  const json& v = a.begin().value();
  if (type == "buffer") {
    ArgSpec s;
    s.buffer = buffer_spec(v, field + ".buffer", index);
    return s;
  }
  if (type != "i32" && type != "u32" && type != "i64" && type != "u64" && type != "f32")
    bad(fmt::format("'{}' has an unknown type {}: i32, u32, i64, u64, f32 or buffer", field, shown(json(type))));
  return scalar_arg(type, v, field + "." + type);
}

std::vector<ArgSpec> arg_specs(const json& launch) {
  std::vector<ArgSpec> out;
  if (!launch.contains("args")) return out;
  const json& args = launch["args"];
  if (!args.is_array()) bad(fmt::format("'args' must be a list, not {}", shown(args)));
  std::uint64_t total = 0;
  std::set<std::string> names;
  for (std::size_t i = 0; i < args.size(); ++i) {
    out.push_back(arg_spec(args[i], i));
    if (!out.back().buffer) continue;
    const BufferSpec& b = *out.back().buffer;
    if (!names.insert(b.name).second) bad(fmt::format("two buffers are named {}", shown(json(b.name))));
    total += b.bytes;
    if (total > kMaxBufferBytes) bad(fmt::format("the buffers hold {} bytes together; at most {} (8 GiB)", total, kMaxBufferBytes));
  }
  return out;
}

// Shape rules the dimensions do not show one by one.
void check_shape(const LaunchSpec& s, const core::ArchSpec& arch) {
  const std::uint64_t threads = std::uint64_t{s.block[0]} * s.block[1] * s.block[2];
  if (threads > static_cast<std::uint64_t>(arch.max_threads_per_block))
    bad(fmt::format("'block' {} is {} threads; a block holds at most {}", dim_text(s.block), threads, arch.max_threads_per_block));
  const std::uint64_t cluster = std::uint64_t{s.cluster[0]} * s.cluster[1] * s.cluster[2];
  if (cluster > static_cast<std::uint64_t>(arch.max_cluster_size))
    bad(fmt::format("'cluster' {} is {} CTAs; a cluster holds at most {} ({} portable)", dim_text(s.cluster), cluster,
                    arch.max_cluster_size, arch.max_cluster_size_portable));
  for (int i = 0; i < 3; ++i)
    if (s.grid[i] % s.cluster[i])
      bad(fmt::format("'grid' {} is not a whole number of 'cluster' {} in dimension {}", dim_text(s.grid), dim_text(s.cluster), "xyz"[i]));
  const std::uint64_t ctas = std::uint64_t{s.grid[0]} * s.grid[1] * s.grid[2];
  if (ctas > kMaxCtas)
    bad(fmt::format("'grid' {} is {} CTAs; the virtual device runs at most {} per launch", dim_text(s.grid), ctas, kMaxCtas));
}

LaunchSpec launch_spec(const json& launch, const core::ArchSpec& arch) {
  if (!launch.is_object()) bad(fmt::format("must be a JSON object, not {}", shown(launch)));
  known_keys(launch, "the launch description", {"kernel", "grid", "block", "cluster", "dynamic_smem", "args"});
  LaunchSpec s;
  if (launch.contains("kernel")) s.kernel = text(launch["kernel"], "kernel");
  s.grid = dims(launch, "grid", 1, kMaxGrid);
  s.block = dims(launch, "block", 32, kMaxBlock);
  const std::uint32_t c = static_cast<std::uint32_t>(arch.max_cluster_size);
  s.cluster = dims(launch, "cluster", 1, {c, c, c});
  if (launch.contains("dynamic_smem"))
    s.dynamic_smem = static_cast<std::uint32_t>(whole(launch["dynamic_smem"], "dynamic_smem", 0, arch.smem_per_block_optin));
  s.args = arg_specs(launch);
  check_shape(s, arch);
  return s;
}

json parse_launch(const Options& o) {
  std::string text = o.launch;
  if (!text.empty() && text[0] != '{') text = read_file(o.launch, "--launch", kMaxLaunchBytes);
  try {
    return core::parse_user_json(text.empty() ? "{}" : text, "");  // a key twice: which one is meant?
  } catch (const json::exception& e) {
    bad(std::string("not JSON: ") + core::json_error_text(e));
  } catch (const Error& e) {
    bad(e.what());
  }
}

// A scalar wider than its parameter passes only when the parameter holds the same value: the
// launch copies the parameter's bytes, so 4294967296 given for a .u32 would arrive as 0.
bool fits(const ArgSpec& a, std::uint32_t size) {
  if (a.value.size() <= size) return a.value.size() == size;
  if (a.buffer || size == 0) return false;
  const bool negative = a.is_signed && (a.value[size - 1] & 0x80);
  for (std::size_t i = size; i < a.value.size(); ++i)
    if (a.value[i] != (negative ? 0xFF : 0x00)) return false;
  return true;
}

const emu::ptx::Kernel& pick_kernel(const emu::ptx::Module& m, LaunchSpec& s) {
  if (m.kernels.empty()) bad("the module defines no kernel (.entry)");
  if (s.kernel.empty() && m.kernels.size() > 1) bad("the module has several kernels: name one with \"kernel\"");
  if (s.kernel.empty()) s.kernel = m.kernels[0].name;
  const emu::ptx::Kernel* k = m.find(s.kernel);
  if (!k) bad(fmt::format("no kernel named {}", shown(json(s.kernel))));
  if (s.args.size() != k->params.size())
    bad(fmt::format("kernel {} takes {} parameters, the description gives {}", k->name, k->params.size(), s.args.size()));
  for (std::size_t i = 0; i < s.args.size(); ++i) {
    const std::uint32_t size = k->params[i].size;
    if (s.args[i].buffer && size != 8) bad(fmt::format("parameter {} of {} is {} bytes; a buffer is an 8-byte address", i, k->name, size));
    if (!s.args[i].buffer && !fits(s.args[i], size))
      bad(fmt::format("parameter {} of {} is {} bytes; the argument gives {}{}", i, k->name, size, s.args[i].value.size(),
                      s.args[i].value.size() > size ? " holding a value that does not fit" : ""));
  }
  return *k;
}

// ---- running

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
void fill(std::uint8_t* b, std::uint64_t n, const std::string& how, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  if (how == "zero") std::fill(b, b + n, 0);
  else if (how == "poison") std::fill(b, b + n, 0xFF);
  else if (how == "iota-i32" || how == "iota-f32" || how == "random-f32") {
    for (std::uint64_t i = 0; i + 4 <= n; i += 4) {
      std::uint32_t v;
      if (how == "iota-i32") v = static_cast<std::uint32_t>(i / 4);
      else {
        float f = how == "iota-f32" ? static_cast<float>(i / 4) : u(rng);
        std::memcpy(&v, &f, 4);
      }
      std::memcpy(b + i, &v, 4);
    }
  } else {
    for (std::uint64_t i = 0; i + 2 <= n; i += 2) {
      std::uint16_t h = how == "random-bf16" ? core::to_bf16(u(rng)) : core::to_f16(u(rng));
      std::memcpy(b + i, &h, 2);
    }
  }
}

std::vector<Arg> make_args(const LaunchSpec& spec, emu::Device& dev) {
  std::vector<Arg> out;
  for (const ArgSpec& s : spec.args) {
    Arg arg;
    arg.value = s.value;
    if (s.buffer) {
      const BufferSpec& b = *s.buffer;
      arg.bytes = b.bytes;
      arg.name = b.name;
      arg.print_as = b.print_as;
      arg.print_count = b.print_count;
      arg.device = dev.memory().alloc(arg.bytes);
      fill(dev.memory().find(arg.device, arg.bytes), arg.bytes, b.fill, b.seed);
      arg.value = bytes_of(arg.device);
    }
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

std::string kernel_ptx(const Options& o) {
  if (o.ptx_file.empty() == o.mlir_file.empty()) refuse("give one of --ptx FILE or --mlir FILE");
  if (!o.ptx_file.empty()) return read_file(o.ptx_file, "--ptx", kMaxSourceBytes);
  const core::ArchSpec& arch = core::parse_arch(o.arch);
  if (arch.name != std::string_view("sm_90a") && arch.name != std::string_view("sm_100a"))
    refuse(fmt::format("the virtual device presents sm_90a or sm_100a, not {}", arch.name));
  core::CompileOptions copts = core::CompileOptions::from_environment();
  copts.source_name = o.mlir_file;  // a parse error names the file and line, not "-"
  core::CompileResult r = core::compile_module(read_file(o.mlir_file, "--mlir", kMaxSourceBytes), arch, copts);
  if (r.units.size() != 1) refuse(fmt::format("{} has {} gpu.modules; emulate takes one", o.mlir_file, r.units.size()));
  return r.units[0].ptx;
}

emu::LoadedModule& load(emu::Device& dev, const std::string& ptx) {
  try {
    return dev.load(ptx);
  } catch (const emu::ptx::ParseError& e) {
    refuse(fmt::format("the PTX does not parse: {}", e.what()));
  } catch (const emu::Fault& f) {
    refuse(fmt::format("the virtual device cannot run this PTX: {}", f.report.format()));
  }
}

// The virtual device's targets and PTX ISA versions (core/emu/ptx/directives.h).
void check_directives(const emu::ptx::Module& m, const std::string& source) {
  if (std::optional<emu::ptx::DirectiveProblem> p = emu::ptx::check_directives(m)) refuse(fmt::format("{}: {}", source, p->message));
}

// The limits of the arch the kernel runs as: --arch for --mlir, the PTX's .target otherwise.
const core::ArchSpec& limits_arch(const Options& o, const std::string& target) {
  if (!o.mlir_file.empty()) return core::parse_arch(o.arch);
  for (const core::ArchSpec& a : core::all_archs())
    if (a.name == target) return a;
  return core::parse_arch("sm_90a");
}

std::uint64_t step_limit(const Options& o) {
  if (o.step_limit) return static_cast<std::uint64_t>(o.step_limit);
  try {
    return emu::step_limit_from_environment();
  } catch (const std::invalid_argument& e) {
    refuse(e.what());
  }
}

// The virtual device's knobs (core/emu/environment.h), read as verify and matmul read them:
// every one checked before anything runs (a typo is exit 2 naming the variable, never the
// default), and MGPU_EMU_SEED / MGPU_EMU_RACES taken where --seed / --races / --no-races are
// not given. MGPU_EMU_REPORTS says where the driver library prints findings; emulate prints
// them as its result either way.
void read_environment(Options& o) {
  try {
    emu::check_environment();
    o.first_seed = o.seed_given ? static_cast<std::uint64_t>(o.seed) : emu::seed_from_environment();
    if (!o.races_given) o.races = emu::races_from_environment();
  } catch (const std::invalid_argument& e) {
    refuse(e.what());
  }
  const std::uint64_t more = static_cast<std::uint64_t>(o.schedules) - 1;
  if (more > UINT64_MAX - o.first_seed)
    refuse(fmt::format("MGPU_EMU_SEED={} with --schedules {}: the seeds would run past 18446744073709551615, the largest",
                       o.first_seed, o.schedules));
}

emu::LaunchConfig launch_config(const Options& o, const LaunchSpec& spec, std::int64_t schedule) {
  emu::LaunchConfig c;
  for (int i = 0; i < 3; ++i) {
    c.grid[i] = spec.grid[i];
    c.block[i] = spec.block[i];
    c.cluster[i] = spec.cluster[i];
  }
  c.dynamic_smem = spec.dynamic_smem;
  c.seed = o.first_seed + static_cast<std::uint64_t>(schedule);
  c.detect_races = o.races;
  c.step_limit = step_limit(o);
  return c;
}

// A launch the device refuses before running a thread (a report with no PTX line: .reqntid,
// shared memory past the block's maximum, a .reqnctapercluster the grid does not divide) is the
// description's fault, as the driver answers CUDA_ERROR_INVALID_VALUE for it.
void check_refused(const emu::LaunchResult& r) {
  if (!r.ok && !r.reports.empty() && r.reports.front().kind == emu::ReportKind::Unsupported && r.reports.front().where.line < 0)
    bad("the virtual device refuses this launch: " + r.reports.front().message);
}

void run(Options& o) {
  read_environment(o);
  const std::string ptx = kernel_ptx(o);
  const json launch = parse_launch(o);
  LaunchSpec spec;
  {
    emu::Device probe;
    const emu::LoadedModule& m = load(probe, ptx);
    check_directives(m.ptx, o.ptx_file.empty() ? "the PTX compiled from " + o.mlir_file : o.ptx_file);
    spec = launch_spec(launch, limits_arch(o, m.ptx.target));
    pick_kernel(m.ptx, spec);
  }
  json results = json::array();
  int with_findings = 0;
  for (std::int64_t s = 0; s < o.schedules; ++s) {
    // A fresh device per schedule, the module loaded again: every schedule starts from the same
    // inputs, .global variables from their initializers included.
    emu::Device dev;
    emu::LoadedModule& mod = load(dev, ptx);
    std::vector<Arg> args = make_args(spec, dev);
    std::vector<void*> ptrs;
    for (Arg& a : args) ptrs.push_back(a.value.data());
    const emu::LaunchConfig c = launch_config(o, spec, s);
    emu::LaunchResult r = dev.launch(mod, spec.kernel, c, ptrs.data());
    check_refused(r);
    json one = json::parse(emu::launch_json(r));
    one["seed"] = c.seed;
    json buffers = json::object();
    for (const Arg& a : args)
      if (!a.print_as.empty() && r.ok) buffers[a.name] = print_buffer(dev, a);
    if (!buffers.empty()) one["buffers"] = buffers;
    // Notes (legal behaviour worth knowing, e.g. a TMA store box wholly outside its tensor) are
    // printed but are no findings, as `verify` treats them.
    const std::size_t findings = emu::count_findings(r.reports);
    const std::size_t notes = r.reports.size() - findings;
    with_findings += !r.ok || findings > 0;
    if (!o.json_out) {
      std::string verdict = !r.ok ? "FAILED" : findings ? fmt::format("{} finding(s)", findings) : "clean";
      if (notes) verdict += fmt::format(" ({} note(s))", notes);
      fmt::print("schedule {} (seed {}): {}, {} warp-instructions\n", s + 1, c.seed, verdict, r.instructions);
      if (!r.printf_output.empty()) fmt::print("{}", r.printf_output);
      for (const auto& rep : r.reports) fmt::print("  {}\n", rep.format());
      if (r.banks.total.accesses) fmt::print("  {}\n", bank_summary(r.banks));
      for (auto& [name, values] : buffers.items()) fmt::print("  {} = {}\n", name, values.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    results.push_back(std::move(one));
  }
  if (o.json_out)
    std::cout << json{{"kernel_source", o.ptx_file.empty() ? o.mlir_file : o.ptx_file}, {"schedules", results},
                      {"races_checked", o.races}, {"with_findings", with_findings}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  else
    fmt::print("{} of {} schedules clean{}\n", o.schedules - with_findings, o.schedules, o.races ? " (races checked)" : "");
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
      "schedule has a finding; notes, such as a TMA store box wholly outside its tensor, do not count)");
  cmd->add_option("--ptx", o->ptx_file, "PTX file to run");
  cmd->add_option("--mlir", o->mlir_file, "MLIR module (one gpu.module) compiled through the MGPU backend, then run");
  cmd->add_option("--arch", o->arch, "Architecture to compile --mlir for: sm_90a or sm_100a");
  cmd->add_option("--launch", o->launch,
                  "Launch description, a file or inline JSON: {\"kernel\": NAME, \"grid\": [x,y,z], \"block\": [x,y,z], "
                  "\"cluster\": [x,y,z], \"dynamic_smem\": BYTES, \"args\": [{\"u32\": 5}, {\"f32\": 1.5}, {\"buffer\": "
                  "{\"bytes\": N, \"fill\": \"zero|poison|iota-i32|iota-f32|random-f32|random-bf16|random-f16\", \"seed\": S, "
                  "\"name\": \"c\", \"print\": \"i32|f32|bf16|f16\", \"print_count\": 16}}]} (scalars also i32, u64, i64; "
                  "CUDA's launch limits apply, and at most 2^20 CTAs)");
  auto* seed = cmd->add_option("--seed", o->seed,
                               "First scheduler seed (seeds divisible by 4 land async operations at the latest moment, odd "
                               "seeds hand over to woken waiters at once); default MGPU_EMU_SEED, else 1 -- the option wins "
                               "over the variable")
                    ->check(whole_number(0));
  cmd->add_option("--schedules", o->schedules, "Schedules to run, seeds --seed, --seed+1, ...")->check(whole_number(1, 10000));
  cmd->add_option("--step-limit", o->step_limit,
                  fmt::format("Warp-instructions a launch may run before it is a step-limit finding (an endless loop); "
                              "default MGPU_EMU_STEP_LIMIT, else {}",
                              emu::kDefaultStepLimit))
      ->check(whole_number(1));
  auto* races = cmd->add_flag("--races,!--no-races", o->races,
                              "Also detect data races between threads (vector clocks; slower), or not; default "
                              "MGPU_EMU_RACES (1: on, 0 or unset: off) -- the flag wins over the variable");
  cmd->add_flag("--json", o->json_out, "Print JSON");
  cmd->footer(std::string("Environment: MGPU_EMU_SEED, MGPU_EMU_RACES, MGPU_EMU_STEP_LIMIT and MGPU_EMU_REPORTS are read\n"
                          "strictly, as verify and matmul read them: a value a knob does not take is exit 2 naming it.\n"
                          "--seed, --races/--no-races and --step-limit win over the variables. Findings are emulate's\n"
                          "output whatever MGPU_EMU_REPORTS (where the driver library prints them) says.\n") +
              kExitCodesHelp);  // replacing the footer drops the inherited one: say it again
  cmd->callback([o, seed, races] {
    o->seed_given = seed->count() > 0;
    o->races_given = races->count() > 0;
    run(*o);
  });
}

}  // namespace mgpu::harness
