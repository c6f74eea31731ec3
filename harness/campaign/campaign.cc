#include "harness/campaign/campaign.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_input.h"
#include "kernels/op_registry.h"
#include "results/output_file.h"
#include "results/output_file.h"

namespace mgpu::harness {
namespace {

namespace fs = std::filesystem;
using core::Error;
using core::ErrorKind;

// Through results::write_file_atomically: a full disk is exit 1 with its reason (ENOSPC), the
// temporary file is removed on any failure, a device (/dev/stdout) is written in place.
void write_atomically(const std::string& path, const std::string& text) { results::write_file_atomically(path, text); }

// The largest status file read: a task writes its exit code and a newline ("143\n"); more is
// no exit code, and a huge file put in its place is not read whole.
constexpr std::size_t kMaxStatusBytes = 4096;

// A task's status file as text, or nullopt with *why saying why not ("" when there is no
// file). Only a regular file is read: a FIFO in its place (made by hand, or by a half-broken
// shared file system), or a symlink to one, blocked status and resume in open() for good, and
// /dev/zero would never end. The type is judged before the open (to name a socket or a folder)
// and again on what was opened, without waiting, so a FIFO swapped in between cannot block.
std::optional<std::string> read_status_file(const std::string& path, std::string* why) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // through symlinks, as open() sees it
  if (!fs::exists(fs::symlink_status(path, ec))) return std::nullopt;
  const auto not_regular = [&](fs::file_type type) -> std::optional<std::string> {
    *why = fmt::format("{} is {}, not the exit code the task writes", path,
                       type == fs::file_type::not_found ? std::string_view("a symlink to nothing")
                                                        : core::file_type_name(type));
    return std::nullopt;
  };
  if (!fs::is_regular_file(st)) return not_regular(st.type());
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = fmt::format("{} cannot be read ({})", path, std::strerror(errno));
    return std::nullopt;
  }
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)) {
    ::close(fd);
    return not_regular(S_ISFIFO(opened.st_mode) ? fs::file_type::fifo : fs::file_type::unknown);
  }
  std::string text;
  char buf[512];
  ssize_t n = 0;
  while (text.size() <= kMaxStatusBytes && ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) text.append(buf, static_cast<std::size_t>(n));
  const int read_errno = n < 0 ? errno : 0;
  ::close(fd);
  if (read_errno != 0) {
    *why = fmt::format("{} cannot be read ({})", path, std::strerror(read_errno));
    return std::nullopt;
  }
  if (text.size() > kMaxStatusBytes) {
    *why = fmt::format("{} holds more than {} bytes, not the exit code the task writes", path, kMaxStatusBytes);
    return std::nullopt;
  }
  return text;
}

// An integer within [lo, hi], written as one: JSON's 1e30 or 2^70 are no task sizes, and one
// rule holds for every key (1e2 is refused as "format" is, round 15 F5). `text` is the file's
// text, so a message quotes the number as the user wrote it, not as it was parsed.
std::int64_t integer_value(const nlohmann::json& v, const char* key, std::int64_t lo, std::int64_t hi,
                           std::string_view text, const std::string& pointer) {
  auto written = [&] { return core::number_as_written(text, pointer, v).substr(0, 80); };
  if (v.is_number_float()) {
    const std::string w = written();
    if (w.find_first_not_of("-0123456789") == std::string::npos)  // a whole number past 64 bits: JSON reads a float
      throw Error(ErrorKind::InvalidInput, fmt::format("\"{}\" {} is out of range ({}..{})", key, w, lo, hi));
  }
  if (!v.is_number_integer())
    throw Error(ErrorKind::InvalidInput, fmt::format("\"{}\" must be an integer written in digits, not {}", key,
                                                     v.is_number() ? written() : v.dump().substr(0, 40)));
  if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)
                             : v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
    throw Error(ErrorKind::InvalidInput, fmt::format("\"{}\" {} is out of range ({}..{})", key, written(), lo, hi));
  return v.get<std::int64_t>();
}
// `at` is the JSON pointer of the object holding `key` ("/tasks/2").
std::int64_t integer(const nlohmann::json& j, const char* key, std::int64_t lo, std::int64_t hi, std::string_view text,
                     const std::string& at) {
  return integer_value(j.at(key), key, lo, hi, text, at + "/" + key);
}

constexpr std::int64_t kMaxInt = std::numeric_limits<std::int32_t>::max();

// Every other JSON input refuses a key it does not know; a hand-edited task with "tile_m": 64
// would otherwise run and tune every tile_m.
void refuse_unknown_keys(const nlohmann::json& j, std::initializer_list<std::string_view> known, const char* what) {
  if (!j.is_object()) throw Error(ErrorKind::InvalidInput, fmt::format("{} must be an object, not {}", what, j.dump()));
  for (const auto& [key, value] : j.items())
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (std::string_view k : known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
      throw Error(ErrorKind::InvalidInput, fmt::format("{} has an unknown key \"{}\" (it takes: {})", what, key, list));
    }
}

