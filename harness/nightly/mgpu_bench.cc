#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <regex.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "core/cuda_driver.h"
#include "core/device_query.h"
#include "core/error.h"
#include "core/input_file.h"
#include "harness/nightly/mgpu_bench.h"

#include <sys/stat.h>
#include "harness/exit_codes.h"
#include "harness/measure/cuda_measurer.h"
#include "harness/measure/measure_trial.h"
#include "harness/measure/trial_record.h"
#include "harness/measure/worker.h"
#include "harness/nightly/pack_suite.h"
#include "harness/nightly/suite.h"
#include "harness/hide_benchmark_env.h"
#include "harness/option_checks.h"
#include "harness/parse_error_text.h"
#include "harness/pack/export_pack.h"
#include "harness/stop_signals.h"
#include "harness/version.h"
#include "harness/current_templates.h"
#include "results/database.h"
#include "results/output_file.h"

namespace mgpu::harness {
namespace {

struct Options {
  std::string db, configs, pack, device = "cuda", timer = "auto";
  bool include_model = false, no_record = false;
};

std::string tune_executable() {
  if (const char* e = std::getenv("MGPU_TUNE_EXE"); e && *e) return e;
  return (std::filesystem::path(executable_path()).parent_path() / "mgpu-tune").string();
}

// A Google Benchmark flag as Initialize() will read it: its environment variable
// (BENCHMARK_REPETITIONS for benchmark_repetitions) unless the command line gives
// --NAME=VALUE, the last one winning. Read before Initialize(), which exits 0 with its usage on
// a bad --benchmark_format and hands other bad values on unchecked (a negative repetition count
// aborts it).
struct BenchmarkFlag {
  std::string value, source;  // source: "--NAME" or the environment variable's name
};
std::optional<BenchmarkFlag> benchmark_flag(int argc, char** argv, const std::string& name) {
  std::optional<BenchmarkFlag> found;
  std::string env = name;
  for (char& c : env) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // Not V for --v: hidden from Google Benchmark (harness/hide_benchmark_env.h), so not its input.
  if (const char* e = name == "v" ? nullptr : std::getenv(env.c_str())) found = BenchmarkFlag{e, env};
  const std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::string a = argv[i]; a.rfind(prefix, 0) == 0) found = BenchmarkFlag{a.substr(prefix.size()), "--" + name};
  return found;
}

// Whether the Google Benchmark linked (MGPU_BENCHMARK_VERSION, from its CMake package) takes
// --benchmark_min_time=Ns or Nx: version 1.8 or later.
bool benchmark_takes_min_time_suffixes() {
  int major = 0, minor = 0;
  if (std::sscanf(MGPU_BENCHMARK_VERSION, "%d.%d", &major, &minor) != 2) return false;
  return major > 1 || (major == 1 && minor >= 8);
}

std::optional<double> finite_number(const std::string& s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

[[noreturn]] void bad_benchmark_flag(const BenchmarkFlag& f, const std::string& want) {
  throw core::Error(core::ErrorKind::InvalidInput, fmt::format("{} must be {}, got '{}'", f.source, want, f.value));
}

// Google Benchmark's flags that take a value. Given empty on the command line, each was taken
// as no value at all (--benchmark_out= wrote no file, with exit 0), where an empty value of any
// other option is bad input.
constexpr const char* kValueFlags[] = {"benchmark_filter",     "benchmark_min_time",   "benchmark_min_warmup_time",
                                       "benchmark_repetitions", "benchmark_format",    "benchmark_out",
                                       "benchmark_out_format",  "benchmark_color",     "benchmark_perf_counters",
                                       "benchmark_context",     "benchmark_time_unit"};

void refuse_empty_values(int argc, char** argv) {
  for (const char* name : kValueFlags) {
    const std::string given = fmt::format("--{}=", name);
    for (int i = 1; i < argc; ++i)
      if (argv[i] == given)
        throw core::Error(core::ErrorKind::InvalidInput,
                          fmt::format("--{}: an empty value ('') is not taken: give one, or leave the option out", name));
  }
}

// Checks the Google Benchmark flags that would crash it, be taken silently or end it with
// exit 0; returns --benchmark_out (empty: none).
std::string check_benchmark_flags(int argc, char** argv) {
  refuse_empty_values(argc, argv);
  if (auto f = benchmark_flag(argc, argv, "benchmark_repetitions")) {
    // Each repetition is a measurement on the GPU, and Google Benchmark reserves room for all of
    // them up front: a count in the millions is a typo that would exhaust memory.
    constexpr long kMaxRepetitions = 10000;
    long n = 0;
    auto [end, ec] = std::from_chars(f->value.data(), f->value.data() + f->value.size(), n);
    if (f->value.empty() || ec != std::errc() || end != f->value.data() + f->value.size() || n < 1 ||
        n > kMaxRepetitions)
      bad_benchmark_flag(*f, fmt::format("a whole number between 1 and {}", kMaxRepetitions));
  }
  if (auto f = benchmark_flag(argc, argv, "benchmark_min_time")) {
    // Google Benchmark takes Ns (seconds) and Nx (iterations) from 1.8 on; the one linked here
    // (its version from CMake) decides, so a value it would refuse with its own words and an
    // unexpected-argument error (round 19, F42) is said here first.
    const bool suffixes = benchmark_takes_min_time_suffixes();
    std::string number = f->value;
    const bool iterations = suffixes && !number.empty() && number.back() == 'x';
    if (suffixes && !number.empty() && (number.back() == 's' || iterations)) number.pop_back();
    std::optional<double> v = finite_number(number);
    if (!v || *v <= 0 || (iterations && *v != std::floor(*v)))
      bad_benchmark_flag(*f, suffixes ? "a positive number of seconds, Ns, or a whole number of iterations Nx"
                                      : fmt::format("a positive number of seconds (the Google Benchmark linked, {}, "
                                                    "takes no Ns or Nx: those came with 1.8)", MGPU_BENCHMARK_VERSION));
  }
  if (auto f = benchmark_flag(argc, argv, "v")) {  // its log verbosity, a 32-bit integer
    int n = 0;
    auto [end, ec] = std::from_chars(f->value.data(), f->value.data() + f->value.size(), n);
    if (f->value.empty() || ec != std::errc() || end != f->value.data() + f->value.size())
      bad_benchmark_flag(*f, "a whole number (Google Benchmark's log verbosity)");
  }
  if (auto f = benchmark_flag(argc, argv, "benchmark_min_warmup_time")) {
    // Google Benchmark warms up by calling the benchmark, with ever more iterations, until the
    // time is spent -- regardless of Iterations(1). Here each iteration is a whole measurement
    // (in the worker, verified, recorded as a trial) that warms its kernel up itself, so a warm-up
    // only repeated measurements and recorded them: 0.5 s on the model was 100,000 trials and
    // ten minutes, 1e300 never ended. Only "no warm-up" is taken.
    std::optional<double> v = finite_number(f->value);
    if (!v || *v != 0)
      bad_benchmark_flag(*f, "0 (or left out): each benchmark iteration is a whole measurement that warms its kernel up "
                             "itself (two launches before its samples), so Google Benchmark's warm-up would only repeat "
                             "measurements, recording each as a trial, until its time was spent");
  }
  for (const char* name : {"benchmark_format", "benchmark_out_format"})
    if (auto f = benchmark_flag(argc, argv, name); f && f->value != "console" && f->value != "json" && f->value != "csv")
      bad_benchmark_flag(*f, "console, json or csv");
  // Google Benchmark ends with its usage and exit 0 on a unit it does not know (or an empty
  // color): a nightly job with a typo measured nothing and passed.
  if (auto f = benchmark_flag(argc, argv, "benchmark_time_unit");
      f && f->value != "ns" && f->value != "us" && f->value != "ms" && f->value != "s")
    bad_benchmark_flag(*f, "ns, us, ms or s");
  // Google Benchmark takes any other word for a switch as true (round 19, F44:
  // --benchmark_list_tests=maybe listed, --benchmark_color=purple colored): the words it means.
  auto is_switch_word = [](std::string v) {
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* w : {"true", "false", "yes", "no", "on", "off", "1", "0", "t", "f", "y", "n"})
      if (v == w) return true;
    return false;
  };
  for (const char* name : {"benchmark_list_tests", "benchmark_report_aggregates_only", "benchmark_display_aggregates_only",
                           "benchmark_enable_random_interleaving"})
    if (auto f = benchmark_flag(argc, argv, name); f && !is_switch_word(f->value))
      bad_benchmark_flag(*f, "true or false (or yes/no, on/off, 1/0)");
  if (auto f = benchmark_flag(argc, argv, "benchmark_color"); f && f->value != "auto" && !is_switch_word(f->value))
    bad_benchmark_flag(*f, "auto, true or false");
  // A filter that is no regular expression Google Benchmark said as matching nothing ("--benchmark_filter
  // matches none of the suite's benchmarks"), as a typo-free empty suite would be (round 20, F58).
  // It reads the filter as a POSIX extended expression; a leading '-' negates it.
  if (auto f = benchmark_flag(argc, argv, "benchmark_filter")) {
    const std::string re = !f->value.empty() && f->value[0] == '-' ? f->value.substr(1) : f->value;
    regex_t compiled;
    const int rc = ::regcomp(&compiled, re.c_str(), REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
      char why[256];
      ::regerror(rc, &compiled, why, sizeof why);
      bad_benchmark_flag(*f, fmt::format("a regular expression (POSIX extended; {})", why));
    }
    ::regfree(&compiled);
  }
  auto out = benchmark_flag(argc, argv, "benchmark_out");
  return out ? out->value : "";
}

// --benchmark_out over what the suite is read from (the --configs file, or any export file of a
// --configs folder: by name, symlink or hard link) is refused, as is a new .json file in that
// folder: the next `--configs FOLDER` would read Google Benchmark's JSON as an export and refuse
// the whole suite. Only the exact-file check was made before, so a folder's export was overwritten.
void refuse_export_path(const std::string& out, const std::string& configs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  try {
    files = export_files(configs);
  } catch (const core::Error&) {
    return;  // no suite to overwrite: said, as it is, when the suite is read
  }
  for (const std::string& f : files) results::refuse_database_path(out, {f}, "the --configs export");
  if (fs::is_directory(configs, ec) && fs::path(out).extension() == ".json" &&
      fs::equivalent(fs::absolute(out, ec).parent_path(), configs, ec))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("refusing to write {}: it is in the --configs folder {}, whose .json files are the "
                                  "suite's exports (the next --configs {} would read it as one): write it elsewhere",
                                  out, configs, configs));
}

