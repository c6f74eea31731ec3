#include "results/claims.h"

#include <cmath>

#include <sqlite3.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include "core/error.h"
#include "results/database.h"
#include "results/stored_config.h"

namespace mgpu::results {
namespace {

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// When the process started, in clock ticks since boot (field 22 of /proc/PID/stat), plus the
// boot id: a pid reused by a later process, or after a reboot, reads differently.
std::string process_start(long pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(stat, line)) return "";
  size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return "";
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
  }
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(boot, boot_id);
  return boot_id + ":" + field;
}

bool alive(long pid, const std::string& start) {
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  std::string now = process_start(pid);
  return now.empty() || start.empty() || now == start;
}

// The study's trials joined to their names, counted statuses only (a config measured twice
// counts once).
constexpr const char* kStudyTrials =
    "FROM trials t JOIN templates tp ON tp.id = t.template_id JOIN problems p ON p.id = t.problem_id "
    "JOIN configs c ON c.id = t.config_id JOIN environments e ON e.id = t.environment_id "
    "WHERE tp.name = ?1 AND tp.source_hash = ?2 AND tp.backend_hash = ?3 AND p.key = ?4 AND e.device_name = ?5 "
    "AND t.source = ?6 AND t.status != 'env_error'";

void bind_study(SQLite::Statement& q, const StudyKey& s) {
  q.bind(1, s.tmpl.name);
  q.bind(2, s.tmpl.source_hash);
  q.bind(3, s.tmpl.backend_hash);
  q.bind(4, s.problem_key);
  q.bind(5, s.device_name);
  q.bind(6, s.source);
}

}  // namespace

std::string StudyKey::text() const {
  return fmt::format("{}|{}|{}|{}|{}|{}", tmpl.name, tmpl.source_hash, tmpl.backend_hash, problem_key, device_name,
                     source);
}

void Claims::reclaim_dead() {
  const std::string host = host_name();
  const std::int64_t now = unix_now();
  std::vector<std::int64_t> dead;
  SQLite::Statement q(db_, "SELECT id, host, pid, process_start, heartbeat_at FROM claims WHERE study = ?");
  q.bind(1, study_.text());
  while (q.executeStep()) {
    bool here = q.getColumn(1).getString() == host;
    long pid = static_cast<long>(q.getColumn(2).getInt64());
    bool expired = now - q.getColumn(4).getInt64() > kLeaseSeconds;
    if (expired || (here && !alive(pid, q.getColumn(3).getString()))) dead.push_back(q.getColumn(0).getInt64());
  }
  for (std::int64_t id : dead) {
    SQLite::Statement d(db_, "DELETE FROM claims WHERE id = ?");
    d.bind(1, id);
    d.exec();
  }
}

const std::string& Claims::path() const {
  if (path_.empty()) {  // the file's path, never the URI it was opened by
    const char* f = sqlite3_db_filename(db_.getHandle(), "main");
    path_ = f && *f ? f : "the results database";
  }
  return path_;
}

ClaimResult Claims::claim(const std::string& config_json, int budget) {
  // A full disk or a lock held too long is said as such (database_error), like the store's own.
  return guard_database(path(), [&] {
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    const std::string host = host_name();
    const long pid = static_cast<long>(getpid());
    {  // a live holder renews its lease with every claim
      SQLite::Statement renew(db_, "UPDATE claims SET heartbeat_at = ? WHERE host = ? AND pid = ?");
      renew.bind(1, unix_now());
      renew.bind(2, host);
      renew.bind(3, static_cast<std::int64_t>(pid));
      renew.exec();
    }
    reclaim_dead();
    SQLite::Statement done(db_, fmt::format("SELECT 1 {} AND c.json = ?7 LIMIT 1", kStudyTrials));
    bind_study(done, study_);
    done.bind(7, config_json);
    SQLite::Statement held(db_, "SELECT 1 FROM claims WHERE study = ? AND config = ?");
    held.bind(1, study_.text());
    held.bind(2, config_json);
    if (done.executeStep() || held.executeStep()) {
      tx.commit();  // the renewals and reclaims stand
      return ClaimResult::Taken;
    }
    SQLite::Statement open(db_, fmt::format("SELECT count(*) FROM claims WHERE study = ?7 AND config NOT IN "
                                            "(SELECT c.json {})", kStudyTrials));
    bind_study(open, study_);
    open.bind(7, study_.text());
    open.executeStep();
    int in_flight = open.getColumn(0).getInt();
    if (counted() + in_flight >= budget) {
      tx.commit();
      return ClaimResult::BudgetReached;
    }
    SQLite::Statement ins(db_, "INSERT INTO claims(study, config, host, pid, process_start, heartbeat_at) "
                               "VALUES (?,?,?,?,?,?)");
    ins.bind(1, study_.text());
    ins.bind(2, config_json);
    ins.bind(3, host);
    ins.bind(4, static_cast<std::int64_t>(pid));
    ins.bind(5, process_start(pid));
    ins.bind(6, unix_now());
    ins.exec();
    tx.commit();
    return ClaimResult::Claimed;
  });
}

