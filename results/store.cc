#include "results/store.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <ctime>
#include <filesystem>
#include <map>
#include <random>

#include <sqlite3.h>

#include "core/error.h"
#include "core/json_input.h"
#include "results/schema.h"
#include "results/stored_config.h"

namespace mgpu::results {

using core::Error;
using core::ErrorKind;

static constexpr const char* kTrialColumns =
    "t.id, t.uuid, t.run_id, tp.name, tp.source_hash, tp.backend_hash, p.kernel, p.key, p.m, p.n, p.k, p.dtype, "
    "p.out_dtype, p.layout, c.json, e.device_name, e.arch, e.compute_capability, e.sm_count, e.driver_version, "
    "e.cuda_version, t.status, t.source, t.median_ms, t.min_ms, t.mean_ms, t.noise, t.samples_json, "
    "t.verification_error, t.throttled, t.compile_ms, t.registers, t.smem_bytes, t.spill_bytes, t.message, "
    "t.created_at";
// Columns later schemas added, read as '' from older read-only databases.
static std::string later_trial_columns(int schema) {
  return fmt::format("{}, {}, {}, {}, {}", schema >= 2 ? "t.timer" : "''", schema >= 5 ? "t.kernel_hash" : "''",
                     schema >= 5 ? "t.problem_class" : "''", schema >= 8 ? "p.fields" : "'{}'",
                     schema >= 8 ? "p.flops" : "NULL");
}
static constexpr const char* kTrialJoins =
    "FROM trials t LEFT JOIN templates tp ON tp.id = t.template_id LEFT JOIN problems p ON p.id = t.problem_id "
    "LEFT JOIN configs c ON c.id = t.config_id LEFT JOIN environments e ON e.id = t.environment_id";
// LEFT joins: a trial whose template, problem, config or environment row is not there is read,
// and refused as damaged by query_trials(), never dropped from the answer without a word.

std::string new_uuid() {
  // Straight from the OS entropy source: a seeded PRNG would repeat itself in a forked child.
  std::random_device rd;
  auto draw = [&] { return (std::uint64_t(rd()) << 32) | rd(); };
  std::uint64_t a = draw(), b = draw();
  a = (a & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // variant 1
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xFFFF, a & 0xFFFF, b >> 48,
                     b & 0xFFFFFFFFFFFFULL);
}

double tflops(const TrialRow& t) {
  return t.problem.flop_count() / (*t.median_ms * 1e-3) / 1e12;
}

std::string now_utc() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<Store> Store::open_earlier(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  DatabasePtr db = open_database(path, OpenMode::ReadOnly);
  if (guard_database(path, [&] { return schema_header(*db).blank(); })) return std::nullopt;
  return from(std::move(db), path, OpenMode::ReadOnly);
}

Store Store::open(const std::string& path, OpenMode mode) {
  DatabasePtr db = open_database(path, mode);
  if (mode == OpenMode::ReadOnly && guard_database(path, [&] { return schema_header(*db).blank(); }))
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} holds no results: it is blank (a run that created it stopped before it wrote the "
                            "schema); a tuning run with --db {} starts it", path, path));
  return from(std::move(db), path, mode);
}

Store Store::from(DatabasePtr db, const std::string& path, OpenMode mode) {
  int schema = guard_database(path, [&] {
    if (mode == OpenMode::ReadWrite) retry_while_busy([&] { migrate(*db); });
    // Read-only, an older database is read as it is (never migrated behind the user's back).
    return schema_version(*db);
  });
  if (schema < 1)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is not an mgpu-tune results database (schema version {})", path, schema));
  // Every table and column the queries read must be there: a dropped table is reported now,
  // as what it is, not as a crash in the middle of a command.
  try {
    SQLite::Statement trials(*db, fmt::format("SELECT {}, {} {} LIMIT 0", kTrialColumns,
                                              later_trial_columns(schema), kTrialJoins));
    SQLite::Statement runs(*db, "SELECT id, uuid, kind, arguments, started_at, ended_at, tool_version FROM runs LIMIT 0");
    if (schema >= 7)
      SQLite::Statement evidence(*db, "SELECT kernel_hash, backend_hash, assembler, evidence, lints, created_at FROM "
                                      "kernel_evidence LIMIT 0");
  } catch (const SQLite::Exception& e) {
    if ((e.getErrorCode() & 0xff) != SQLITE_ERROR) throw database_error(path, e);
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: {} (schema version {} has it); nothing was written",
                                                     path, e.what(), schema));
  }
  return Store(std::move(db), schema, path);
}

std::int64_t Store::begin_run(const std::string& kind, const std::string& arguments, const std::string& tool_version) {
  return guard_database(path_, [&] {
    SQLite::Statement q(*db_, "INSERT INTO runs(uuid, kind, arguments, started_at, tool_version) VALUES (?,?,?,?,?)");
    q.bind(1, new_uuid());
    q.bind(2, kind);
    q.bind(3, arguments);
    q.bind(4, now_utc());
    q.bind(5, tool_version);
    q.exec();
    return db_->getLastInsertRowid();
  });
}

void Store::end_run(std::int64_t run_id) {
  try {
    SQLite::Statement q(*db_, "UPDATE runs SET ended_at = ? WHERE id = ?");
    q.bind(1, now_utc());
    q.bind(2, run_id);
    q.exec();
  } catch (const SQLite::Exception& e) {
    // The run's trials are committed by now: a refused close (a trigger, a constraint) is a
    // database write that failed (exit 1), not a database that could not be used (exit 2).
    if ((e.getErrorCode() & 0xff) != SQLITE_CONSTRAINT) throw database_error(path_, e);
    throw Error(ErrorKind::IO, fmt::format("cannot record the end of run {} in {}: {}; the trials it committed stay",
                                           run_id, path_, e.what()));
  }
}

