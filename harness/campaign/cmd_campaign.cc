#include "harness/campaign/cmd_campaign.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/arch.h"
#include "core/emu/device.h"
#include "core/error.h"
#include "harness/campaign/campaign.h"
#include "harness/campaign/slurm.h"
#include "harness/cli.h"
#include "harness/exit_codes.h"
#include "harness/numeric_options.h"
#include "harness/op/op_suite.h"
#include "harness/op/op_tuning.h"
#include "harness/problem_options.h"
#include "harness/tune/shape_suite.h"
#include "harness/stop_signals.h"
#include "harness/tune/tuning_loop.h"
#include "harness/measure/replay_measurer.h"
#include "harness/tune/landscape_tune.h"
#include "harness/tune/t4_landscape.h"
#include "kernels/matmul_template.h"
#include "kernels/op_registry.h"
#include "harness/version.h"
#include "results/store.h"
#include "search/strategy.h"

namespace mgpu::harness {
namespace {

namespace fs = std::filesystem;
using core::Error;
using core::ErrorKind;

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();  // the int options' range

// What the tuning command is asked for by task i.
TuneOptions task_options(const Campaign& c, int i) {
  const CampaignTask& task = c.tasks[i];
  TuneOptions t;
  t.arch = task.arch;
  t.problem = task.problem;
  t.strategy = task.strategy;
  t.trials = task.trials;
  t.time_budget_s = task.time_budget_s;
  t.device = task.device;
  t.seed = task.seed;
  t.db = c.shard(i);
  t.arguments = fmt::format("campaign run-task {} {}", c.path, i);
  return t;
}

// A replay task is refused here as `matmul` refuses it (the same readers: a T4 landscape that
// is no T4 file, a results database holding no answer for the task's template and problem --
// another shape, another arch), not on the cluster after the job was queued.
void check_task_replay(const TuneOptions& t) {
  if (t.device.rfind("replay:", 0) != 0) return;
  const std::string path = t.device.substr(7);
  if (is_t4_replay(t.device)) {
    (void)read_t4_landscape(path);
    return;
  }
  const kernels::MatmulTemplate& tmpl = kernels::matmul_template(core::parse_arch(t.arch));
  ReplayMeasurer(path, std::string(tmpl.name()), t.problem.key());
}

// An emulate task `matmul` would refuse for the virtual device's memory is refused here too, not
// on the cluster after GPUs were allocated for it (every such task exited 2 there). Only the
// device's memory is judged: it is the virtual device's own (core/emu, the same on every node),
// while the host memory the float64 reference needs is the node's that runs the task, which
// the task checks itself before it writes.
void check_task_fits_virtual_device(const TuneOptions& t) {
  if (t.device != "emulate") return;
  if (auto why = why_too_big_to_emulate(t.problem, static_cast<double>(emu::kDeviceMemory),
                                        std::numeric_limits<double>::infinity()))
    throw Error(ErrorKind::InvalidInput, *why);
}

// What run-task will be told passes the checks it would fail on: the tuning command's own,
// a replay's file, the virtual device's memory.
void check_task(const TuneOptions& t) {
  check_tune_options(t);
  check_task_replay(t);
  check_task_fits_virtual_device(t);
}

// What the op tuner is asked for by task i (a task of an op of the registry).
OpTuneOptions op_task_options(const Campaign& c, int i) {
  const CampaignTask& task = c.tasks[i];
  const kernels::OpTemplate& t = kernels::op_template(task.op, core::parse_arch(task.arch));
  OpTuneOptions o;
  o.op = task.op;
  o.arch = task.arch;
  o.problem = t.problem_from_key(task.problem_key);
  o.strategy = task.strategy;
  o.trials = task.trials;
  o.device = task.device;
  o.seed = task.seed;
  o.db = c.shard(i);
  o.arguments = fmt::format("campaign run-task {} {}", c.path, i);
  return o;
}

// An op task passes what `mgpu-tune <op>` would check before it writes: its template for the
// arch, its key, a device and strategy it takes, a budget, a config valid at the problem, and
// the virtual device's memory for an emulate task.
void check_op_task(const Campaign& c, int i) {
  const CampaignTask& task = c.tasks[i];
  const OpTuneOptions o = op_task_options(c, i);  // the template and the key
  if (o.problem.key != task.problem_key)
    throw Error(ErrorKind::InvalidInput, fmt::format("the problem '{}' is written {}", task.problem_key, o.problem.key));
  if (task.time_budget_s != 0)
    throw Error(ErrorKind::InvalidInput, fmt::format("an {} task has no time budget (--trials bounds it)", task.op));
  if (task.device != "auto" && task.device != "cuda" && task.device != "model" && task.device != "emulate")
    throw Error(ErrorKind::InvalidInput,
                fmt::format("an {} task's device is auto, cuda, model or emulate, not '{}'", task.op, task.device));
  const std::vector<std::string> strategies = search::strategy_names();
  if (std::find(strategies.begin(), strategies.end(), task.strategy) == strategies.end())
    throw Error(ErrorKind::InvalidInput, fmt::format("unknown strategy '{}'", task.strategy));
  if (task.trials < 1) throw Error(ErrorKind::InvalidInput, fmt::format("trials {} (at least 1)", task.trials));
  // The tuner's own bound (--trials), which a hand-edited task passed (battery round 14, F4).
  if (task.trials > 1000000000)
    throw Error(ErrorKind::InvalidInput, fmt::format("trials {} (at most 1000000000)", task.trials));
  const kernels::OpTemplate& t = kernels::op_template(task.op, core::parse_arch(task.arch));
  bool any = false;
  t.space().enumerate([&](const core::TuningConfig& cfg) { any = any || !t.why_invalid(o.problem, cfg); });
  if (!any)
    throw Error(ErrorKind::InvalidInput, fmt::format("no config of {} is valid for {}", t.name(), o.problem.key));
  if (task.device == "emulate" && o.problem.bytes > static_cast<double>(emu::kDeviceMemory))
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} needs {:.1f} GiB on the virtual device, which has {} GiB", o.problem.key,
                            o.problem.bytes / double(1 << 30), emu::kDeviceMemory >> 30));
}

