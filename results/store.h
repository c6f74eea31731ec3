// The results store: every trial kept with its provenance in SQLite. Contract: open() refuses
// a file that is not an SQLite database, a damaged one, one from a newer schema, or one
// missing a table or column the queries read, with Error{InvalidInput} and without writing to
// it (see database.h for read-only, locked and read-only-opened files); opened for writing, the
// database is migrated to the current schema and runs in WAL mode with a busy timeout, so
// several processes may write at once. Every method turns an SQLite failure into the same
// one-line Error naming the file (database_error).
// record_trial() commits the trial in its own transaction before returning: a process killed
// at any moment leaves every recorded trial intact -- unless the caller holds a transaction
// open on db() (a bulk import, all or nothing), which the trial then joins.
// Every row read is checked first: a median that is not a positive finite number (a min or
// mean that is negative, not finite or text), or a problem whose sizes are not each 1 to
// 2^31-1 (or all 0: an imported landscape's) is Error{InvalidInput} "DB is damaged: trial N
// has ...", so no command ranks or exports a row written behind the tool's back. Rows whose template hash differs from the
// current one are stale: they stay, and queries given the current template skip them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>

#include "results/database.h"

namespace mgpu::results {

struct Environment {
  std::string device_name;  // "NVIDIA H100 80GB HBM3", or "model:H100 SXM" for predictions
  std::string arch;
  std::string compute_capability;
  int sm_count = 0;
  std::string driver_version;
  std::string cuda_version;
  double sm_clock_mhz = 0;
};

struct TemplateId {
  std::string name;
  std::string source_hash;
  std::string backend_hash;
};

// kernel: the op ("matmul", "attention"); key: the op's canonical problem text. m, n, k and
// layout describe a matmul (0 and "" for another op); fields: the op's problem as a JSON object
// of text values (schema 8; "{}" for older rows); flops: what the kernels do (schema 8; unset for
// older rows, whose matmuls do 2 m n k).
struct ProblemRecord {
  std::string kernel = "matmul";
  std::string key;
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype, out_dtype, layout;
  std::string fields = "{}";
  std::optional<double> flops;
  double flop_count() const { return flops ? *flops : 2.0 * double(m) * double(n) * double(k); }
};

struct TrialRecord {
  std::int64_t run_id = 0;
  TemplateId tmpl;
  ProblemRecord problem;
  std::string config_json;  // canonical
  Environment env;
  std::string status = "ok";
  std::string source = "cuda";  // cuda | model | replay | emulate
  std::optional<double> median_ms, min_ms, mean_ms, noise;
  std::vector<double> samples_ms;
  std::optional<double> verification_error;
  bool throttled = false;
  std::string timer;  // cupti | events (measured trials)
  std::optional<double> compile_ms;
  std::optional<int> registers, smem_bytes, spill_bytes;
  std::string message;
  // The verification key (schema 5): the compiled kernel's content hash, and the class of the
  // problem it ran at (kernels/problem_class.h). Empty when the trial compiled nothing.
  std::string kernel_hash;
  std::string problem_class;
};

// A stored trial with the ids and names queries need.
struct TrialRow : TrialRecord {
  std::int64_t id = 0;
  std::string uuid;
  std::string created_at;
  // The config as its row holds it, where config_json was given whole (Store::best: a stored
  // config that leaves a parameter out means its default); verdicts are keyed by this text.
  // Empty: config_json is the row's text.
  std::string stored_config_json;
  const std::string& verdict_config() const { return stored_config_json.empty() ? config_json : stored_config_json; }
};

struct RunRow {
  std::int64_t id = 0;
  std::string uuid, kind, arguments, started_at, ended_at, tool_version;
};

// What a verification on the virtual device is keyed by: the binary (kernel_hash), its
// run-time parameters (inside the config), and the class of problem.
struct VerificationKey {
  std::string config_json;
  std::string kernel_hash;
  std::string problem_class;
};

// The classes a trial's problem_class names: one for a matmul (whose class names join their
// flags with '+'); an op verified at several problems (kernels/op_template.h) joins its classes
// with ';', and its verification needs all of them.
std::vector<std::string> verification_classes(const std::string& problem_class);

// Every virtual-device verdict for a key (every class of a ';'-joined key: Verified when all
// are, Failed when any is): Failed if any run failed (a hazard under one
// schedule is a hazard), Verified if some passed and none failed.
struct Verification {
  enum class State { None, Verified, Failed };
  State state = State::None;
  int passed = 0, failed = 0;
  int schedules = 0;                // the most schedules one passing run was checked under
  std::optional<TrialRow> failure;  // the first failing trial, with its report
};

// How many schedules a passing virtual-device verdict ran, read from its message: "verified
// under N schedules" (harness/measure/emulator_verifier.cc writes it whenever N > 1, an answer
// by equivalence copies it), else 1. Stored rows of every version carry that message, so no
// column is needed for it.
int verified_schedules(std::string_view message);

// A row's verification as shown by best/export: "failed" (the virtual device found its kernel
// wrong, hung or racy for the row's problem class -- even if a GPU run happened to pass),
// "hardware" (a GPU compared it with cuBLAS), "virtual" (verified on the virtual device for its
// kernel and problem class) or "none".
std::string_view verification_label(const TrialRow& row, const Verification& virtual_device);

// The SASS evidence of one compiled kernel (schema 7, issue 19), recorded once per binary:
// kernel_hash as trials keep it, backend_hash as templates keep it, the assembler used.
struct EvidenceRecord {
  std::string kernel_hash, backend_hash, assembler;
  std::string evidence;  // JSON, core/sass/kernel_evidence.h
  std::string lints;     // JSON [{code, message}] as the recording binary derived them
  std::string created_at;
};

// Which trials to list; empty fields match anything.
struct TrialFilter {
  std::optional<std::int64_t> run_id;
  std::string status, source, template_name, arch;
};

class Store {
 public:
  static Store open(const std::string& path, OpenMode mode);
  // Read-only, for what earlier runs left (a warm start): nothing when the file does not exist
  // or is blank, i.e. created by a run killed before it wrote the schema; open()'s errors
  // otherwise. A blank file is where a killed first run leaves its database, not bad input.
  static std::optional<Store> open_earlier(const std::string& path);