static RunRow read_run(SQLite::Statement& q) {
  RunRow r;
  r.id = q.getColumn(0).getInt64();
  r.uuid = q.getColumn(1).getString();
  r.kind = q.getColumn(2).getString();
  r.arguments = q.getColumn(3).getString();
  r.started_at = q.getColumn(4).getString();
  r.ended_at = q.getColumn(5).isNull() ? "" : q.getColumn(5).getString();
  r.tool_version = q.getColumn(6).getString();
  return r;
}

RunRow Store::run(const std::string& id_or_uuid) {
  // An empty uuid prefix would match every run: with one run in the database, that one.
  if (id_or_uuid.empty())
    throw Error(ErrorKind::InvalidInput, "the run is empty: give a run id or uuid prefix (see the runs with 'mgpu-tune best --runs')");
  return guard_database(path_, [&] {
    // A number is a run id; anything else is a uuid or an unambiguous uuid prefix, compared as
    // text from the uuid's first character: no LIKE or GLOB, whose wildcards ('%', '_', '*')
    // matched any run, and anywhere in its uuid. Only ASCII case is ignored (a uuid's hex digits
    // may be written in either case, RFC 9562).
    // Digits may be either: shorter than the 8 characters `best --runs` shows of a uuid, an id
    // first (then a uuid prefix, if no run has that id); 8 or more, a uuid prefix first (about
    // one uuid in 40 starts with 8 digits), then an id.
    const bool numeric = id_or_uuid.find_first_not_of("0123456789") == std::string::npos;
    auto by_id = [&] {
      std::vector<RunRow> rows;
      if (id_or_uuid.size() > 18) return rows;  // past int64: no run has that id
      SQLite::Statement q(*db_, "SELECT id, uuid, kind, arguments, started_at, ended_at, tool_version FROM runs "
                                "WHERE id = CAST(?1 AS INTEGER)");
      q.bind(1, id_or_uuid);
      while (q.executeStep()) rows.push_back(read_run(q));
      return rows;
    };
    auto by_uuid = [&] {
      std::vector<RunRow> rows;
      SQLite::Statement q(*db_, "SELECT id, uuid, kind, arguments, started_at, ended_at, tool_version FROM runs "
                                "WHERE lower(substr(uuid, 1, length(?1))) = lower(?1) ORDER BY uuid = ?1 DESC, id");
      q.bind(1, id_or_uuid);
      while (q.executeStep()) rows.push_back(read_run(q));
      return rows;
    };
    std::vector<RunRow> found;
    if (numeric && id_or_uuid.size() < 8) {
      found = by_id();
      if (found.empty()) found = by_uuid();
    } else {
      found = by_uuid();
      if (found.empty() && numeric) found = by_id();
    }
    if (found.empty())
      throw Error(ErrorKind::InvalidInput, fmt::format("no run '{}' in {} (see the runs with 'mgpu-tune best --runs')",
                                                       id_or_uuid, path_));
    if (found.size() > 1 && found[0].uuid != id_or_uuid)
      throw Error(ErrorKind::InvalidInput, fmt::format("run '{}' is ambiguous: {} runs match", id_or_uuid, found.size()));
    return found[0];
  });
}

std::vector<RunRow> Store::runs() {
  return guard_database(path_, [&] {
    SQLite::Statement q(*db_, "SELECT id, uuid, kind, arguments, started_at, ended_at, tool_version FROM runs ORDER BY id");
    std::vector<RunRow> out;
    while (q.executeStep()) out.push_back(read_run(q));
    return out;
  });
}

// get-or-insert of a dimension row, by its unique columns.
static std::int64_t upsert(SQLite::Database& db, const std::string& table, const std::vector<std::string>& cols,
                           const std::function<void(SQLite::Statement&, int first)>& bind) {
  std::string names, marks, where;
  for (size_t i = 0; i < cols.size(); ++i) {
    names += (i ? "," : "") + cols[i];
    marks += i ? ",?" : "?";
    where += (i ? " AND " : "") + cols[i] + " IS ?";
  }
  SQLite::Statement ins(db, fmt::format("INSERT OR IGNORE INTO {}({}) VALUES ({})", table, names, marks));
  bind(ins, 1);
  ins.exec();
  SQLite::Statement sel(db, fmt::format("SELECT id FROM {} WHERE {}", table, where));
  bind(sel, 1);
  if (!sel.executeStep()) throw Error(ErrorKind::IO, fmt::format("could not store a row in {}", table));
  return sel.getColumn(0).getInt64();
}

std::int64_t Store::environment_id(const Environment& e) {
  return upsert(*db_, "environments",
                {"device_name", "arch", "compute_capability", "sm_count", "driver_version", "cuda_version"},
                [&](SQLite::Statement& s, int i) {
                  s.bind(i, e.device_name);
                  s.bind(i + 1, e.arch);
                  s.bind(i + 2, e.compute_capability);
                  s.bind(i + 3, e.sm_count);
                  s.bind(i + 4, e.driver_version);
                  s.bind(i + 5, e.cuda_version);
                });
}

std::int64_t Store::template_id(const TemplateId& t) {
  return upsert(*db_, "templates", {"name", "source_hash", "backend_hash"}, [&](SQLite::Statement& s, int i) {
    s.bind(i, t.name);
    s.bind(i + 1, t.source_hash);
    s.bind(i + 2, t.backend_hash);
  });
}