// The memory the node that runs task i must have (0: no more than any node): an emulate task
// holds its problem in the node's memory, which only Slurm knows, so submit asks for it.
// Submit asks for 4 GiB more, for the tuner itself (the compiler, the virtual device's workers):
// a request at the problem's bytes alone would have Slurm kill a small task.
double task_machine_bytes(const Campaign& c, int i) {
  if (c.tasks[i].device != "emulate") return 0;
  if (c.tasks[i].op == "matmul") return emulate_machine_bytes(c.tasks[i].problem);
  return op_emulate_machine_bytes(op_task_options(c, i).problem);
}
constexpr double kTunerProcessBytes = 4.0 * double(1 << 30);

// A plan's emulate tasks that this machine could not run: said, not refused (the nodes that will
// run them are Slurm's to choose, by the --mem that submit asks for).
void note_machine_memory(const Campaign& c) {
  const double machine = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  int over = 0;
  double most = 0;
  for (const CampaignTask& t : c.tasks) {
    const double need = task_machine_bytes(c, t.index);
    if (need > machine) ++over;
    most = std::max(most, need);
  }
  if (over > 0)
    fmt::print(stderr,
               "note: {} emulate task(s) need a node with more memory than this machine's {:.1f} GiB (at most {:.1f} "
               "GiB): 'campaign submit' asks Slurm for it (sbatch --mem); 'campaign run-task' here would refuse them\n",
               over, machine / double(1 << 30), most / double(1 << 30));
}

// Either kind of task, as run-task will be told it.
void check_any_task(const Campaign& c, int i) {
  if (c.tasks[i].op == "matmul") check_task(task_options(c, i));
  else check_op_task(c, i);
}