// --benchmark_out over the --pack library, or anywhere inside a --pack folder (Google Benchmark
// truncates it before anything runs: the pack's manifest or a source would be gone, round 18,
// F16), is refused.
void refuse_pack_path(const std::string& out, const std::string& pack) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(pack, ec)) return results::refuse_database_path(out, {pack}, "the --pack library");
  const fs::path folder = fs::weakly_canonical(fs::absolute(pack), ec);
  const fs::path file = fs::weakly_canonical(fs::absolute(out), ec);
  const auto [end, rest] = std::mismatch(folder.begin(), folder.end(), file.begin(), file.end());
  if (end == folder.end())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("refusing to write {}: it is inside the --pack folder {}, whose files are the pack: "
                                  "write it elsewhere", out, pack));
  // A hard link outside the folder to one of its files is that file (round 19, F26: the
  // manifest was truncated through one, exit 0).
  struct stat o {};
  if (::stat(out.c_str(), &o) != 0 || !S_ISREG(o.st_mode) || o.st_nlink < 2) return;
  for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat f {};
    if (::lstat(it->path().c_str(), &f) == 0 && S_ISREG(f.st_mode) && f.st_dev == o.st_dev && f.st_ino == o.st_ino)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("refusing to write {}: it is a hard link to {}, a file of the --pack folder {}: "
                                    "write it elsewhere", out, it->path().string(), pack));
  }
}