// Every status a trial is stored with (harness/measure/measurement.cc names them): a row with
// another was written behind the tool's back.
constexpr std::string_view kTrialStatuses[] = {"ok",        "compile_error", "launch_error", "fault",   "timeout",
                                               "wrong_result", "invalid_config", "env_error", "hazard", "deadlock",
                                               "unsupported"};
static bool known_trial_status(std::string_view status) {
  return std::find(std::begin(kTrialStatuses), std::end(kTrialStatuses), status) != std::end(kTrialStatuses);
}

// Whether a problem row's fields are one JSON object, each key once (as every JSON input is
// read: a key given twice was read last-wins, so which value counted depended on the order,
// battery round 14, F5).
static bool fields_readable(const std::string& fields) {
  try {
    return core::parse_user_json(fields, "fields").is_object();
  } catch (const nlohmann::json::exception&) {
    return false;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::InvalidInput) throw;
    return false;
  }
}

// A problem's columns, in the problems table's order, as parameters 1..8 of `s`.
static void bind_problem_columns(SQLite::Statement& s, const ProblemRecord& p) {
  s.bind(1, p.kernel);
  s.bind(2, p.key);
  s.bind(3, p.m);
  s.bind(4, p.n);
  s.bind(5, p.k);
  s.bind(6, p.dtype);
  s.bind(7, p.out_dtype);
  s.bind(8, p.layout);
}

void Store::check_problem(const ProblemRecord& p) {
  guard_database(path_, [&] {
    if (p.kernel == "matmul") {
      // A matmul row of this key with other sizes or types blocks the insert: it was edited.
      SQLite::Statement clash(*db_, "SELECT count(*) FROM problems WHERE kernel = ? AND key = ? AND NOT (m IS ? AND "
                                    "n IS ? AND k IS ? AND dtype IS ? AND out_dtype IS ? AND layout IS ?)");
      bind_problem_columns(clash, p);
      if (clash.executeStep() && clash.getColumn(0).getInt() > 0)
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("{} is damaged: its problem row {} has sizes or types other than the key says", path_,
                                p.key.substr(0, 80)));
      return;
    }
    // Another op's row is judged as every reader judges it (stored_config.h's problem half):
    // the problem its key names, by value (a 2.0 is a 2; flops within rounding).
    SQLite::Statement row(*db_, "SELECT dtype, out_dtype, fields, flops FROM problems WHERE kernel = ? AND key = ?");
    row.bind(1, p.kernel);
    row.bind(2, p.key);
    if (!row.executeStep()) return;
    ProblemRecord stored = p;
    stored.dtype = row.getColumn(0).getString();
    stored.out_dtype = row.getColumn(1).getString();
    stored.fields = row.getColumn(2).getString();
    // What query_trials() refuses first, said the same way: the key's check reads parsed fields.
    if (!fields_readable(stored.fields))
      throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: its problem row {} of {} has fields that are "
                                                       "not a JSON object with each key once", path_, p.key.substr(0, 80),
                                                       p.kernel));
    if (row.getColumn(3).isNull()) stored.flops.reset();
    else if (!row.getColumn(3).isFloat() && !row.getColumn(3).isInteger())
      throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: its problem row {} of {} has flops that are not "
                                                       "a number", path_, p.key.substr(0, 80), p.kernel));
    else stored.flops = row.getColumn(3).getDouble();
    if (std::optional<std::string> why = why_problem_row_wrong(stored))
      throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: its problem row {} of {} is not its key's "
                                                       "problem: {}", path_, p.key.substr(0, 80), p.kernel, *why));
  });
}

