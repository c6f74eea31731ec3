#include "results/schema.h"

#include <regex>
#include <string>
#include <vector>

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include "core/error.h"

namespace mgpu::results {
namespace {

// A step that SQL alone cannot write (migrate() runs widen_trials_source for it).
const char kWidenTrialsSource[] = "-- widen trials.source";

// Adds 'imported' to the trials' source CHECK. SQLite cannot change a CHECK in place: the
// table is recreated from its stored CREATE statement with the CHECK widened, the rows copied
// column for column, and its indexes recreated from their stored SQL.
void widen_trials_source(SQLite::Database& db) {
  std::string sql = db.execAndGet("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'trials'").getString();
  // The list's end as SQLite keeps the statement text: spacing and line breaks as written.
  static const std::regex from(R"('emulate'\s*\))");
  const std::string to = "'emulate', 'imported')";
  std::smatch m;
  size_t open = sql.find('(');
  if (!std::regex_search(sql, m, from) || open == std::string::npos)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} cannot be migrated: its trials table does not have the source CHECK (source IN "
                                  "(..., 'emulate')) of schema version 5, which this step widens; it was changed "
                                  "behind mgpu-tune's back; the migration was rolled back",
                                  sqlite3_db_filename(db.getHandle(), "main")));
  sql.replace(static_cast<size_t>(m.position(0)), static_cast<size_t>(m.length(0)), to);
  sql.replace(0, open, "CREATE TABLE trials_widened");
  std::vector<std::string> indexes;
  SQLite::Statement q(db, "SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'trials' AND sql IS NOT NULL");
  while (q.executeStep()) indexes.push_back(q.getColumn(0).getString());
  db.exec(sql);
  db.exec("INSERT INTO trials_widened SELECT * FROM trials; DROP TABLE trials; ALTER TABLE trials_widened RENAME TO trials;");
  for (const std::string& index : indexes) db.exec(index);
}