// Each --arch of a plan once (sm_90 and sm_90a are one): twice, every shape would be tuned twice,
// into two shards, for one merged study.
void check_archs_once(const std::vector<std::string>& archs) {
  std::map<std::string, std::string> given;  // canonical name -> as given
  for (const std::string& a : archs) {
    const std::string name(core::parse_arch(a).name);
    auto [it, fresh] = given.emplace(name, a);
    if (!fresh)
      throw Error(ErrorKind::InvalidInput,
                  it->second == a ? fmt::format("--arch {} is given twice: give each target once", a)
                                  : fmt::format("--arch {} and --arch {} are the same target ({}): give each once",
                                                it->second, a, name));
  }
}

// A campaign file's tasks are all different: a hand-edited copy of a task would tune its study
// twice, into two shards, and add nothing.
void check_tasks_differ(const Campaign& c, const std::vector<int>& tasks) {
  std::map<std::string, int> first;
  for (int i : tasks) {
    const CampaignTask& t = c.tasks[i];
    std::string what = fmt::format("{} {} {} {} {} {} {} {}", t.op, t.arch, t.key(), t.strategy, t.trials,
                                   t.time_budget_s, t.device, t.seed);
    auto [it, fresh] = first.emplace(what, i);
    if (!fresh)
      throw Error(ErrorKind::InvalidInput, fmt::format("{}: task {} repeats task {} ({} {}): remove one", c.path, i,
                                                       it->second, t.arch, t.key()));
  }
}

// Every task passes the tuning command's own checks, or nothing is submitted: a task that can
// only fail would spend a GPU allocation to say so.
void check_tasks(const Campaign& c, const std::vector<int>& tasks) {
  check_tasks_differ(c, tasks);
  for (int i : tasks) {
    try {
      check_any_task(c, i);
    } catch (const Error& e) {
      throw Error(ErrorKind::InvalidInput, fmt::format("{} task {} ({} {}): {}", c.path, i, c.tasks[i].arch,
                                                       c.tasks[i].key(), e.what()));
    }
  }
}

// What became of each task: its status file first (it ended), then Slurm's word.
struct TaskState {
  std::string state;  // done | failed | timed out | stopped | running | pending | not submitted | lost
  std::string detail;
};

bool stopped_by_signal(int code) { return code == kExitHangup || code == kExitInterrupted || code == kExitTerminated; }