std::int64_t Store::problem_id(const ProblemRecord& p) {
  check_problem(p);  // a row already there of this (kernel, key) is the same problem
  SQLite::Statement ins(*db_, "INSERT OR IGNORE INTO problems(kernel, key, m, n, k, dtype, out_dtype, layout, fields, "
                              "flops) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  bind_problem_columns(ins, p);
  ins.bind(9, p.fields);
  if (p.flops) ins.bind(10, *p.flops);
  else ins.bind(10);
  ins.exec();
  SQLite::Statement sel(*db_, "SELECT id FROM problems WHERE kernel = ? AND key = ?");
  sel.bind(1, p.kernel);
  sel.bind(2, p.key);
  if (!sel.executeStep()) throw Error(ErrorKind::IO, "could not store a row in problems");
  return sel.getColumn(0).getInt64();
}

std::int64_t Store::config_id(const std::string& json) {
  return upsert(*db_, "configs", {"json"}, [&](SQLite::Statement& s, int i) { s.bind(i, json); });
}

template <class T>
static void bind_opt(SQLite::Statement& s, int i, const std::optional<T>& v) {
  if (v) s.bind(i, *v);
  else s.bind(i);
}

std::int64_t Store::record_trial(const TrialRecord& t) { return insert_trial(t, new_uuid(), now_utc()); }

std::int64_t Store::import_run(const RunRow& r) {
  return guard_database(path_, [&] {
    SQLite::Statement ins(*db_, "INSERT OR IGNORE INTO runs(uuid, kind, arguments, started_at, ended_at, tool_version) "
                                "VALUES (?,?,?,?,?,?)");
    ins.bind(1, r.uuid);
    ins.bind(2, r.kind);
    ins.bind(3, r.arguments);
    ins.bind(4, r.started_at);
    if (r.ended_at.empty()) ins.bind(5);
    else ins.bind(5, r.ended_at);
    ins.bind(6, r.tool_version);
    ins.exec();
    SQLite::Statement sel(*db_, "SELECT id FROM runs WHERE uuid = ?");
    sel.bind(1, r.uuid);
    sel.executeStep();
    return sel.getColumn(0).getInt64();
  });
}

bool Store::import_trial(const TrialRow& t, std::int64_t run_id) {
  return guard_database(path_, [&] {
    // The check and the insert in one write transaction: two merges of the same input into one
    // output at once would otherwise both find the uuid absent and one fail on UNIQUE(uuid).
    std::optional<SQLite::Transaction> tx;
    if (sqlite3_get_autocommit(db_->getHandle())) tx.emplace(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement q(*db_, "SELECT 1 FROM trials WHERE uuid = ?");
    q.bind(1, t.uuid);
    if (q.executeStep()) return false;
    TrialRecord rec = t;
    rec.run_id = run_id;
    insert_trial(rec, t.uuid, t.created_at);
    if (tx) tx->commit();
    return true;
  });
}

std::int64_t Store::insert_trial(const TrialRecord& t, const std::string& uuid, const std::string& created_at) {
  // A row every reader would refuse ("damaged: a time must be a positive finite number") is
  // never written: one such row makes the whole database unreadable to best, trials, export,
  // report and merge (battery r4 A23: a replay of virtual-device rows stored ok trials of 0 ms).
  if (t.median_ms && !(std::isfinite(*t.median_ms) && *t.median_ms > 0))
    throw Error(ErrorKind::InvalidInput,
                fmt::format("refusing to record a {} trial of {} with median_ms {} in {}: a time must be a positive "
                            "finite number; that trial was not written",
                            t.source, t.problem.key, *t.median_ms, path_));
  return guard_database(path_, [&] {
    // One transaction per trial: committed as soon as it is measured, nothing half-written.
    // Inside a caller's transaction (a bulk import: all or nothing) the trial is part of that.
    std::optional<SQLite::Transaction> tx;
    if (sqlite3_get_autocommit(db_->getHandle())) tx.emplace(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    std::int64_t env = environment_id(t.env), tmpl = template_id(t.tmpl), prob = problem_id(t.problem),
                 cfg = config_id(t.config_json);
    SQLite::Statement q(*db_,
                        "INSERT INTO trials(uuid, run_id, template_id, problem_id, config_id, environment_id, status, "
                        "source, median_ms, min_ms, mean_ms, noise, sample_count, samples_json, verification_error, "
                        "throttled, compile_ms, registers, smem_bytes, spill_bytes, message, created_at, timer, kernel_hash, "
                        "problem_class) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    int i = 1;
    q.bind(i++, uuid);
    q.bind(i++, t.run_id);
    q.bind(i++, tmpl);
    q.bind(i++, prob);
    q.bind(i++, cfg);
    q.bind(i++, env);
    q.bind(i++, t.status);
    q.bind(i++, t.source);
    bind_opt(q, i++, t.median_ms);
    bind_opt(q, i++, t.min_ms);
    bind_opt(q, i++, t.mean_ms);
    bind_opt(q, i++, t.noise);
    q.bind(i++, static_cast<std::int64_t>(t.samples_ms.size()));
    q.bind(i++, nlohmann::json(t.samples_ms).dump());
    bind_opt(q, i++, t.verification_error);
    q.bind(i++, t.throttled ? 1 : 0);
    bind_opt(q, i++, t.compile_ms);
    bind_opt(q, i++, t.registers);
    bind_opt(q, i++, t.smem_bytes);
    bind_opt(q, i++, t.spill_bytes);
    q.bind(i++, t.message);
    q.bind(i++, created_at);
    q.bind(i++, t.timer);
    q.bind(i++, t.kernel_hash);
    q.bind(i++, t.problem_class);
    q.exec();
    std::int64_t id = db_->getLastInsertRowid();
    if (tx) tx->commit();
    return id;
  });
}

template <class T>
static std::optional<T> opt(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  if constexpr (std::is_same_v<T, double>) return c.getDouble();
  else return static_cast<T>(c.getInt64());
}

// A stored time as a row reader may trust it: NULL, or a positive finite number. Anything else
// (text SQLite could not read as a number -- 'abc', 'nan' --, 0, a negative or infinite value)
// was written behind the tool's back and would rank first in best() and be exported. A min or
// mean of 0 is let through: a replay of a row that had none records 0 (ranking reads medians).
static std::optional<double> stored_time(const SQLite::Column& c, const std::string& path, std::int64_t trial,
                                         const char* column, bool zero_ok = false) {
  if (c.isNull()) return std::nullopt;
  bool number = c.isInteger() || c.isFloat();
  double v = number ? c.getDouble() : 0;
  if (!number || !std::isfinite(v) || v < 0 || (v == 0 && !zero_ok))
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is damaged: trial {} has {} {} (a time must be a positive finite number)", path, trial,
                            column, number ? fmt::format("{}", v) : fmt::format("'{}'", c.getString().substr(0, 40))));
  return v;
}

// A problem's sizes as a row reader may trust them: each 1 to 2^31-1 (kernels/matmul_problem.h's
// validate()), or all 0 for an imported landscape's problem, which records none.
static std::int64_t stored_size(const SQLite::Column& c, const std::string& path, std::int64_t trial,
                                const char* column, std::int64_t& zeros) {
  constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();
  std::int64_t v = c.getInt64();
  if (!c.isInteger() || v < 0 || v > kMaxDim)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is damaged: trial {} has a problem with {} = {} (a size is 1 to {})", path, trial,
                            column, c.isInteger() ? fmt::format("{}", v) : fmt::format("'{}'", c.getString().substr(0, 40)),
                            kMaxDim));
  zeros += v == 0;
  return v;
}