// Google Benchmark's reporter for --benchmark_out, which notes whether the file took all it was
// given: Google Benchmark itself never looks (a full disk, /dev/full, ended in exit 0).
template <class Base>
class CheckedFileReporter : public Base {
 public:
  template <class... Args>
  explicit CheckedFileReporter(bool* write_failed, Args... args) : Base(args...), write_failed_(write_failed) {}
  void Finalize() override {
    Base::Finalize();
    std::ostream& out = this->GetOutputStream();
    out.flush();
    *write_failed_ = out.fail();
  }

 private:
  bool* write_failed_;
};

std::unique_ptr<benchmark::BenchmarkReporter> file_reporter(const std::string& format, bool* write_failed) {
  if (format == "console")
    return std::make_unique<CheckedFileReporter<benchmark::ConsoleReporter>>(write_failed,
                                                                             benchmark::ConsoleReporter::OO_None);
  if (format == "csv") {
    // Deprecated upstream, but --benchmark_out_format=csv still means it while Google Benchmark has it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return std::make_unique<CheckedFileReporter<benchmark::CSVReporter>>(write_failed);
#pragma GCC diagnostic pop
  }
  return std::make_unique<CheckedFileReporter<benchmark::JSONReporter>>(write_failed);
}

bool listing_only(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--benchmark_list_tests" || a == "--benchmark_list_tests=true" || a == "--benchmark_list_tests=1")
      return true;
  }
  return false;
}