std::vector<TaskState> task_states_of(const Campaign& c, std::string* source) {
  std::vector<TaskState> out(c.tasks.size(), {"not submitted", ""});
  // The latest submission of each task, and what Slurm says of it.
  std::map<std::string, std::map<int, std::string>> by_job;
  for (const CampaignSubmission& s : c.submissions) {
    std::map<int, std::string>& states = by_job[s.job];
    if (states.empty()) states = task_states(s.job, source);
    for (int i : s.tasks)
      if (i >= 0 && i < static_cast<int>(out.size())) {
        auto it = states.find(i);
        std::string st = it == states.end() ? "" : it->second;
        if (st == "PENDING" || st == "CONFIGURING" || st == "REQUEUED") out[i] = {"pending", "job " + s.job};
        else if (st == "RUNNING" || st == "COMPLETING") out[i] = {"running", "job " + s.job};
        else if (st == "TIMEOUT" || st == "DEADLINE")
          out[i] = {"timed out", fmt::format("job {}: killed at its time limit; its committed trials stay in its shard, "
                                             "'campaign resume' continues it", s.job)};
        else if (!st.empty() && st != "COMPLETED") out[i] = {"failed", fmt::format("job {}: {}", s.job, st)};
        else out[i] = {"lost", fmt::format("job {}: ended without recording an exit code", s.job)};
      }
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (auto code = c.exit_code(static_cast<int>(i))) {
      if (*code == 0) out[i] = {"done", c.shard(static_cast<int>(i))};
      else if (stopped_by_signal(*code) && out[i].state == "timed out") continue;  // Slurm says why
      else if (stopped_by_signal(*code) && out[i].state != "running" && out[i].state != "pending")
        out[i] = {"stopped", fmt::format("exit code {}: stopped by a signal after committing; 'campaign resume' "
                                         "continues it", *code)};
      else if (out[i].state != "running" && out[i].state != "pending")
        out[i] = {"failed", fmt::format("exit code {} (see {}/task-{}.out)", *code, c.logs_dir(), i)};
    } else if (auto why = c.status_file_problem(static_cast<int>(i));
               why && out[i].state != "running" && out[i].state != "pending") {
      // The task ran and ended, but its record cannot be read: never "not submitted".
      out[i] = {"unreadable", fmt::format("{} (see {}/task-{}.out)", *why, c.logs_dir(), i)};
    }
  return out;
}

void add_submit_options(CLI::App* cmd, SubmitOptions& o, bool& dry_run) {
  cmd->add_option("--partition", o.partition, "Slurm partition to run on")->required();
  cmd->add_option("--gpus-per-task", o.gpus_per_task, "GPUs each array task asks for (0: none, e.g. model runs)")
      ->check(whole_number(0, kMaxInt))
      ->capture_default_str();
  cmd->add_option("--max-parallel", o.max_parallel, "At most this many tasks at once (0: no limit)")
      ->check(whole_number(0, kMaxInt))
      ->capture_default_str();
  cmd->add_option("--time", o.time_limit, "Slurm time limit per task (sbatch --time), e.g. 02:00:00");
  cmd->add_flag("--dry-run", dry_run, "Write and print the sbatch scripts and commands; submit nothing");
}

// Writes the scripts for `tasks`, submits (unless dry_run) and records the submission.
void submit_tasks(Campaign& c, const std::vector<int>& tasks, SubmitOptions o, bool dry_run, bool json = false) {
  check_submit_options(o);
  // An empty job array (#SBATCH --array= with no range) is no job Slurm runs.
  if (tasks.empty()) throw Error(ErrorKind::InvalidInput, fmt::format("{} has no tasks: nothing to submit", c.path));
  check_tasks(c, tasks);
  o.mgpu_tune = executable_path();
  for (int i : tasks)
    if (double need = task_machine_bytes(c, i); need > 0) o.mem_bytes = std::max(o.mem_bytes, need + kTunerProcessBytes);
  fs::create_directories(c.scripts_dir());
  fs::create_directories(c.logs_dir());
  fs::create_directories(fs::path(c.shard(0)).parent_path());
  std::string array = c.scripts_dir() + "/array.sbatch", merge = c.scripts_dir() + "/merge.sbatch";
  std::ofstream(array) << array_script(c, tasks, o);
  std::ofstream(merge) << merge_script(c, o);
  if (dry_run && json) {
    std::cout << nlohmann::json{{"campaign", c.path}, {"dry_run", true}, {"tasks", tasks}, {"array_script", array},
                                {"merge_script", merge}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return;
  }
  if (dry_run) {
    fmt::print("# {}\n{}\n# {}\n{}\n", array, array_script(c, tasks, o), merge, merge_script(c, o));
    fmt::print("# would run:\n#   sbatch --parsable {}\n#   sbatch --parsable --dependency=afterany:<array job> {}\n", array,
               merge);
    return;
  }
  std::string job = submit(array);
  // A job Slurm accepted is recorded at once: were the merge job refused, status and resume
  // must still know the array job runs (resume would submit every task again into the same shards).
  c.submissions.push_back({job, "", tasks, o.partition, results::now_utc()});
  save_campaign(c);
  std::string merge_job;
  try {
    merge_job = submit(merge, {"--dependency=afterany:" + job});
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("{}\nthe array job {} ({} tasks) WAS submitted and is recorded in {} ('campaign "
                                      "status' follows it); only its merge job was not: once the array job ends, "
                                      "submit it with 'sbatch --dependency=afterany:{} {}' or merge the shards with "
                                      "'mgpu-tune merge'",
                                      e.what(), job, tasks.size(), c.path, job, merge));
  }
  c.submissions.back().merge_job = merge_job;
  save_campaign(c);
  if (json) {
    std::cout << nlohmann::json{{"campaign", c.path}, {"tasks", tasks}, {"array_job", job}, {"merge_job", merge_job},
                                {"merged_db", c.merged_db()}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return;
  }
  fmt::print("submitted {} tasks as array job {} ({}), merge job {} -> {}\n", tasks.size(), job,
             array_spec(tasks, o.max_parallel), merge_job, c.merged_db());
}

struct PlanOptions {
  std::vector<std::string> archs, problem_keys;
  MatmulProblemOptions problem;
  std::string op = "matmul", shapes, output, name, strategy = "tpe", device = "auto";
  int trials = 100;
  double time_budget_s = 0;
  std::uint64_t seed = 0;
  bool json = false;
};

// The planned campaign written (never over an existing file), and said.
void write_plan(const Campaign& c, bool json) {
  if (fs::exists(c.path)) throw Error(ErrorKind::InvalidInput, fmt::format("{} exists: choose another file", c.path));
  save_campaign(c);
  note_machine_memory(c);
  if (json) {
    std::cout << nlohmann::json{{"campaign", c.path}, {"name", c.name}, {"tasks", c.tasks.size()},
                                {"shards", fmt::format("{}/{}-shards", c.dir(), c.name)}, {"merged_db", c.merged_db()}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return;
  }
  fmt::print("wrote {}: {} tasks; shards will be {}/{}-shards/task-N.db, merged into {}\n", c.path, c.tasks.size(),
             c.dir(), c.name, c.merged_db());
}

// A plan of another op's tasks: its problems from its suite (--shapes) or by key (--problem),
// one task per (arch, problem), each checked as run-task will run it.
void plan_op_campaign(const PlanOptions& o, const CLI::App& cmd) {
  const kernels::OpEntry* entry = nullptr;
  for (const kernels::OpEntry& e : kernels::ops())
    if (e.op == o.op) entry = &e;
  if (!entry) throw Error(ErrorKind::InvalidInput, fmt::format("--op: there is no op '{}'", o.op));
  for (const char* flag : {"--m", "--n", "--k", "--dtype", "--out-dtype", "--layout"})
    if (cmd.count(flag))
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("{} is a matmul's: an {} task's problem comes from --shapes or --problem", flag, o.op));
  if (o.time_budget_s != 0)
    throw Error(ErrorKind::InvalidInput, fmt::format("an {} task has no time budget: --trials bounds it", o.op));
  if (o.shapes.empty() == o.problem_keys.empty())
    throw Error(ErrorKind::InvalidInput,
                fmt::format("--op {} takes its problems from exactly one of --shapes SUITE and --problem KEY", o.op));
  check_archs_once(o.archs);
  Campaign c;
  c.path = o.output;
  c.name = o.name.empty() ? fs::path(o.output).stem().string() : o.name;
  check_campaign_names(c);
  for (const std::string& a : o.archs) {
    const core::ArchSpec& arch = core::parse_arch(a);
    const kernels::OpTemplate& t = kernels::op_template(o.op, arch);
    std::vector<std::string> keys = o.problem_keys;
    if (!o.shapes.empty()) {
      keys.clear();
      const OpProblemSuite suite = load_op_suite(*entry, t, o.shapes, {});
      for (const kernels::Problem& p : suite.problems) keys.push_back(p.key);
      if (!suite.comments.empty() && &a == &o.archs.front())
        fmt::print(stderr, "note: {}{}\n", o.shapes, comments_note(suite));
    }
    for (const std::string& key : keys) {
      CampaignTask task;
      task.index = static_cast<int>(c.tasks.size());
      task.arch = std::string(arch.name);
      task.op = o.op;
      task.problem_key = key;
      task.strategy = o.strategy;
      task.trials = o.trials;
      task.device = o.device;
      task.seed = o.seed;
      c.tasks.push_back(task);
      try {
        check_op_task(c, task.index);  // what run-task will be told
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::InvalidInput) throw;
        throw Error(ErrorKind::InvalidInput, fmt::format("{} ({}): {}", key.substr(0, 80), arch.name, e.what()));
      }
    }
  }
  check_tasks_differ(c, [&] {
    std::vector<int> all;
    for (const CampaignTask& t : c.tasks) all.push_back(t.index);
    return all;
  }());
  write_plan(c, o.json);
}

void add_plan(CLI::App& parent) {
  using O = PlanOptions;
  auto o = std::make_shared<O>();
  auto* cmd = parent.add_subcommand("plan", "Write a campaign file: one tuning task per (arch, shape)");
  cmd->add_option("--arch", o->archs, "Target(s): sm_90a, sm_100a (repeat for several)")->required();
  std::string ops;
  for (const kernels::OpEntry& e : kernels::ops()) ops += (ops.empty() ? "" : ", ") + e.op;
  cmd->add_option("--op", o->op, "The op every task tunes: " + ops + " (another op's problems come from --shapes or --problem)")
      ->capture_default_str();
  o->problem.add(*cmd);
  cmd->add_option("--shapes", o->shapes,
                  "A suite: for matmul, a shape suite (file or name, as for 'matmul --shapes') instead of --m/--n/--k; "
                  "for another op, its problem suite (as for 'mgpu-tune <op> --shapes')");
  cmd->add_option("--problem", o->problem_keys, "Another op's problem by its key (repeat for several), e.g. "
                                                "b1_h32_kvh8_sq8192_skv8192_d128_bf16_causal");
  cmd->add_option("--strategy", o->strategy, "Search strategy of every task")->capture_default_str();
  cmd->add_option("--trials", o->trials, "Trials per task")->check(whole_number(1, 1000000000))->capture_default_str();
  cmd->add_option("--time-budget", o->time_budget_s, "Search seconds per task (0: no limit)")
      ->check(finite_number(0))
      ->capture_default_str();
  cmd->add_option("--device", o->device, "auto, cuda, emulate or model, for every task")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of every task's strategy")
      ->check(whole_number(0, static_cast<std::int64_t>(kMaxCampaignSeed)))
      ->capture_default_str();
  cmd->add_option("--name", o->name, "Campaign name (default: the file's stem)");
  cmd->add_option("-o,--output", o->output, "The campaign file to write (CAMPAIGN.json)")->required();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o, cmd] {
    if (o->op != "matmul") {
      plan_op_campaign(*o, *cmd);
      return;
    }
    if (!o->problem_keys.empty())
      throw Error(ErrorKind::InvalidInput, "--problem KEY is for another op's tasks (--op); a matmul's problem is --m/--n/--k "
                                           "or --shapes");
    kernels::MatmulProblem base = o->problem.resolve();
    std::vector<kernels::MatmulProblem> shapes = {base};
    std::optional<ShapeSuite> suite;
    if (!o->shapes.empty()) {
      for (const char* flag : {"--m", "--n", "--k"})
        if (cmd->count(flag)) throw Error(ErrorKind::InvalidInput, fmt::format("--shapes gives the shapes: drop {}", flag));
      suite = load_shape_suite(o->shapes, base);
      shapes = suite->shapes;
      // A row no template of the plan takes is named by its file and line, before any task.
      for (const std::string& a : o->archs) check_suite_shapes(*suite, kernels::matmul_template(core::parse_arch(a)));
    }
    Campaign c;
    c.path = o->output;
    c.name = o->name.empty() ? fs::path(o->output).stem().string() : o->name;
    check_campaign_names(c);
    check_archs_once(o->archs);
    for (const std::string& a : o->archs) {
      const core::ArchSpec& arch = core::parse_arch(a);
      for (const kernels::MatmulProblem& p : shapes) {
        CampaignTask task;
        task.index = static_cast<int>(c.tasks.size());
        task.arch = std::string(arch.name);
        task.problem = p;
        task.strategy = o->strategy;
        task.trials = o->trials;
        task.time_budget_s = o->time_budget_s;
        task.device = o->device;
        task.seed = o->seed;
        c.tasks.push_back(task);
        check_task(task_options(c, c.tasks.back().index));  // what run-task will be told
      }
    }
    write_plan(c, o->json);
  });
}