// A matmul's problem row as the tool writes it (its key is MatmulProblem::key() of its sizes,
// dtypes and layout, each a name the tool knows): one that disagrees with itself was edited, and
// would be exported and benchmarked as either shape. Imported landscapes (sizes all 0) and other
// ops' rows are not matmuls.
static void check_matmul_problem(const ProblemRecord& p, const std::string& path, std::int64_t trial) {
  if (p.kernel != "matmul" || p.m == 0) return;
  auto known = [](const std::string& t, std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (t == n) return true;
    return false;
  };
  if (!known(p.dtype, {"bf16", "f16"}) || !known(p.out_dtype, {"bf16", "f16", "f32"}) || !known(p.layout, {"kn", "nk"}))
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: trial {} has a problem of dtype '{}', output '{}' "
                                                     "and layout '{}' (bf16 or f16; bf16, f16 or f32; kn or nk)",
                                                     path, trial, p.dtype.substr(0, 20), p.out_dtype.substr(0, 20),
                                                     p.layout.substr(0, 20)));
  const std::string key = fmt::format("m{}_n{}_k{}_{}_{}_{}", p.m, p.n, p.k, p.dtype, p.out_dtype, p.layout);
  if (p.key != key)
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: trial {} has the problem key '{}', which disagrees "
                                                     "with its sizes and types ({})", path, trial,
                                                     p.key.substr(0, 80), key));
}

std::vector<TrialRow> Store::query_trials(const std::string& where, const std::function<void(SQLite::Statement&)>& bind) {
  return guard_database(path_, [&] {
    // The run row last: a trial whose run is not there is damage too (merge met it as map::at).
    SQLite::Statement q(*db_, fmt::format("SELECT {}, {}, rn.id {} LEFT JOIN runs rn ON rn.id = t.run_id {} ORDER BY t.id",
                                          kTrialColumns, later_trial_columns(schema_), kTrialJoins, where));
    bind(q);
    std::vector<TrialRow> out;
    std::set<std::string> checked_problems, checked_configs;
    while (q.executeStep()) {
      TrialRow r;
      int i = 0;
      r.id = q.getColumn(i++).getInt64();
      // Columns 3 (tp.name), 6 (p.kernel), 14 (c.json), 15 (e.device_name) are NULL only for a
      // row the trial refers to that is not there (the schema has them NOT NULL).
      for (auto [col, what] : {std::pair{3, "template"}, {6, "problem"}, {14, "config"}, {15, "environment"}})
        if (q.getColumn(col).isNull())
          throw Error(ErrorKind::InvalidInput,
                      fmt::format("{} is damaged: trial {} refers to a {} row that is not there", path_, r.id, what));
      r.uuid = q.getColumn(i++).getString();
      r.run_id = q.getColumn(i++).getInt64();
      r.tmpl.name = q.getColumn(i++).getString();
      // A template's name is what the tool or an import wrote: a short line of printable text.
      // An empty one, 5000 characters or control bytes were written behind its back, and every
      // table and export printed them whole (battery round 20, F45).
      if (r.tmpl.name.empty() || r.tmpl.name.size() > 200 ||
          std::any_of(r.tmpl.name.begin(), r.tmpl.name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("{} is damaged: trial {} has a template named '{}' ({} bytes; a name is 1 to 200 "
                                "printable characters)", path_, r.id, r.tmpl.name.substr(0, 40), r.tmpl.name.size()));
      r.tmpl.source_hash = q.getColumn(i++).getString();
      r.tmpl.backend_hash = q.getColumn(i++).getString();
      r.problem.kernel = q.getColumn(i++).getString();
      r.problem.key = q.getColumn(i++).getString();
      std::int64_t zeros = 0;
      r.problem.m = stored_size(q.getColumn(i++), path_, r.id, "m", zeros);
      r.problem.n = stored_size(q.getColumn(i++), path_, r.id, "n", zeros);
      r.problem.k = stored_size(q.getColumn(i++), path_, r.id, "k", zeros);
      if (zeros != 0 && zeros != 3)
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("{} is damaged: trial {} has a problem of {}x{}x{} (sizes are all positive, or all 0 "
                                "for an imported landscape)", path_, r.id, r.problem.m, r.problem.n, r.problem.k));
      r.problem.dtype = q.getColumn(i++).getString();
      r.problem.out_dtype = q.getColumn(i++).getString();
      r.problem.layout = q.getColumn(i++).getString();
      check_matmul_problem(r.problem, path_, r.id);
      r.config_json = q.getColumn(i++).getString();
      r.env.device_name = q.getColumn(i++).getString();
      r.env.arch = q.getColumn(i++).getString();
      r.env.compute_capability = q.getColumn(i++).getString();
      r.env.sm_count = q.getColumn(i++).getInt();
      r.env.driver_version = q.getColumn(i++).getString();
      r.env.cuda_version = q.getColumn(i++).getString();
      r.status = q.getColumn(i++).getString();
      // A status the tool never writes was read by some readers as a failed verification and
      // stopped a tuner that copied it, after it had written (battery round 15, F1): damage.
      if (!known_trial_status(r.status))
        throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: trial {} has an unknown status '{}' ({})", path_,
                                                         r.id, r.status.substr(0, 40),
                                                         fmt::join(kTrialStatuses, ", ")));
      r.source = q.getColumn(i++).getString();
      r.median_ms = stored_time(q.getColumn(i++), path_, r.id, "median_ms");
      // An ok measurement or prediction has its time; only the virtual device, which has no
      // clock, records an ok without one. best() dropped such a row's problem without a word and
      // exports listed it timeless (battery round 20, F61).
      if (r.status == "ok" && !r.median_ms && r.source != "emulate")
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("{} is damaged: trial {} is an ok {} trial with no median_ms (only the virtual device's "
                                "verdicts have no time)", path_, r.id, r.source.substr(0, 40)));
      r.min_ms = stored_time(q.getColumn(i++), path_, r.id, "min_ms", /*zero_ok=*/true);
      r.mean_ms = stored_time(q.getColumn(i++), path_, r.id, "mean_ms", /*zero_ok=*/true);
      r.noise = opt<double>(q.getColumn(i++));
      if (r.noise && !(std::isfinite(*r.noise) && *r.noise >= 0))
        throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: trial {} has noise {} (a relative spread: 0 or "
                                                         "more, finite)", path_, r.id, *r.noise));
      try {
        r.samples_ms = nlohmann::json::parse(q.getColumn(i++).getString()).get<std::vector<double>>();
      } catch (const nlohmann::json::exception&) {
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("{} is damaged: trial {} has unreadable samples", path_, r.id));
      }
      r.verification_error = opt<double>(q.getColumn(i++));
      r.throttled = q.getColumn(i++).getInt() != 0;
      r.compile_ms = opt<double>(q.getColumn(i++));
      r.registers = opt<int>(q.getColumn(i++));
      r.smem_bytes = opt<int>(q.getColumn(i++));
      r.spill_bytes = opt<int>(q.getColumn(i++));
      r.message = q.getColumn(i++).getString();
      r.created_at = q.getColumn(i++).getString();
      r.timer = q.getColumn(i++).getString();
      r.kernel_hash = q.getColumn(i++).getString();
      r.problem_class = q.getColumn(i++).getString();
      r.problem.fields = q.getColumn(i++).getString();
      if (!fields_readable(r.problem.fields))
        throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: trial {} has a problem whose fields are not a "
                                                         "JSON object with each key once", path_, r.id));
      if (!q.getColumn(i).isNull()) {
        const SQLite::Column f = q.getColumn(i);
        if (!f.isFloat() && !f.isInteger())
          throw Error(ErrorKind::InvalidInput, fmt::format("{} is damaged: trial {} has a problem whose flops are not a number", path_, r.id));
        r.problem.flops = f.getDouble();
        if (!std::isfinite(*r.problem.flops) || *r.problem.flops < 0)
          throw Error(ErrorKind::InvalidInput,
                      fmt::format("{} is damaged: trial {} has a problem with {} flops", path_, r.id, *r.problem.flops));
      }
      ++i;
      if (q.getColumn(i).isNull())
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("{} is damaged: trial {} refers to a run row that is not there", path_, r.id));
      // Judged once per distinct row (a study's trials share a handful of problems).
      if (checked_problems.insert(fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.problem.kernel, r.problem.key,
                                              r.problem.fields, r.problem.flops ? *r.problem.flops : -1.0,
                                              r.problem.dtype, r.problem.out_dtype))
              .second)
        check_problem_row(path_, r.id, r.problem);
      // Every row's config is readable, and an ok row's one its template accepts at its problem
      // (stored_config.h), for every reader alike: a csv or T4 export, regress or merge passed what
      // best refused, and report what trials passed. (A failed row's config may be one the template
      // rejects: that may be why it failed.)
      const bool ok = r.status == "ok";
      if (checked_configs.insert(fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", ok, r.tmpl.name, r.tmpl.source_hash,
                                             r.problem.key, r.problem.fields, r.config_json))
              .second) {
        if (ok) (void)stored_config(path_, r);
        else (void)stored_config_text(path_, r.id, r.config_json);
      }
      out.push_back(std::move(r));
    }
    return out;
  });
}