// Google Benchmark's console report begins with its own context on std::cerr, and Debian's
// libbenchmark, built without NDEBUG, adds "***WARNING*** Library was built as DEBUG. Timings
// may be affected." to every run. That warning is about Google Benchmark timing the benchmark
// function itself; here every time is a manual time the harness measured on the GPU (CUPTI or
// events), which the library's build does not touch, so the line misled (round 19, F42). This
// buffer passes std::cerr through line by line and drops that one line.
class DropLineBuf : public std::streambuf {
 public:
  DropLineBuf(std::streambuf* to, std::string line) : to_(to), drop_(std::move(line)) {}
  ~DropLineBuf() override { flush_line(); }

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    line_.push_back(static_cast<char>(c));
    if (c == '\n') flush_line();
    return c;
  }
  int sync() override {
    // A partial line is kept until its end comes: the line to drop may arrive in pieces.
    return to_->pubsync();
  }

 private:
  void flush_line() {
    if (!line_.empty() && line_ != drop_) to_->sputn(line_.data(), static_cast<std::streamsize>(line_.size()));
    line_.clear();
  }
  std::streambuf* to_;
  std::string drop_, line_;
};

// std::cerr goes through DropLineBuf while this lives.
class DebugBannerFilter {
 public:
  DebugBannerFilter()
      : old_(std::cerr.rdbuf()), buf_(old_, "***WARNING*** Library was built as DEBUG. Timings may be affected.\n") {
    std::cerr.rdbuf(&buf_);
  }
  ~DebugBannerFilter() {
    std::cerr.flush();
    std::cerr.rdbuf(old_);
  }
  DebugBannerFilter(const DebugBannerFilter&) = delete;
  DebugBannerFilter& operator=(const DebugBannerFilter&) = delete;

 private:
  std::streambuf* old_;
  DropLineBuf buf_;
};

struct BenchStopped {};  // thrown out of a benchmark when a stop signal came