CampaignTask read_task(const nlohmann::json& t, std::string_view text, const std::string& at) {
  refuse_unknown_keys(t, {"index", "op", "arch", "problem", "strategy", "trials", "time_budget_s", "device", "seed", "key"},
                      "the task");
  CampaignTask task;
  task.index = static_cast<int>(integer(t, "index", 0, kMaxInt, text, at));
  task.arch = t.at("arch");
  if (t.contains("op")) task.op = t.at("op").get<std::string>();
  if (task.op != "matmul") {
    std::string ops;
    bool known = false;
    for (const kernels::OpEntry& e : kernels::ops()) {
      known = known || e.op == task.op;
      ops += (ops.empty() ? "" : ", ") + e.op;
    }
    if (!known)
      throw Error(ErrorKind::InvalidInput, fmt::format("the task's \"op\" '{}' is no op ({})", task.op.substr(0, 40), ops));
    if (!t.at("problem").is_string())
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("an {} task's \"problem\" is its key (text), not {}", task.op, t.at("problem").dump()));
    task.problem_key = t.at("problem").get<std::string>();
  } else {
    refuse_unknown_keys(t.at("problem"), {"m", "n", "k", "dtype", "out_dtype", "layout"}, "its \"problem\"");
    const auto& p = t.at("problem");
    // The problem's own bounds are the tuning command's to check (negative sizes included).
    task.problem.m = integer(p, "m", -kMaxInt, kMaxInt, text, at + "/problem");
    task.problem.n = integer(p, "n", -kMaxInt, kMaxInt, text, at + "/problem");
    task.problem.k = integer(p, "k", -kMaxInt, kMaxInt, text, at + "/problem");
    task.problem.in_dtype = kernels::parse_dtype(p.at("dtype").get<std::string>());
    task.problem.out_dtype = kernels::parse_dtype(p.at("out_dtype").get<std::string>());
    task.problem.b_layout = kernels::parse_b_layout(p.at("layout").get<std::string>());
  }
  task.strategy = t.at("strategy");
  task.trials = static_cast<int>(integer(t, "trials", -kMaxInt, kMaxInt, text, at));
  task.time_budget_s = t.value("time_budget_s", 0.0);
  task.device = t.value("device", "auto");
  if (t.contains("seed")) task.seed = static_cast<std::uint64_t>(integer(t, "seed", 0, static_cast<std::int64_t>(kMaxCampaignSeed), text, at));
  return task;
}

// The task indices of a submission: an int each, or the status would name other tasks.
std::vector<int> indices(const nlohmann::json& list, std::string_view text, const std::string& at) {
  if (!list.is_array()) throw Error(ErrorKind::InvalidInput, "a submission's \"tasks\" must be a list");
  std::vector<int> out;
  for (std::size_t i = 0; i < list.size(); ++i)
    out.push_back(static_cast<int>(integer_value(list[i], "tasks", 0, kMaxInt, text, fmt::format("{}/{}", at, i))));
  return out;
}

}  // namespace