std::vector<TrialRow> Store::trials(std::optional<std::int64_t> run_id) {
  if (!run_id) return query_trials("", [](SQLite::Statement&) {});
  return query_trials("WHERE t.run_id = ?", [&](SQLite::Statement& q) { q.bind(1, *run_id); });
}

std::vector<TrialRow> Store::trials(const TrialFilter& f) {
  return query_trials(
      "WHERE (?1 IS NULL OR t.run_id = ?1) AND (?2 = '' OR t.status = ?2) AND (?3 = '' OR t.source = ?3) "
      "AND (?4 = '' OR tp.name = ?4) AND (?5 = '' OR e.arch = ?5)",
      [&](SQLite::Statement& q) {
        if (f.run_id) q.bind(1, *f.run_id);
        else q.bind(1);
        q.bind(2, f.status);
        q.bind(3, f.source);
        q.bind(4, f.template_name);
        q.bind(5, f.arch);
      });
}

std::vector<std::string> Store::template_names() {
  return guard_database(path_, [&] {
    SQLite::Statement q(*db_, "SELECT DISTINCT name FROM templates ORDER BY name");
    std::vector<std::string> out;
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  });
}

void Store::check_every_row() {
  if (rows_checked_) return;
  (void)query_trials("", [](SQLite::Statement&) {});
  rows_checked_ = true;
}

void Store::check_rows_of(const TemplateId& tmpl, const std::string& problem_key) {
  (void)query_trials("WHERE tp.name = ? AND tp.source_hash = ? AND p.key = ?", [&](SQLite::Statement& q) {
    q.bind(1, tmpl.name);
    q.bind(2, tmpl.source_hash);
    q.bind(3, problem_key);
  });
}