int run(int argc, char** argv) {
  const bool listing = listing_only(argc, argv);
  bool help = false;
  for (int i = 1; i < argc; ++i) help = help || std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h";
  CLI::App app{"mgpu-bench: measure the configs production uses (the nightly suite) as Google Benchmark "
               "benchmarks, one per template/problem. Google Benchmark's flags work as usual: "
               "--benchmark_filter=REGEX, --benchmark_repetitions=N, --benchmark_out=FILE "
               "--benchmark_out_format=json, --benchmark_list_tests. Exit 0: every benchmark measured and verified "
               "(or, with --device model, predicted); 1: some failed, or --benchmark_out could not be written; 3: no GPU for the suite, or the database "
               "holds only predictions (nothing measured, no run recorded)."};
  Options o;
  app.add_option("--db", o.db, "Results database: the suite's source (its best verified configs; one the virtual "
                               "device failed is left out) and where tonight's measurements are recorded as a "
                               "'bench' run. Each benchmark's label names its config's verification (hardware, "
                               "virtual or none)");
  app.add_option("--configs", o.configs, "Take the suite from a JSON export (file or folder from "
                                         "'mgpu-tune export --format json') instead of --db");
  app.add_option("--pack", o.pack, "Measure a kernel pack as shipped (a folder from 'mgpu-tune export --format pack', "
                                   "built here with cmake, or its built libmgpu_pack.so): every entry of this GPU's "
                                   "arch through the pack's own C ABI at its own problem, verified against cuBLASLt. "
                                   "With --db the times are recorded there (entries built by the current template "
                                   "versions), so the nightly compares them as any suite; in this process, not a worker");
  app.add_option("--device", o.device, "cuda (measure on this GPU) or model (predictions, labelled so)")
      ->capture_default_str();
  app.add_option("--timer", o.timer, "cupti, events or auto (CUPTI when it loads)")->capture_default_str();
  app.add_flag("--include-model", o.include_model, "With --db: also take configs that were only predicted");
  app.add_flag("--no-record", o.no_record, "Do not record the measurements in --db");
  app.name("mgpu-bench");
  app.set_version_flag("--version", version_string() + ", Google Benchmark " MGPU_BENCHMARK_VERSION);
  check_every_option(app);
  app.footer(kExitCodesHelp);
  if (help) {  // Google Benchmark's --help prints only its own flags and exits: ours first, then its
    std::fputs(app.help().c_str(), stdout);
    std::puts("\nGoogle Benchmark's flags:");
    benchmark::PrintDefaultHelp();
    return 0;
  }
  const std::string benchmark_out = check_benchmark_flags(argc, argv);
  const std::string benchmark_out_format = [&] {
    auto f = benchmark_flag(argc, argv, "benchmark_out_format");
    return f ? f->value : std::string("json");
  }();
  const bool time_unit_given = benchmark_flag(argc, argv, "benchmark_time_unit").has_value();
  {
    HiddenBenchmarkEnv no_v;             // it reads its flags' variables again, `V` among them
    benchmark::Initialize(&argc, argv);  // takes its --benchmark_* flags out of argv
  }
  // Microseconds (a kernel takes tens of them to milliseconds) unless --benchmark_time_unit says
  // otherwise: as the default, not each benchmark's Unit(), which overrode the flag.
  if (!time_unit_given) benchmark::SetDefaultTimeUnit(benchmark::kMicrosecond);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Prefixed and worded as every other refusal (CLI11's own "The following argument was not
    // expected" came bare, round 19, F42).
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "mgpu-bench: error: %s\nRun with --help for usage.\n", parse_error_text(app, e).c_str());
    return core::kExitBadInput;
  }
  if (o.db.empty() && o.configs.empty() && o.pack.empty())
    throw core::Error(core::ErrorKind::InvalidInput,
                      "give --db FILE (or --configs EXPORT, or --pack PACK) to say what to benchmark");
  // The device's name first: a typo is said as such, not as the --pack rule below (round 18, F24).
  if (o.device != "cuda" && o.device != "model")
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("unknown device '{}': choose cuda or model", o.device));
  if (!o.pack.empty()) {
    // A pack holds compiled kernels to run as they are: nothing to predict, and its entries are
    // what it ships, not a database's or an export's choice.
    if (!o.configs.empty())
      throw core::Error(core::ErrorKind::InvalidInput, "--pack and --configs are two suites: give one");
    if (o.device != "cuda")
      throw core::Error(core::ErrorKind::InvalidInput, "--pack runs the pack's kernels on a GPU: --device model predicts "
                                                       "configs and runs none");
    if (o.include_model)
      throw core::Error(core::ErrorKind::InvalidInput, "--include-model chooses a database's configs; with --pack the "
                                                       "pack's entries are the suite (--db only records them)");
  }
  check_timer_choice(o.timer);
  // Google Benchmark truncates --benchmark_out before it runs anything: the database (or the
  // export the suite is read from) would be gone before a single check of ours.
  if (!benchmark_out.empty()) {
    try {
      if (!o.db.empty()) results::refuse_database_path(benchmark_out, {o.db});
      if (!o.configs.empty()) refuse_export_path(benchmark_out, o.configs);
      if (!o.pack.empty()) refuse_pack_path(benchmark_out, o.pack);
    } catch (const core::Error& e) {
      throw core::Error(e.kind(), fmt::format("--benchmark_out: {}", e.what()));
    }
    // What Google Benchmark cannot open it says only after the whole suite ran, as a bare
    // "invalid file name"; a FIFO no program reads would block its open forever. Said first.
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(benchmark_out, ec);
    if (std::filesystem::is_directory(st))
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("--benchmark_out {} is a folder: give a file path", benchmark_out));
    const std::filesystem::path parent = std::filesystem::absolute(benchmark_out, ec).parent_path();
    if (!std::filesystem::exists(st) && !std::filesystem::is_directory(parent, ec))
      throw core::Error(core::ErrorKind::InvalidInput,
                        std::filesystem::exists(parent, ec)
                            ? fmt::format("--benchmark_out {}: {} is a file, not a folder", benchmark_out, parent.string())
                            : fmt::format("--benchmark_out {}: the folder {} does not exist", benchmark_out,
                                          parent.string()));
    // A file that cannot be created or written (a read-only disk, a name too long, no inode
    // left) Google Benchmark said as a bare "invalid file name", exit 1, once the suite had run
    // (round 20, F58). Tried now: a new file is created and removed again, an existing one is
    // opened without truncating it. The disk's failure is exit 1, the path's exit 2.
    if (!std::filesystem::exists(st) || std::filesystem::is_regular_file(st)) {
      const bool is_new = !std::filesystem::exists(st);
      const int fd = ::open(benchmark_out.c_str(), is_new ? O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC : O_WRONLY | O_CLOEXEC,
                            0644);
      if (fd < 0) {
        const int err = errno;
        throw core::Error(results::environment_errno(err) ? core::ErrorKind::IO : core::ErrorKind::InvalidInput,
                          fmt::format("--benchmark_out {}: cannot {} it ({})", benchmark_out,
                                      is_new ? "create" : "write", std::strerror(err)));
      }
      ::close(fd);
      if (is_new) ::unlink(benchmark_out.c_str());
    }
    // Held open to the end: the reader sees the end of the file only when the suite is written.
    static const int fifo = core::open_output_fifo(benchmark_out, "--benchmark_out");
    (void)fifo;
  }
  std::string skipped;
  std::optional<KernelPack> pack;
  if (!o.pack.empty()) {
    // The database only records a pack's times: one that cannot be read is said before the pack is built.
    if (!o.db.empty()) results::Store::open(o.db, results::OpenMode::ReadOnly);
    if (is_pack_folder(o.pack)) fmt::print(stderr, "mgpu-bench: building the pack {} ...\n", o.pack);
    // A stop while the pack builds ends the build (its process group) and removes its temporary
    // folder, then exits 130/143 saying so (round 18, F17).
    install_stop_handlers();
    try {
      pack.emplace(KernelPack::open(o.pack));
    } catch (const core::Error&) {
      if (!stop_requested()) throw;
      fmt::print(stderr, "mgpu-bench: stopped by SIG{} while the pack was built: nothing was measured\n",
                 sigabbrev_np(stop_exit_code() - 128));
      return stop_exit_code();
    }
  }
  std::vector<SuiteEntry> suite = pack                ? pack->entries()
                                  : o.configs.empty() ? suite_from_database(o.db, o.include_model, &skipped)
                                                      : suite_from_export(o.configs);
  if (!skipped.empty()) fmt::print(stderr, "mgpu-bench: {}\n", skipped);
  if (suite.empty() && pack)
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("nothing to benchmark: the pack {} holds no matmul entry", o.pack));
  if (suite.empty() && o.configs.empty()) {
    // Predictions alone are no baseline to hold a GPU to: the suite needs configs measured on
    // one (its own exit code); anything else the database lacks is said as it is.
    const NoSuite none = why_no_suite(o.db, o.include_model);
    if (none.only_predicted) {
      fmt::print(stderr, "mgpu-bench: {}: nothing was measured\n", none.why);
      return kExitNothingMeasured;
    }
    throw core::Error(core::ErrorKind::InvalidInput, "nothing to benchmark: " + none.why);
  }
  if (suite.empty())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("nothing to benchmark: {} holds no config", o.configs));

  // Which entries this machine can measure: those of the GPU's arch (or all, predicted).
  core::DeviceReport report;
  const core::GpuInfo* gpu = nullptr;
  if (o.device == "cuda" && !listing) {
    report = core::query_devices();
    std::vector<SuiteEntry> runnable;
    for (const core::GpuInfo& g : report.gpus)
      for (const SuiteEntry& e : suite)
        if (g.arch && g.arch->name == core::parse_arch(e.arch).name) {
          gpu = &g;
          runnable.push_back(e);
        }
    // The virtual device (MGPU_CUDA_DRIVER) has no clock: nothing it ran would be a time, and a
    // failure there says nothing of the config (a nightly false alarm).
    const bool virtual_device = gpu && core::CudaDriver::get().emulated();
    if (!gpu || virtual_device) {
      std::string why = virtual_device ? "the CUDA driver loaded is the virtual device (MGPU_CUDA_DRIVER), which has no clock"
                        : report.gpus.empty() ? report.unavailable.value_or("no GPU")
                                              : fmt::format("no GPU of the suite's arch among the {} found", report.gpus.size());
      fmt::print(stderr, "mgpu-bench: no GPU to run the suite on ({}): nothing was measured\n", why);
      return kExitNothingMeasured;
    }
    if (runnable.size() < suite.size())
      fmt::print(stderr, "mgpu-bench: {} of {} entries are for another arch than this {}: skipped\n",
                 suite.size() - runnable.size(), suite.size(), gpu->name);
    suite = std::move(runnable);
  }

  // A database the measurements cannot be recorded in is said before anything is measured
  // (round 19, F47: a read-only one was refused after the whole suite had run); nothing is
  // opened or changed for it (a night that measures nothing leaves the file as it was).
  if (!o.db.empty() && !o.no_record && !listing) results::check_database_writable(o.db);

  // The bench run is begun by its first measurement: a night that measured nothing (a filter
  // matching no benchmark, ...) leaves no empty run behind to become tomorrow's baseline.
  std::optional<results::Store> store;
  std::int64_t run_id = 0;
  std::string args = "mgpu-bench";
  for (int i = 1; i < argc; ++i) args += std::string(" ") + argv[i];
  const bool recording = !o.db.empty() && !o.no_record && !listing;
  auto record = [&](const results::TrialRecord& trial) {
    if (!store) {
      store.emplace(results::Store::open(o.db, results::OpenMode::ReadWrite));
      run_id = store->begin_run("bench", args, version_string());
    }
    results::TrialRecord t = trial;
    t.run_id = run_id;
    store->record_trial(t);
  };
  std::shared_ptr<WorkerProcess> worker;
  if (o.device == "cuda" && !listing && !pack)
    worker = std::make_shared<WorkerProcess>(std::vector<std::string>{tune_executable(), "worker"}, 120.0);

  // Ctrl-C / SIGTERM / SIGHUP (harness/stop_signals.h): the trial under way finishes and is
  // committed, the benchmarks left are skipped, the run is closed, and the exit is 128 + signal.
  // Installed whatever the signal's inherited disposition (a script's '&' leaves SIGINT ignored).
  install_stop_handlers();
  int failed = 0;
  std::int64_t recorded = 0;
  for (const SuiteEntry& entry : suite) {
    benchmark::RegisterBenchmark(entry.name.c_str(), [&, entry](benchmark::State& state) {
      // Not SkipWithError: Google Benchmark aborts (ComputeStats check) when only some
      // repetitions of a benchmark are skipped. The throw ends RunSpecifiedBenchmarks.
      if (stop_requested()) throw BenchStopped{};
      const core::ArchSpec& arch = core::parse_arch(entry.arch);
      for (auto _ : state) {
        TrialRequest req;
        req.arch = std::string(arch.name);
        req.op = entry.problem.kernel;
        req.problem_key = entry.problem.key;
        if (req.op == "matmul") req.problem = matmul_problem(entry.problem);
        req.config = entry.config;
        req.measurer = o.device;
        req.rule = StoppingRule::strict();
        req.timer = o.timer;
        Measurement m = pack ? pack->measure(entry, req.rule, o.timer) : worker ? worker->run(req) : measure_trial(req);
        const results::TemplateId tmpl = current_template_id(entry.problem.kernel, arch);
        // A pack's kernel built by another template version is no measurement of the current
        // one: measured, said, not recorded under it.
        if (recording && pack && pack->source_hash(entry.pack_index) != tmpl.source_hash) {
          fmt::print(stderr, "mgpu-bench: {} was built by another version of {} than this mgpu-tune's: measured, not "
                     "recorded\n", entry.name, tmpl.name);
        } else if (recording) {
          results::Environment env = gpu ? gpu_environment(*gpu, report, arch) : model_environment(arch);
          record(trial_record(0, tmpl, entry.problem, entry.config, env, m));
          ++recorded;
        }
        if (stop_requested()) throw BenchStopped{};  // this trial is committed: stop here
        if (m.status != TrialStatus::Ok) {
          ++failed;
          state.SkipWithError(fmt::format("{}: {}", to_string(m.status), m.message).c_str());
          break;
        }
        state.SetIterationTime(m.median_ms * 1e-3);
        state.SetLabel(fmt::format("{}{}, config verification: {}",
                                   m.source == "model" ? "model (predicted, not measured)" : fmt::format("cuda {}", m.timer),
                                   pack ? fmt::format(", pack entry {}", entry.pack_index) : "", entry.verification));
        state.counters["TFLOP/s"] = entry.problem.flop_count() / (m.median_ms * 1e-3) / 1e12;
        state.counters["noise_pct"] = 100 * m.noise;
        state.counters["samples"] = static_cast<double>(m.samples_ms.size());
        if (m.verification_error) state.counters["verify_err"] = *m.verification_error;
      }
    })->UseManualTime()->Iterations(1);
  }
  // Google Benchmark asks for a file reporter only when --benchmark_out names a file.
  std::unique_ptr<benchmark::BenchmarkReporter> out_reporter;
  bool out_failed = false;
  if (!benchmark_out.empty()) out_reporter = file_reporter(benchmark_out_format, &out_failed);
  size_t matched = 0;
  try {
    DebugBannerFilter no_debug_banner;
    matched = benchmark::RunSpecifiedBenchmarks(nullptr, out_reporter.get());
  } catch (const BenchStopped&) {
    matched = 1;
  }
  benchmark::Shutdown();
  // A --benchmark_out left incomplete (a full disk, a stop) is removed, not left as a partial or
  // empty file; only a regular file, never a device such as /dev/full named by the user.
  auto remove_benchmark_out = [&] {
    std::error_code ec;
    if (!benchmark_out.empty() && std::filesystem::symlink_status(benchmark_out, ec).type() ==
                                      std::filesystem::file_type::regular)
      return std::filesystem::remove(benchmark_out, ec);
    return false;
  };
  if (matched == 0)  // Google Benchmark has said which filter matched nothing
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--benchmark_filter matches none of the suite's {} benchmarks: nothing was measured",
                                  suite.size()));
  if (store) {
    store->end_run(run_id);
    fmt::print(stderr, "mgpu-bench: recorded run {} in {}\n", store->run(std::to_string(run_id)).uuid, o.db);
  }
  if (stop_requested()) {
    store.reset();  // closed (no -wal/-shm left) before saying so
    fmt::print(stderr, "mgpu-bench: stopped by SIG{}: {}\n", sigabbrev_np(stop_exit_code() - 128),
               recorded ? fmt::format("{} trials of this run are committed in {}", recorded, o.db)
                        : std::string("the benchmarks left were skipped"));
    if (!benchmark_out.empty() && remove_benchmark_out())
      fmt::print(stderr, "mgpu-bench: the incomplete --benchmark_out {} was removed\n", benchmark_out);
    return stop_exit_code();
  }
  if (out_failed) {
    const bool removed = remove_benchmark_out();
    fmt::print(stderr, "mgpu-bench: error: could not write --benchmark_out {} (disk full, or not a file that takes "
               "writes): {}{}\n", benchmark_out, removed ? "the incomplete file was removed" : "the results are incomplete there",
               store ? fmt::format(" (the measurements are recorded in {})", o.db) : "");
    return core::kExitFailure;
  }
  return failed ? core::kExitFailure : core::kExitOk;
}

}  // namespace
}  // namespace mgpu::harness