  std::int64_t begin_run(const std::string& kind, const std::string& arguments, const std::string& tool_version);
  void end_run(std::int64_t run_id);
  // A run by id (a number) or uuid (or an unambiguous uuid prefix); Error{InvalidInput} when
  // there is no such run. Digits shorter than 8 are an id first, then a uuid prefix; 8 or more
  // (the short uuid `best --runs` shows) a uuid prefix first, then an id.
  RunRow run(const std::string& id_or_uuid);
  std::vector<RunRow> runs();

  std::int64_t record_trial(const TrialRecord& t);
  // Merging: a run or trial from another database, kept under its uuid. import_run() returns
  // this database's id for the run (existing or new); import_trial() returns false when a trial
  // with that uuid is already here (so merging twice adds nothing).
  std::int64_t import_run(const RunRow& run);
  bool import_trial(const TrialRow& trial, std::int64_t run_id);

  // Every trial, oldest first; optionally only one run's.
  std::vector<TrialRow> trials(std::optional<std::int64_t> run_id = std::nullopt);
  std::vector<TrialRow> trials(const TrialFilter& filter);
  // Names of the templates with rows here.
  std::vector<std::string> template_names();
  // The best ok trial per (template, problem, environment): lowest median; verified (a
  // verification error recorded) unless model results are included, and measured ("cuda")
  // unless include_model. `current`: only rows of these template versions (others are stale).
  // A row the virtual device failed (verification() of its key is Failed, whatever the row's
  // source) never ranks: the next fastest row of its group does; `failed_verification`, when
  // given, receives the rows so skipped.
  // It first reads every row once (check_every_row()): a database is damaged for every reader
  // or for none, whichever rows the reader ranks.
  std::vector<TrialRow> best(bool include_model, const std::vector<TemplateId>& current = {},
                             std::vector<TrialRow>* failed_verification = nullptr);
  // Configs with a finished trial for this template version, problem and environment: a
  // resumed run skips them.
  std::set<std::string> measured_configs(const TemplateId& t, const std::string& problem_key, const Environment& env,
                                         const std::string& source);
  // A config's trials across runs (its performance history), oldest first.
  std::vector<TrialRow> history(const std::string& template_name, const std::string& problem_key,
                                const std::string& config_json);
  // The virtual device's verdicts for a key (None without a kernel hash or on schema < 5).
  Verification verification(const VerificationKey& key);
  // Kernel evidence (schema 7). record_evidence() keeps the first record of a key (the same
  // binary gives the same evidence) and does nothing on an older read-only database's behalf:
  // opened for writing, a database is at schema 7. evidence(): the record of that kernel and
  // backend -- by that assembler, or when `assembler` is empty the latest of any -- or nullopt
  // (none, or a read-only database older than schema 7). import_evidence() is merge's: false
  // when the key is already here.
  void record_evidence(const EvidenceRecord& e);
  std::optional<EvidenceRecord> evidence(const std::string& kernel_hash, const std::string& backend_hash,
                                         const std::string& assembler = "");
  std::vector<EvidenceRecord> all_evidence();
  bool import_evidence(const EvidenceRecord& e);
  // The message of the latest passing verification of this kernel on the virtual device (it
  // carries the shared-memory bank-conflict counts, core/sass/bank_conflicts.h), or nullopt.
  std::optional<std::string> passing_verification_message(const std::string& kernel_hash);
  bool integrity_ok();
  // Error{InvalidInput} "DB is damaged" when the database's row of p's (kernel, key) is another
  // problem: a matmul's other sizes or types; another op's row, judged as every reader judges it
  // (stored_config.h's problem half: the problem its key names, by value). A study checks its
  // problem before it resumes; record_trial() checks it too.
  void check_problem(const ProblemRecord& p);
  SQLite::Database& db() { return *db_; }
  const std::string& path() const { return path_; }