// Migration N takes a database from version N-1 to N. Never edit a shipped step: add one.
const char* const kMigrations[] = {
    // 1: the first schema.
    R"sql(
    CREATE TABLE environments(
      id INTEGER PRIMARY KEY,
      device_name TEXT NOT NULL,          -- the driver's name, or "model:<device>" for predictions
      arch TEXT NOT NULL,
      compute_capability TEXT NOT NULL,
      sm_count INTEGER NOT NULL,
      driver_version TEXT NOT NULL,
      cuda_version TEXT NOT NULL,
      sm_clock_mhz REAL,
      UNIQUE(device_name, arch, compute_capability, sm_count, driver_version, cuda_version));
    CREATE TABLE templates(
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      source_hash TEXT NOT NULL,          -- the template's kernel-building sources
      backend_hash TEXT NOT NULL,         -- MLIR version, pass pipeline, assembler
      UNIQUE(name, source_hash, backend_hash));
    CREATE TABLE problems(
      id INTEGER PRIMARY KEY,
      kernel TEXT NOT NULL,
      key TEXT NOT NULL,
      m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
      dtype TEXT NOT NULL, out_dtype TEXT NOT NULL, layout TEXT NOT NULL,
      UNIQUE(kernel, key));
    CREATE TABLE configs(
      id INTEGER PRIMARY KEY,
      json TEXT NOT NULL UNIQUE);        -- canonical JSON of the TuningConfig
    CREATE TABLE runs(
      id INTEGER PRIMARY KEY,
      uuid TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL CHECK(kind IN ('tune', 'regress', 'bench')),
      arguments TEXT NOT NULL,
      started_at TEXT NOT NULL,
      ended_at TEXT,
      tool_version TEXT NOT NULL);
    CREATE TABLE trials(
      id INTEGER PRIMARY KEY,
      uuid TEXT NOT NULL UNIQUE,
      run_id INTEGER NOT NULL REFERENCES runs(id),
      template_id INTEGER NOT NULL REFERENCES templates(id),
      problem_id INTEGER NOT NULL REFERENCES problems(id),
      config_id INTEGER NOT NULL REFERENCES configs(id),
      environment_id INTEGER NOT NULL REFERENCES environments(id),
      status TEXT NOT NULL,
      source TEXT NOT NULL CHECK(source IN ('cuda', 'model', 'replay')),
      median_ms REAL, min_ms REAL, mean_ms REAL, noise REAL,
      sample_count INTEGER NOT NULL DEFAULT 0,
      samples_json TEXT NOT NULL DEFAULT '[]',
      verification_error REAL,
      throttled INTEGER NOT NULL DEFAULT 0,
      compile_ms REAL, registers INTEGER, smem_bytes INTEGER, spill_bytes INTEGER,
      message TEXT NOT NULL DEFAULT '',
      created_at TEXT NOT NULL);
    CREATE INDEX trials_by_key ON trials(template_id, problem_id, environment_id, config_id);
    CREATE INDEX trials_by_run ON trials(run_id);
    )sql",
    // 2: how a measured trial was timed ("cupti" | "events"; empty for predictions and replays).
    R"sql(
    ALTER TABLE trials ADD COLUMN timer TEXT NOT NULL DEFAULT '';
    )sql",
    // 3: trials claimed before they are measured, so concurrent runs share a study's budget
    // (results/claims.h). Not results: merge and export ignore it.
    R"sql(
    CREATE TABLE IF NOT EXISTS claims(
      id INTEGER PRIMARY KEY,
      study TEXT NOT NULL,                -- template version, problem, device name, source
      config TEXT NOT NULL,               -- canonical config JSON
      host TEXT NOT NULL,
      pid INTEGER NOT NULL,
      process_start TEXT NOT NULL,        -- boot id and start ticks: tells a reused pid apart
      heartbeat_at INTEGER NOT NULL,      -- unix seconds; a claim not renewed for the lease is dead
      UNIQUE(study, config));
    )sql",
    // 4: trials verified on the virtual device (source 'emulate': no times, a verification
    // error and the checkers' findings). SQLite cannot change a CHECK in place: the table is
    // rebuilt with the same columns in the same order.
    R"sql(
    CREATE TABLE trials_v4(
      id INTEGER PRIMARY KEY,
      uuid TEXT NOT NULL UNIQUE,
      run_id INTEGER NOT NULL REFERENCES runs(id),
      template_id INTEGER NOT NULL REFERENCES templates(id),
      problem_id INTEGER NOT NULL REFERENCES problems(id),
      config_id INTEGER NOT NULL REFERENCES configs(id),
      environment_id INTEGER NOT NULL REFERENCES environments(id),
      status TEXT NOT NULL,
      source TEXT NOT NULL CHECK(source IN ('cuda', 'model', 'replay', 'emulate')),
      median_ms REAL, min_ms REAL, mean_ms REAL, noise REAL,
      sample_count INTEGER NOT NULL DEFAULT 0,
      samples_json TEXT NOT NULL DEFAULT '[]',
      verification_error REAL,
      throttled INTEGER NOT NULL DEFAULT 0,
      compile_ms REAL, registers INTEGER, smem_bytes INTEGER, spill_bytes INTEGER,
      message TEXT NOT NULL DEFAULT '',
      created_at TEXT NOT NULL,
      timer TEXT NOT NULL DEFAULT '');
    INSERT INTO trials_v4 SELECT * FROM trials;
    DROP TABLE trials;
    ALTER TABLE trials_v4 RENAME TO trials;
    CREATE INDEX trials_by_key ON trials(template_id, problem_id, environment_id, config_id);
    CREATE INDEX trials_by_run ON trials(run_id);
    )sql",
    // 5: verification keys (harness/verify). kernel_hash: the content hash of the compiled
    // kernel (its PTX) a trial ran or predicted; problem_class: the class of problem it ran
    // at for that kernel (ragged, K tail, tiles per CTA, idle CTAs, cluster). A verification on
    // the virtual device counts for every problem of its class run by the same binary.
    R"sql(
    ALTER TABLE trials ADD COLUMN kernel_hash TEXT NOT NULL DEFAULT '';
    ALTER TABLE trials ADD COLUMN problem_class TEXT NOT NULL DEFAULT '';
    CREATE INDEX trials_by_kernel ON trials(kernel_hash, problem_class);
    -- Runs of 'mgpu-tune verify'. Rebuilding the parent table of trials: migrate() turns the
    -- foreign keys off around the migration and checks them all before committing.
    CREATE TABLE runs_v5(
      id INTEGER PRIMARY KEY,
      uuid TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL CHECK(kind IN ('tune', 'regress', 'bench', 'verify')),
      arguments TEXT NOT NULL,
      started_at TEXT NOT NULL,
      ended_at TEXT,
      tool_version TEXT NOT NULL);
    INSERT INTO runs_v5 SELECT * FROM runs;
    DROP TABLE runs;
    ALTER TABLE runs_v5 RENAME TO runs;
    )sql",
    // 6: trials imported from another tool's results (source 'imported': `mgpu-tune import
    // --t4`). A step in code (widen_trials_source): the table is rebuilt from its own SQL, so it
    // keeps whatever columns the steps before it added.
    kWidenTrialsSource,
    // 7: the SASS evidence of compiled kernels (issue 19), gathered once per binary: a new
    // table, nothing else changes. kernel_hash: core::kernel_hash of the PTX, as trials keep it;
    // backend_hash: the toolchain that assembled it, as templates keep it; assembler: the one
    // actually used (ptxas | nvjitlink: relocatable assembly drops setmaxnreg). evidence: JSON
    // (core/sass/kernel_evidence.h); lints: what the recording mgpu-tune derived from it, for
    // SQL readers (mgpu-tune derives them again from the evidence).
    R"sql(
    CREATE TABLE kernel_evidence(
      kernel_hash TEXT NOT NULL,
      backend_hash TEXT NOT NULL,
      assembler TEXT NOT NULL,
      evidence TEXT NOT NULL,
      lints TEXT NOT NULL DEFAULT '[]',
      created_at TEXT NOT NULL,
      PRIMARY KEY(kernel_hash, backend_hash, assembler));
    )sql",
    // 8: problems of any op (kernels/op_template.h), not only matmuls: the op's fields as a JSON
    // object (names and values as text, in the op's order) and the flops its kernels do, which
    // TFLOP/s is counted from. kernel names the op; m, n, k are 0 for an op that is not a matmul.
    // Older rows keep fields '{}' and flops NULL: a matmul's flops are 2 m n k.
    R"sql(
    ALTER TABLE problems ADD COLUMN fields TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE problems ADD COLUMN flops REAL;
    )sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion);

}  // namespace