namespace mgpu::harness {

int mgpu_bench_main(int argc, char** argv) {
  // Started with stdout closed ('>&-'): the next file opened (the database) would become fd 1
  // and take Google Benchmark's console report. /dev/null holds the place, and the run ends
  // with exit 1 as any output that could not be written does (mgpu-tune's with_output_written).
  int stdout_errno = 0;
  if (::fcntl(STDOUT_FILENO, F_GETFD) == -1 && errno == EBADF) {
    stdout_errno = EBADF;
    int fd = ::open("/dev/null", O_WRONLY);  // no O_CLOEXEC: fd 1 of the worker too
    if (fd >= 0 && fd != STDOUT_FILENO) {
      ::dup2(fd, STDOUT_FILENO);
      ::close(fd);
    }
  }
  int code;
  try {
    code = run(argc, argv);
  } catch (const core::Error& e) {
    std::fprintf(stderr, "mgpu-bench: error: %s\n", e.what());
    code = core::exit_code_for(e.kind());
  }
  // Output that could not be written (a full disk behind '>', a closed stdout) is a failure.
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good();
  if (!flushed && stdout_errno == 0) stdout_errno = errno ? errno : EIO;
  if (stdout_errno != 0) {
    std::fprintf(stderr, "mgpu-bench: error: cannot write the output to stdout (%s)\n", std::strerror(stdout_errno));
    if (code == core::kExitOk) code = core::kExitFailure;
  }
  return code;
}

}  // namespace mgpu::harness