void Claims::release(const std::string& config_json) {
  return guard_database(path(), [&] {
    SQLite::Statement d(db_, "DELETE FROM claims WHERE study = ? AND config = ? AND host = ? AND pid = ?");
    d.bind(1, study_.text());
    d.bind(2, config_json);
    d.bind(3, host_name());
    d.bind(4, static_cast<std::int64_t>(getpid()));
    d.exec();
  });
}

int Claims::counted() {
  return guard_database(path(), [&] {
    SQLite::Statement q(db_, fmt::format("SELECT count(DISTINCT t.config_id) {}", kStudyTrials));
    bind_study(q, study_);
    q.executeStep();
    return q.getColumn(0).getInt();
  });
}

std::vector<StudyTrial> Claims::trials_after(std::int64_t after_id) {
  return guard_database(path(), [&] {
    SQLite::Statement q(db_, fmt::format("SELECT t.id, c.json, t.status, t.median_ms, t.noise, p.kernel {} AND t.id > ?7 "
                                         "ORDER BY t.id", kStudyTrials));
    bind_study(q, study_);
    q.bind(7, after_id);
    std::vector<StudyTrial> out;
    while (q.executeStep()) {
      StudyTrial t;
      t.id = q.getColumn(0).getInt64();
      t.config_json = q.getColumn(1).getString();
      t.status = q.getColumn(2).getString();
      if (!q.getColumn(3).isNull()) {
        // What every other reader refuses (store.cc's stored_time) must not rank first here.
        const SQLite::Column m = q.getColumn(3);
        const double v = m.getDouble();
        if (!(m.isInteger() || m.isFloat()) || !std::isfinite(v) || v <= 0)
          throw core::Error(core::ErrorKind::InvalidInput,
                            fmt::format("{} is damaged: trial {} has median_ms {} (a time must be a positive finite number)",
                                  path(), t.id, m.getString().substr(0, 40)));
        t.median_ms = v;
      } else if (t.status == "ok" && study_.source != "emulate") {
        // As every other reader (store.cc): an ok measurement or prediction without its time.
        throw core::Error(core::ErrorKind::InvalidInput,
                          fmt::format("{} is damaged: trial {} is an ok {} trial with no median_ms (only the virtual "
                                      "device's verdicts have no time)", path(), t.id, study_.source.substr(0, 40)));
      }
      if (!q.getColumn(4).isNull()) {
        const SQLite::Column n = q.getColumn(4);
        const double v = n.getDouble();
        if (!(n.isInteger() || n.isFloat()) || !std::isfinite(v) || v < 0)
          throw core::Error(core::ErrorKind::InvalidInput,
                            fmt::format("{} is damaged: trial {} has noise {} (a relative spread: 0 or more, finite)",
                                        path(), t.id, n.getString().substr(0, 40)));
        t.noise = v;
      }
      t.problem_kernel = q.getColumn(5).getString();
      out.push_back(std::move(t));
    }
    return out;
  });
}

core::TuningConfig study_trial_config(const std::string& db, const StudyTrial& r, const TemplateId& tmpl,
                                      const ProblemRecord& problem) {
  if (r.problem_kernel != problem.kernel)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is damaged: trial {} has a problem row of kernel '{}' under the key {} of {}", db,
                                  r.id, r.problem_kernel.substr(0, 40), problem.key, problem.kernel));
  const bool ok = r.status == "ok" && r.median_ms;
  return stored_config(db, r.id, tmpl, ok ? &problem : nullptr, r.config_json);
}

}  // namespace mgpu::results