void add_submit(CLI::App& parent) {
  struct O {
    std::string campaign;
    SubmitOptions submit;
    bool dry_run = false, json = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = parent.add_subcommand("submit", "Submit every task as a Slurm job array, then a dependent merge job");
  cmd->add_option("campaign", o->campaign, "The campaign file")->required();
  add_submit_options(cmd, o->submit, o->dry_run);
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    Campaign c = load_campaign(o->campaign);
    if (!c.submissions.empty() && !o->dry_run)
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("{} was submitted already (job {}): use 'campaign resume' for what is missing",
                              c.path, c.submissions.back().job));
    std::vector<int> all;
    for (const CampaignTask& t : c.tasks) all.push_back(t.index);
    submit_tasks(c, all, o->submit, o->dry_run, o->json);
  });
}

void add_status(CLI::App& parent) {
  struct O {
    std::string campaign;
    bool json = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = parent.add_subcommand("status", "Which tasks are done, running, pending, failed or timed out");
  cmd->add_option("campaign", o->campaign, "The campaign file")->required();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    Campaign c = load_campaign(o->campaign);
    std::string source = "none (never submitted)";
    std::vector<TaskState> states = task_states_of(c, &source);
    std::map<std::string, int> count;
    for (const TaskState& s : states) ++count[s.state];
    bool merged = fs::exists(c.merged_db());
    if (o->json) {
      nlohmann::json tasks = nlohmann::json::array();
      for (size_t i = 0; i < states.size(); ++i)
        tasks.push_back({{"index", i}, {"op", c.tasks[i].op}, {"arch", c.tasks[i].arch}, {"problem", c.tasks[i].key()},
                         {"state", states[i].state}, {"detail", states[i].detail}});
      std::cout << nlohmann::json{{"campaign", c.path}, {"slurm_source", source}, {"counts", count}, {"tasks", tasks},
                                  {"merged_db", merged ? c.merged_db() : ""}}
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
      return;
    }
    for (size_t i = 0; i < states.size(); ++i)
      fmt::print("task {:>3}  {:<13} {:<8} {:<36} {}\n", i, states[i].state, c.tasks[i].arch, c.tasks[i].key(),
                 states[i].detail);
    std::string summary;
    for (auto& [state, n] : count) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, state);
    fmt::print("{}: {} tasks: {}; Slurm states from {}; merged database {}\n", c.name, states.size(), summary, source,
               merged ? c.merged_db() : "not written yet");
  });
}