  // Every trial row read and judged as query_trials() judges it (Error{InvalidInput} "DB is
  // damaged: trial N ..."), once per Store: for readers that rank a part of the database.
  void check_every_row();
  // The same for the rows of one template version at one problem (every device and source): what a
  // tuner resuming that study, or about to tune it in a suite, reads and must not write beside.
  void check_rows_of(const TemplateId& tmpl, const std::string& problem_key);

 private:
  Store(DatabasePtr db, int schema, std::string path) : db_(std::move(db)), schema_(schema), path_(std::move(path)) {}
  // The rest of open() on a database already opened: migrate (read-write) and check the schema.
  static Store from(DatabasePtr db, const std::string& path, OpenMode mode);
  std::int64_t environment_id(const Environment& e);
  std::int64_t template_id(const TemplateId& t);
  std::int64_t problem_id(const ProblemRecord& p);
  std::int64_t config_id(const std::string& json);
  std::int64_t insert_trial(const TrialRecord& t, const std::string& uuid, const std::string& created_at);
  std::vector<TrialRow> query_trials(const std::string& where, const std::function<void(SQLite::Statement&)>& bind);

  DatabasePtr db_;
  int schema_;  // a read-only store may be an older schema: queries read what it has
  bool rows_checked_ = false;
  std::string path_;  // as the user gave it, for messages
};

// Throughput of an ok trial's median, 2*M*N*K flops.
double tflops(const TrialRow& t);

std::string new_uuid();
std::string now_utc();  // ISO 8601

}  // namespace mgpu::results