int schema_version(SQLite::Database& db) { return db.execAndGet("PRAGMA user_version").getInt(); }

void migrate(SQLite::Database& db) {
  if (schema_version(db) == kSchemaVersion) return;  // the common case takes no write lock
  // One exclusive transaction for the whole migration: processes opening the same new file
  // at once queue on the write lock, and each re-reads the version inside it, so exactly one
  // creates the schema and the others find it done.
  // A step may rebuild a table others reference (SQLite's documented procedure: foreign keys
  // off outside the transaction, every reference checked before the commit).
  struct ForeignKeysOff {
    SQLite::Database& db;
    explicit ForeignKeysOff(SQLite::Database& d) : db(d) { db.exec("PRAGMA foreign_keys = OFF"); }
    ~ForeignKeysOff() { db.exec("PRAGMA foreign_keys = ON"); }
  } fk_off(db);
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  int v = schema_version(db);
  if (v > kSchemaVersion)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} has schema version {}, newer than this mgpu-tune knows ({}): use a newer "
                                  "mgpu-tune; the file was not changed", sqlite3_db_filename(db.getHandle(), "main"), v, kSchemaVersion));
  if (v == 0 && db.execAndGet("SELECT count(*) FROM sqlite_schema").getInt() > 0)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is an SQLite database of something else (tables, but no mgpu-tune schema "
                                  "version): nothing was written", sqlite3_db_filename(db.getHandle(), "main")));
  if (v == kSchemaVersion) return;  // another process migrated it while this one waited
  for (; v < kSchemaVersion; ++v) {
    if (kMigrations[v] == kWidenTrialsSource) widen_trials_source(db);
    else db.exec(kMigrations[v]);
  }
  if (db.execAndGet("SELECT count(*) FROM pragma_foreign_key_check").getInt() != 0)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{}: a trial names a run, template, problem, config or environment that is not there; "
                                  "the migration was rolled back", sqlite3_db_filename(db.getHandle(), "main")));
  db.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion));
  tx.commit();
}

}  // namespace mgpu::results