void add_resume(CLI::App& parent) {
  struct O {
    std::string campaign;
    SubmitOptions submit;
    bool dry_run = false, json = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = parent.add_subcommand("resume", "Resubmit only the tasks that are not done and not queued or running");
  cmd->add_option("campaign", o->campaign, "The campaign file")->required();
  add_submit_options(cmd, o->submit, o->dry_run);
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    Campaign c = load_campaign(o->campaign);
    std::vector<TaskState> states = task_states_of(c, nullptr);
    std::vector<int> missing;
    for (size_t i = 0; i < states.size(); ++i)
      if (states[i].state != "done" && states[i].state != "running" && states[i].state != "pending")
        missing.push_back(static_cast<int>(i));
    if (missing.empty()) {
      if (o->json) std::cout << nlohmann::json{{"campaign", c.path}, {"tasks", nlohmann::json::array()}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      else fmt::print("{}: nothing to resume: every task is done, queued or running\n", c.name);
      return;
    }
    // A task run again resumes its own shard: trials it committed are not repeated.
    for (int i : missing) fs::remove(c.status_file(i));
    submit_tasks(c, missing, o->submit, o->dry_run, o->json);
  });
}

// Another op's task, as `mgpu-tune <op>` runs it, into the task's shard; its exit code recorded.
void run_op_task(const Campaign& c, int index) {
  const CampaignTask& task = c.tasks[index];
  int code = 0;
  install_stop_handlers();  // a Slurm time limit (SIGTERM) commits, records 143, and the task resumes
  try {
    check_op_task(c, index);
    OpTuneOptions t = op_task_options(c, index);
    t.notify = [](const std::string& note) { fmt::print(stderr, "note: {}\n", note); };
    fs::create_directories(fs::path(t.db).parent_path());
    OpTuneReport r = tune_op(t, stop_requested(), [](const OpTrialLine& l) {  // into the task's log
      if (l.running.empty())
        fmt::print(stderr, "[{}/{}] {}  {}\n", l.index, l.budget, l.config.to_json(),
                   l.ms ? fmt::format("{:.4f} ms", *l.ms) : l.status);
    });
    fmt::print("task {} {} {}: {} new trials ({} resumed, {} failed) into {}\n", index, task.op, task.problem_key,
               r.trials_this_run, r.trials_resumed, r.failed, t.db);
    if (r.interrupted) {
      code = stop_exit_code();
      record_task_exit(c, index, code);
      fmt::print(stderr, "mgpu-tune: stopped by SIG{}: {} trials of this run are committed in {}; 'campaign resume' "
                         "continues the task\n", sigabbrev_np(code - 128), r.trials_this_run, t.db);
      throw ExitWith{code};
    }
  } catch (const Error& e) {
    code = core::exit_code_for(e.kind());
    record_task_exit(c, index, code);
    throw;
  }
  record_task_exit(c, index, code);
}