// What a config text means at a stored row `r` (stored_config.h): read by value and, for a
// template this binary builds, given whole; by value alone where its template rejects it (a
// failed verdict may). Verdicts are matched to rows by it: a verdict written 64.0, or with its
// keys in another order, judges the config it names (battery round 14, F2).
static std::string config_meaning(const std::string& db, const TrialRow& r, const std::string& text) {
  for (bool whole : {true, false}) {
    try {
      return (whole ? stored_config(db, r.id, r.tmpl, &r.problem, text) : stored_config_text(db, r.id, text)).to_json();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::InvalidInput) throw;
    }
  }
  return text;
}

std::vector<TrialRow> Store::best(bool include_model, const std::vector<TemplateId>& current,
                                 std::vector<TrialRow>* failed_verification) {
  check_every_row();
  // The keys the virtual device failed, read once (as verification() judges them: any failing
  // run but the machine's own env_error fails the key).
  std::set<std::string> failed_keys;
  auto key_of = [](const std::string& config, const std::string& hash, const std::string& cls) {
    return fmt::format("{}\x1f{}\x1f{}", config, hash, cls);
  };
  if (schema_ >= 5)
    for (const TrialRow& v : query_trials("WHERE t.source = 'emulate' AND t.kernel_hash != '' AND t.problem_class != '' "
                                          "AND t.status NOT IN ('ok', 'env_error')",
                                          [](SQLite::Statement&) {}))
      failed_keys.insert(key_of(config_meaning(path_, v, v.config_json), v.kernel_hash, v.problem_class));
  std::vector<TrialRow> rows = query_trials(
      "WHERE t.status = 'ok' AND t.median_ms IS NOT NULL AND (t.source = 'cuda' OR ?1) "
      "AND (t.source != 'cuda' OR t.verification_error IS NOT NULL)",
      [&](SQLite::Statement& q) { q.bind(1, include_model ? 1 : 0); });
  auto is_current = [&](const TemplateId& t) {
    if (current.empty()) return true;
    for (const TemplateId& c : current)
      if (c.name == t.name && c.source_hash == t.source_hash && c.backend_hash == t.backend_hash) return true;
    return false;
  };
  // Lowest median per (template version, problem, environment); ties: the earlier trial.
  std::map<std::string, TrialRow> winners;
  for (TrialRow& r : rows) {
    if (!is_current(r.tmpl)) continue;
    // A damaged config never ranks: the database is refused (exit 2).
    const core::TuningConfig whole = stored_config(path_, r);
    bool failed = false;
    for (const std::string& cls : verification_classes(r.problem_class))
      failed = failed || failed_keys.count(key_of(whole.to_json(), r.kernel_hash, cls)) > 0;
    if (failed) {
      if (failed_verification) failed_verification->push_back(r);
      continue;
    }
    // What ranks is what the row means: a config that leaves a parameter out, its default filled
    // in (exports are read by mgpu-bench and production code, which take whole configs).
    if (whole.to_json() != r.config_json) {
      r.stored_config_json = r.config_json;
      r.config_json = whole.to_json();
    }
    std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.tmpl.name, r.tmpl.source_hash,
                                  r.tmpl.backend_hash, r.problem.key, r.env.device_name, r.env.arch, r.source);
    auto it = winners.find(key);
    if (it == winners.end() || *r.median_ms < *it->second.median_ms) winners[key] = r;
  }
  std::vector<TrialRow> out;
  for (auto& [k, r] : winners) out.push_back(std::move(r));
  return out;
}

std::set<std::string> Store::measured_configs(const TemplateId& t, const std::string& problem_key,
                                              const Environment& env, const std::string& source) {
  return guard_database(path_, [&] {
    SQLite::Statement q(*db_,
                        "SELECT DISTINCT c.json FROM trials t JOIN templates tp ON tp.id = t.template_id "
                        "JOIN problems p ON p.id = t.problem_id JOIN configs c ON c.id = t.config_id "
                        "JOIN environments e ON e.id = t.environment_id WHERE tp.name = ? AND tp.source_hash = ? "
                        "AND tp.backend_hash = ? AND p.key = ? AND e.device_name = ? AND e.arch = ? AND t.source = ?");
    q.bind(1, t.name);
    q.bind(2, t.source_hash);
    q.bind(3, t.backend_hash);
    q.bind(4, problem_key);
    q.bind(5, env.device_name);
    q.bind(6, env.arch);
    q.bind(7, source);
    std::set<std::string> out;
    while (q.executeStep()) out.insert(q.getColumn(0).getString());
    return out;
  });
}

std::vector<TrialRow> Store::history(const std::string& template_name, const std::string& problem_key,
                                     const std::string& config_json) {
  return query_trials("WHERE tp.name = ? AND p.key = ? AND c.json = ?", [&](SQLite::Statement& q) {
    q.bind(1, template_name);
    q.bind(2, problem_key);
    q.bind(3, config_json);
  });
}

int verified_schedules(std::string_view message) {
  constexpr std::string_view kUnder = "verified under ";
  const std::size_t at = message.find(kUnder);
  if (at == std::string_view::npos) return 1;
  int n = 0;
  const char* first = message.data() + at + kUnder.size();
  auto [end, ec] = std::from_chars(first, message.data() + message.size(), n);
  return ec == std::errc() && std::string_view(end, message.data() + message.size() - end).starts_with(" schedules") && n > 1
             ? n
             : 1;
}