void check_campaign_names(const Campaign& c) {
  // The campaign file's own folder first: its shards go beside it (a path under a file was said
  // as a shard database's path, one the user never gave: round 16, F6).
  results::check_output_folder(c.path);
  auto word = [](unsigned char ch) { return std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.'; };
  if (c.name.empty() || !std::all_of(c.name.begin(), c.name.end(), word))
    throw Error(ErrorKind::InvalidInput,
                fmt::format("'{}' is no campaign name (letters, digits, ., - and _; --name gives one)", c.name));
  // The longest file named after the campaign is its database's journal, NAME.db-journal:
  // a name too long for one file name (255 bytes on most file systems) can never run.
  const std::string longest = c.name + ".db-journal";
  long name_max = ::pathconf(c.dir().c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = 255;
  if (static_cast<long>(longest.size()) > name_max)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("the campaign name is {} characters: its files ({}.db-journal, {}-shards, ...) would "
                            "have names longer than the {} bytes a file name may have here (--name gives a shorter one)",
                            c.name.size(), c.name.substr(0, 20) + "...", c.name.substr(0, 20) + "...", name_max));
  // Any other character of the folder is quoted in the generated scripts; a control character
  // (a newline) would end the line it is on.
  std::string dir = c.dir();
  if (std::any_of(dir.begin(), dir.end(), [](unsigned char ch) { return std::iscntrl(ch); }))
    throw Error(ErrorKind::InvalidInput, "the campaign's folder has a control character (a newline?) in its path");
}

std::string Campaign::dir() const { return fs::absolute(path).parent_path().string(); }
std::string Campaign::shard(int i) const { return fmt::format("{}/{}-shards/task-{}.db", dir(), name, i); }
std::string Campaign::status_file(int i) const { return fmt::format("{}/{}-shards/task-{}.status", dir(), name, i); }
std::string Campaign::merged_db() const { return fmt::format("{}/{}.db", dir(), name); }
std::string Campaign::logs_dir() const { return fmt::format("{}/{}-logs", dir(), name); }
std::string Campaign::scripts_dir() const { return fmt::format("{}/{}-slurm", dir(), name); }

std::optional<int> Campaign::exit_code(int i) const {
  std::string why;
  const std::optional<std::string> text = read_status_file(status_file(i), &why);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  int code = 0;
  std::string rest;
  if (in >> code && !(in >> rest)) return code;
  return std::nullopt;
}

std::optional<std::string> Campaign::status_file_problem(int i) const {
  const std::string path = status_file(i);
  std::string why;
  if (read_status_file(path, &why)) {
    if (exit_code(i)) return std::nullopt;
    return fmt::format("{} holds no exit code (damaged? the task wrote it when it ended)", path);
  }
  if (why.empty()) return std::nullopt;  // the task has not ended (or never ran)
  return why;
}

bool is_job_id(const std::string& text) {
  return !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
}

Campaign load_campaign(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw Error(ErrorKind::InvalidInput, fmt::format("no campaign file {} (write one with 'campaign plan')", path));
  const std::string text = core::read_input_file(path, "campaign file", std::uint64_t{64} << 20);
  Campaign c;
  c.path = path;
  try {
    nlohmann::json j = core::parse_user_json(text, "");  // a key given twice (hand-edited) is refused
    refuse_unknown_keys(j, {"format", "name", "tasks", "submissions"}, "the campaign");
    if (integer(j, "format", 0, kMaxInt, text, "") != 1)
      throw Error(ErrorKind::InvalidInput, fmt::format("campaign format {} is not 1",
                                                       core::number_as_written(text, "/format", j.at("format"))));
    c.name = j.at("name").get<std::string>();
    const nlohmann::json& tasks = j.at("tasks");
    if (!tasks.is_array()) throw Error(ErrorKind::InvalidInput, "\"tasks\" must be a list");
    for (size_t i = 0; i < tasks.size(); ++i) {
      CampaignTask task;
      try {
        task = read_task(tasks[i], text, fmt::format("/tasks/{}", i));
      } catch (const Error& e) {
        throw Error(ErrorKind::InvalidInput, fmt::format("task {}: {}", i, e.what()));
      }
      if (task.index != static_cast<int>(i)) throw Error(ErrorKind::InvalidInput, fmt::format("task {} is out of order", task.index));
      c.tasks.push_back(task);
    }
    for (const auto& s : j.value("submissions", nlohmann::json::array()))
      refuse_unknown_keys(s, {"job", "merge_job", "tasks", "partition", "submitted_at"}, "a submission");
    std::size_t submission = 0;
    for (const auto& s : j.value("submissions", nlohmann::json::array())) {
      // Job ids go into sacct/scontrol/scancel command lines: only what sbatch --parsable
      // answers (digits) is one, anything else in a shared or hand-edited file is refused.
      for (const char* key : {"job", "merge_job"})
        if (!is_job_id(s.at(key).get<std::string>()))
          throw Error(ErrorKind::InvalidInput,
                      fmt::format("a submission's \"{}\" is {}, not a Slurm job id (digits)", key, s.at(key).dump()));
      c.submissions.push_back({s.at("job"), s.at("merge_job"), indices(s.at("tasks"), text, fmt::format("/submissions/{}/tasks", submission++)), s.at("partition"),
                               s.at("submitted_at")});
    }
    check_campaign_names(c);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not a campaign file: {}", path, core::json_error_text(e)));
  } catch (const Error& e) {
    throw Error(ErrorKind::InvalidInput, fmt::format("{}: {}", path, e.what()));
  }
  return c;
}

void save_campaign(const Campaign& c) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const CampaignTask& t : c.tasks) {
    nlohmann::json task = {{"index", t.index}, {"arch", t.arch}, {"strategy", t.strategy}, {"trials", t.trials},
                           {"time_budget_s", t.time_budget_s}, {"device", t.device}, {"seed", t.seed}, {"key", t.key()}};
    if (t.op == "matmul") {
      task["problem"] = {{"m", t.problem.m}, {"n", t.problem.n}, {"k", t.problem.k},
                         {"dtype", to_string(t.problem.in_dtype)}, {"out_dtype", to_string(t.problem.out_dtype)},
                         {"layout", to_string(t.problem.b_layout)}};
    } else {
      task["op"] = t.op;
      task["problem"] = t.problem_key;
    }
    tasks.push_back(std::move(task));
  }
  nlohmann::json subs = nlohmann::json::array();
  for (const CampaignSubmission& s : c.submissions)
    subs.push_back({{"job", s.job}, {"merge_job", s.merge_job}, {"tasks", s.tasks}, {"partition", s.partition},
                    {"submitted_at", s.submitted_at}});
  write_atomically(c.path, nlohmann::json{{"format", 1}, {"name", c.name}, {"tasks", tasks}, {"submissions", subs}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void record_task_exit(const Campaign& c, int index, int exit_code) {
  fs::create_directories(fs::path(c.status_file(index)).parent_path());
  write_atomically(c.status_file(index), std::to_string(exit_code) + "\n");
}

}  // namespace mgpu::harness