void add_run_task(CLI::App& parent) {
  struct O {
    std::string campaign;
    int index = -1;
  };
  auto o = std::make_shared<O>();
  auto* cmd = parent.add_subcommand("run-task", "Run one task into its shard (what each array task runs)");
  cmd->add_option("campaign", o->campaign, "The campaign file")->required();
  cmd->add_option("index", o->index, "The task index ($SLURM_ARRAY_TASK_ID)")->check(whole_number(0, kMaxInt))->required();
  cmd->callback([o] {
    Campaign c = load_campaign(o->campaign);
    if (c.tasks.empty()) throw Error(ErrorKind::InvalidInput, fmt::format("{} has no tasks: no task {} to run", c.path, o->index));
    if (o->index < 0 || o->index >= static_cast<int>(c.tasks.size()))
      throw Error(ErrorKind::InvalidInput, fmt::format("{} has no task {} (0..{})", c.path, o->index, c.tasks.size() - 1));
    const CampaignTask& task = c.tasks[o->index];
    if (task.op != "matmul") {
      run_op_task(c, o->index);
      return;
    }
    TuneOptions t = task_options(c, o->index);
    t.notify = [](const std::string& note) { fmt::print(stderr, "note: {}\n", note); };
    fs::create_directories(fs::path(t.db).parent_path());
    int code = 0;
    install_stop_handlers();  // a Slurm time limit (SIGTERM) commits, records 143, and the task resumes
    try {
      TuneReport r = tune(t, stop_requested());
      fmt::print("task {} {}: {} new trials ({} resumed, {} failed) into {}\n", o->index, task.problem.key(),
                 r.trials_this_run, r.trials_resumed, r.failed, t.db);
      if (r.interrupted) {
        code = stop_exit_code();
        record_task_exit(c, o->index, code);
        fmt::print(stderr, "mgpu-tune: stopped by SIG{}: {} trials of this run are committed in {}; 'campaign "
                           "resume' continues the task\n", sigabbrev_np(code - 128), r.trials_this_run, t.db);
        throw ExitWith{code};
      }
    } catch (const Error& e) {
      code = core::exit_code_for(e.kind());
      record_task_exit(c, o->index, code);
      throw;
    }
    record_task_exit(c, o->index, code);
  });
}

}  // namespace

void add_campaign_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("campaign", "Tuning campaigns across many GPUs and machines, through Slurm");
  cmd->require_subcommand(1);
  add_plan(*cmd);
  add_submit(*cmd);
  add_status(*cmd);
  add_resume(*cmd);
  add_run_task(*cmd);
}

}  // namespace mgpu::harness