std::vector<std::string> verification_classes(const std::string& problem_class) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= problem_class.size();) {
    std::size_t end = problem_class.find(';', start);
    if (end == std::string::npos) end = problem_class.size();
    if (end > start) out.push_back(problem_class.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

Verification Store::verification(const VerificationKey& key) {
  Verification v;
  if (key.kernel_hash.empty() || key.problem_class.empty() || schema_ < 5) return v;
  const std::vector<std::string> classes = verification_classes(key.problem_class);
  if (classes.size() > 1) {
    // Verified only when every class is; failed when any failed.
    bool all = true;
    for (const std::string& c : classes) {
      Verification one = verification({key.config_json, key.kernel_hash, c});
      v.passed += one.passed;
      v.failed += one.failed;
      v.schedules = v.schedules == 0 ? one.schedules : std::min(v.schedules, one.schedules);
      if (!v.failure && one.failure) v.failure = std::move(one.failure);
      all = all && one.state == Verification::State::Verified;
    }
    v.state = v.failed > 0 ? Verification::State::Failed : all ? Verification::State::Verified : Verification::State::None;
    return v;
  }
  // Verdicts on the virtual device for this binary, run-time parameters and problem class; a
  // trial the machine failed (env_error) says nothing about the kernel. The config is matched by
  // what it means, not by its text (config_meaning).
  for (TrialRow& r : query_trials("WHERE t.source = 'emulate' AND t.kernel_hash = ? AND t.problem_class = ? AND "
                                  "t.status != 'env_error'",
                                  [&](SQLite::Statement& q) {
                                    q.bind(1, key.kernel_hash);
                                    q.bind(2, key.problem_class);
                                  })) {
    if (r.config_json != key.config_json &&
        config_meaning(path_, r, r.config_json) != config_meaning(path_, r, key.config_json))
      continue;
    bool ok = r.status == "ok";
    (ok ? v.passed : v.failed) += 1;
    if (ok) v.schedules = std::max(v.schedules, verified_schedules(r.message));
    if (!ok && !v.failure) v.failure = std::move(r);
  }
  v.state = v.failed > 0 ? Verification::State::Failed
            : v.passed > 0 ? Verification::State::Verified
                           : Verification::State::None;
  return v;
}

static bool insert_evidence(SQLite::Database& db, const EvidenceRecord& e, const std::string& created_at) {
  SQLite::Statement q(db, "INSERT OR IGNORE INTO kernel_evidence(kernel_hash, backend_hash, assembler, evidence, lints, "
                          "created_at) VALUES (?,?,?,?,?,?)");
  q.bind(1, e.kernel_hash);
  q.bind(2, e.backend_hash);
  q.bind(3, e.assembler);
  q.bind(4, e.evidence);
  q.bind(5, e.lints.empty() ? std::string("[]") : e.lints);
  q.bind(6, created_at);
  return q.exec() > 0;
}

void Store::record_evidence(const EvidenceRecord& e) {
  if (schema_ < 7) return;
  guard_database(path_, [&] { insert_evidence(*db_, e, now_utc()); });
}

bool Store::import_evidence(const EvidenceRecord& e) {
  if (schema_ < 7) return false;
  return guard_database(path_, [&] { return insert_evidence(*db_, e, e.created_at.empty() ? now_utc() : e.created_at); });
}

static EvidenceRecord read_evidence(SQLite::Statement& q) {
  return {q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getString(),
          q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(5).getString()};
}

std::optional<EvidenceRecord> Store::evidence(const std::string& kernel_hash, const std::string& backend_hash,
                                              const std::string& assembler) {
  if (schema_ < 7 || kernel_hash.empty()) return std::nullopt;
  return guard_database(path_, [&]() -> std::optional<EvidenceRecord> {
    SQLite::Statement q(*db_, "SELECT kernel_hash, backend_hash, assembler, evidence, lints, created_at FROM "
                              "kernel_evidence WHERE kernel_hash = ? AND backend_hash = ? AND (?3 = '' OR assembler = ?3) "
                              "ORDER BY created_at DESC, rowid DESC LIMIT 1");
    q.bind(1, kernel_hash);
    q.bind(2, backend_hash);
    q.bind(3, assembler);
    if (!q.executeStep()) return std::nullopt;
    return read_evidence(q);
  });
}

std::vector<EvidenceRecord> Store::all_evidence() {
  if (schema_ < 7) return {};
  return guard_database(path_, [&] {
    SQLite::Statement q(*db_, "SELECT kernel_hash, backend_hash, assembler, evidence, lints, created_at FROM "
                              "kernel_evidence ORDER BY rowid");
    std::vector<EvidenceRecord> out;
    while (q.executeStep()) out.push_back(read_evidence(q));
    return out;
  });
}

std::optional<std::string> Store::passing_verification_message(const std::string& kernel_hash) {
  if (schema_ < 5 || kernel_hash.empty()) return std::nullopt;
  return guard_database(path_, [&]() -> std::optional<std::string> {
    SQLite::Statement q(*db_, "SELECT message FROM trials WHERE source = 'emulate' AND status = 'ok' AND kernel_hash = ? "
                              "ORDER BY id DESC LIMIT 1");
    q.bind(1, kernel_hash);
    if (!q.executeStep()) return std::nullopt;
    return q.getColumn(0).getString();
  });
}

std::string_view verification_label(const TrialRow& row, const Verification& virtual_device) {
  // A race or hang the virtual device found outranks a lucky run on the GPU.
  if (virtual_device.state == Verification::State::Failed) return "failed";
  if (row.source == "cuda" && row.status == "ok" && row.verification_error) return "hardware";
  return virtual_device.state == Verification::State::Verified ? "virtual" : "none";
}

bool Store::integrity_ok() {
  return guard_database(path_, [&] { return results::integrity_ok(*db_); });
}

}  // namespace mgpu::results
