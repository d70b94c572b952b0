// `kforge tasks`: list and show task folders; import and build them through the Python exporter.
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cmd_tasks_audit.h"
#include "cli/cmd_tasks_check.h"
#include "cli/command.h"
#include "cli/options.h"
#include "kforge/common/python.h"
#include "kforge/common/subprocess.h"
#include "kforge/common/task.h"
#include "kforge/common/task_tree.h"
#include "kforge/cuda/device.h"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct TasksOptions {
  std::string root;
  std::string id;
  bool json = false;
  // import / build
  std::string source;  // kernelbench DIR or module FILE.py
  std::string out;
  std::string levels;
  std::string device = "cpu";
  int jobs = 1;
  double mem_limit_gb = 0;  ///< 0: the exporter's default
  std::string build_out;
  // import module: the reference is arbitrary code, confined while it is imported
  double module_timeout_s = 600;
  double module_mem_limit_gb = 12;
  bool force = false;  ///< import module: replace a task of the same id
};

/// Limits of an exporter run beyond what every run gets (a process group of its own, killed as a
/// whole, and an environment without credentials).
struct ExporterLimits {
  double timeout_s = 0;     ///< 0: none
  double mem_limit_gb = 0;  ///< RLIMIT_DATA, as the bulk importer sets it; 0: none
};

std::string DefaultRoot() {
  const char* env = std::getenv("KFORGE_TASKS");
  return env && *env ? env : "tasks";
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(std::to_string(d));
  return "[" + Join(dims, ",") + "]";
}

// "x:float32[16,16384]" for every tensor of `specs`, shapes resolved for the default variant.
std::vector<std::string> TensorTexts(const std::vector<common::TensorSpec>& specs,
                                     const std::map<std::string, std::vector<int64_t>>& shapes) {
  std::vector<std::string> out;
  for (const auto& spec : specs)
    out.push_back(spec.name + ":" + std::string(common::DTypeName(spec.dtype)) +
                  ShapeText(shapes.at(spec.name)));
  return out;
}

json TensorJson(const std::vector<common::TensorSpec>& specs,
                const std::map<std::string, std::vector<int64_t>>& shapes) {
  json list = json::array();
  for (const auto& spec : specs)
    list.push_back(
        {{"name", spec.name}, {"dtype", common::DTypeName(spec.dtype)}, {"shape", shapes.at(spec.name)}});
  return list;
}

int List(const TasksOptions& o) {
  auto tasks = common::LoadTaskTree(o.root);
  if (!tasks.ok()) {
    return Fail("tasks list", tasks.status());
  }
  for (const common::Task& task : *tasks) {
    auto shapes = common::ResolveShapes(task, "default").value();  // validated at load
    json cost = json::object();
    for (auto [key, expr] : {std::pair{"flops", &task.cost_flops}, std::pair{"bytes", &task.cost_bytes}}) {
      if (expr->empty()) continue;
      auto v = common::EvalCost(task, *expr, "default");
      if (v.ok()) cost[key] = *v;
    }
    if (o.json) {
      json line = {{"id", task.id},
                   {"level", task.level ? json(*task.level) : json(nullptr)},
                   {"tags", task.tags},
                   {"inputs", TensorJson(task.inputs, shapes)},
                   {"params", TensorJson(task.params, shapes)},
                   {"outputs", TensorJson(task.outputs, shapes)},
                   {"variants", task.variants.size()},
                   {"cost", cost}};
      std::cout << line.dump() << "\n";
      continue;
    }
    std::string line = task.id + "  " + (task.level ? "L" + std::to_string(*task.level) : "L-") + "  [" +
                       Join(task.tags, ",") + "]  " + Join(TensorTexts(task.inputs, shapes), " ") + " -> " +
                       Join(TensorTexts(task.outputs, shapes), " ");
    if (!task.params.empty()) line += "  params:" + std::to_string(task.params.size());
    for (auto it = cost.begin(); it != cost.end(); ++it) line += "  " + it.key() + "=" + it.value().dump();
    std::cout << line << "\n";
  }
  return kExitOk;
}

std::string InitText(const common::InitSpec& init) {
  std::string s(common::InitDistName(init.dist));
  if (init.dist == common::InitSpec::Dist::kUniform || init.dist == common::InitSpec::Dist::kRandint)
    s += "(" + json(init.low).dump() + ", " + json(init.high).dump() + ")";
  if (init.scale != 1) s += " *" + json(init.scale).dump();
  if (init.shift != 0) s += " +" + json(init.shift).dump();
  if (init.factor) s += " *U(" + json(init.factor->low).dump() + ", " + json(init.factor->high).dump() + ")";
  return s;
}

// The import's float64 rerun, on one line.
std::string ConditioningText(const common::Conditioning& c) {
  std::ostringstream text;
  text << "float64 run: ";
  if (c.float64_rel_l2)
    text << "relative L2 " << *c.float64_rel_l2 << " (the judge allows " << c.rel_l2_bound << ")";
  else
    text << "outputs zero within atol (judged by elements alone)";
  text << ", " << c.float64_mismatches << " of " << c.numel << " elements outside tolerance"
       << (c.ill_conditioned ? "; ill-conditioned: no kernel can be judged" : "");
  return text.str();
}

int Show(const TasksOptions& o) {
  auto task = common::FindTask(o.root, o.id);
  if (!task.ok()) {
    return Fail("tasks show", task.status());
  }
  const common::Task& t = *task;
  std::cout << "id:          " << t.id << "\n";
  if (t.level) std::cout << "level:       " << *t.level << "\n";
  std::cout << "tags:        " << Join(t.tags, ", ") << "\n";
  std::cout << "reference:   " << t.reference.string() << "\n";
  std::cout << "description: " << t.description << "\n";
  if (!t.spec.empty()) std::cout << "spec:        " << t.spec << "\n";
  std::cout << "tolerance:   atol=" << t.tolerance.atol << " rtol=" << t.tolerance.rtol
            << (t.tolerance_explicit ? "" : " (dtype default)") << "\n";
  if (t.conditioning) std::cout << "conditioning: " << ConditioningText(*t.conditioning) << "\n";
  for (auto [label, list] :
       {std::pair{"inputs", &t.inputs}, std::pair{"params", &t.params}, std::pair{"outputs", &t.outputs}}) {
    if (list->empty()) continue;
    std::cout << label << ":\n";
    for (const auto& spec : *list) {
      std::cout << "  " << spec.name << "  " << common::DTypeName(spec.dtype) << "[" << Join(spec.shape, ", ")
                << "]";
      if (list == &t.inputs) std::cout << "  " << InitText(spec.init);
      std::cout << "\n";
    }
  }
  if (!t.constants.empty()) {
    std::cout << "constants:  ";
    for (const auto& [name, value] : t.constants) std::cout << " " << name << "=" << value;
    std::cout << "\n";
  }
  std::cout << "variants:\n";
  for (const common::Variant& v : t.variants) {
    std::vector<std::string> syms;
    for (const auto& [name, value] : v.symbols) syms.push_back(name + "=" + std::to_string(value));
    std::cout << "  " << v.name << "  {" << Join(syms, ", ") << "}\n";
    auto shapes = common::ResolveShapes(t, v.name).value();
    std::cout << "    " << Join(TensorTexts(t.inputs, shapes), " ") << " -> "
              << Join(TensorTexts(t.outputs, shapes), " ") << "\n";
    for (auto [key, expr] : {std::pair{"flops", &t.cost_flops}, std::pair{"bytes", &t.cost_bytes}}) {
      if (expr->empty()) continue;
      auto value = common::EvalCost(t, *expr, v.name);
      std::cout << "    " << key << " = " << *expr << " = "
                << (value.ok() ? std::to_string(*value) : value.status().message()) << "\n";
    }
  }
  std::cout << "artifacts:\n";
  auto state = [](const fs::path& p) {
    std::error_code ec;
    return p.string() + (fs::exists(p, ec) ? "" : "  (missing)");
  };
  if (t.artifacts.packages.empty() && !t.artifacts.params && !t.artifacts.golden)
    std::cout << "  none (run `kforge tasks build`)\n";
  for (const auto& [variant, devices] : t.artifacts.packages)
    for (const auto& [device, path] : devices)
      std::cout << "  " << variant << "/" << device << "  " << state(path) << "\n";
  if (t.artifacts.params) std::cout << "  params  " << state(*t.artifacts.params) << "\n";
  if (t.artifacts.golden)
    std::cout << "  golden  " << state(t.artifacts.golden->file) << "  (seed " << t.artifacts.golden->seed
              << ", variant " << t.artifacts.golden->variant << ")\n";
  return kExitOk;
}

fs::path ExporterScript() { return ScriptPath("export_reference.py"); }

// The exporter's device list: CUDA packages come with CPU ones, for parity checks.
std::string ExporterDevices(const std::string& device) { return device == "cuda" ? "cpu,cuda" : "cpu"; }

// Every folder at or below `root` that holds a task.json (common::WalkTaskTree), sorted.
StatusOr<std::vector<std::string>> TaskDirs(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Status::NotFound(root.string() + ": no such folder");
  std::vector<std::string> dirs;
  KFORGE_RETURN_IF_ERROR(common::WalkTaskTree(root, [&dirs](const fs::path& dir) {
    dirs.push_back(dir.string());
    return true;
  }));
  if (dirs.empty()) return Status::NotFound(root.string() + ": no task.json below it");
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// What `tasks import` can check before starting Python: the input exists, the id is well formed,
// the levels are numbers and --out is not a file. The exporter checks the same (it can run alone).
Status CheckImport(const TasksOptions& o, bool kernelbench) {
  std::error_code ec;
  if (!o.out.empty() && fs::exists(o.out, ec) && !fs::is_directory(o.out, ec))
    return Status::InvalidArgument("--out " + o.out + ": not a folder");
  if (!kernelbench) {
    if (!fs::is_regular_file(o.source, ec)) return Status::InvalidArgument(o.source + ": not a file");
    KFORGE_RETURN_IF_ERROR(common::CheckTaskId(o.id).WithContext("--id"));
    const fs::path task = fs::path(o.out) / o.id;
    if (!o.force && fs::exists(task, ec))
      return Status::InvalidArgument("--id " + o.id + ": " + task.string() +
                                     " exists; its task would be replaced (--force replaces it)");
    return Status::Ok();
  }
  if (!fs::is_directory(o.source, ec)) return Status::InvalidArgument(o.source + ": not a folder");
  std::string levels = o.levels.empty() ? "1,2,3" : o.levels;
  std::vector<std::string> present;
  size_t start = 0;
  while (start <= levels.size()) {
    size_t end = std::min(levels.find(',', start), levels.size());
    std::string level = levels.substr(start, end - start);
    if (level.empty() || level.size() > 3 || level.find_first_not_of("0123456789") != std::string::npos)
      return Status::InvalidArgument("--levels " + levels.substr(0, 40) +
                                     ": expected level numbers separated by commas, e.g. 1,2,3");
    if (fs::is_directory(fs::path(o.source) / ("level" + level), ec)) present.push_back(level);
    start = end + 1;
  }
  if (present.empty())
    return Status::InvalidArgument(o.source + ": no level folder (level1/, level2/, ...) for --levels " +
                                   levels);
  return Status::Ok();
}

/// Removes the work folders an exporter of pid `pid` left under `root` (".NAME.tmpPID", ".buildPID"):
/// a process that ended early, by the reference's own os._exit, say. How many there were.
int RemoveExporterLeftovers(const fs::path& root, pid_t pid) {
  const std::string build = ".build" + std::to_string(pid), tmp = ".tmp" + std::to_string(pid);
  std::vector<fs::path> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool ends_tmp =
        name.size() > tmp.size() && name.compare(name.size() - tmp.size(), tmp.size(), tmp) == 0;
    if (name == build || (name[0] == '.' && ends_tmp)) {
      found.push_back(it->path());
      it.disable_recursion_pending();
    }
  }
  for (const fs::path& path : found) fs::remove_all(path, ec);
  return static_cast<int>(found.size());
}

// Runs the exporter with `args` (it runs reference code: arbitrary code) in a process group of its
// own, without credentials in its environment, within `limits`; its output streams through ours.
// An exporter that leaves a work folder under `out` ended early: a failure, whatever its status.
int RunExporter(const std::vector<std::string>& args, const fs::path& out,
                const ExporterLimits& limits = {}) {
  fs::path script = ExporterScript();
  std::error_code ec;
  if (!fs::is_regular_file(script, ec)) {
    return Fail("tasks", "exporter " + script.string() + " not found (set KFORGE_SCRIPTS to the scripts folder)");
  }
  std::vector<std::string> argv = {common::FindPython(), script.string()};
  if (limits.mem_limit_gb > 0) {  // posix_spawn sets no limits: a shell sets it, then becomes Python
    char limit[64];
    std::snprintf(limit, sizeof limit, "ulimit -d %.0f && exec \"$0\" \"$@\"", limits.mem_limit_gb * 1024 * 1024);
    argv.insert(argv.begin(), {"/bin/sh", "-c", limit});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  std::fflush(stdout);
  std::fflush(stderr);
  common::SpawnOptions options;
  options.search_path = true;
  options.own_process_group = true;
  options.die_with_parent = true;
  options.environment = common::EnvironmentWithoutSecrets();
  common::AdoptOrphans();  // what the reference starts in a session of its own ends with the import
  auto exporter = common::Subprocess::Spawn(argv, options);
  struct KillOrphans {
    ~KillOrphans() { common::KillAdoptedOrphans(); }
  } kill_orphans;
  if (!exporter.ok()) {
    return Fail("tasks", exporter.status());
  }
  const pid_t pid = exporter->pid();
  struct RemoveLeftovers {
    const fs::path& out;
    pid_t pid;
    ~RemoveLeftovers() { RemoveExporterLeftovers(out, pid); }
  } remove_leftovers{out, pid};
  int status = -1;
  if (limits.timeout_s > 0) {
    std::optional<int> ended = exporter->WaitFor(limits.timeout_s);
    if (!ended) {
      exporter->Kill();
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.0f", limits.timeout_s);
      return Fail("tasks", std::string("exporter stopped after ") + seconds + " s (--timeout)", kExitFailed);
    }
    status = *ended;
  } else {
    status = exporter->Wait();
  }
  if (status == -1) {
    return Fail("tasks", "lost the exporter process");
  }
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    if (code == 0 && RemoveExporterLeftovers(out, pid) > 0) {
      return Fail("tasks",
                  "the exporter ended before it finished (did the reference program end the process?); its "
                  "work folder is removed",
                  kExitFailed);
    }
    if (code == 0) return kExitOk;
    return Fail("tasks", "exporter exited with status " + std::to_string(code),
                code == kExitUsage ? kExitUsage : kExitFailed);
  }
  return Fail("tasks", "exporter killed by signal " + std::to_string(WTERMSIG(status)), kExitFailed);
}

/// --device cuda where no GPU is visible: one line, not one FAIL per task.
Status CheckExportDevice(const std::string& device) {
  if (device == "cuda" && cuda::DeviceCount() == 0)
    return Status::InvalidArgument(
        "--device cuda needs a GPU and none is visible here; use --device cpu, or run it on a GPU machine");
  return Status::Ok();
}

/// The subcommands of `kforge tasks`, for the runner to see which one was given.
struct TasksCommands {
  CLI::App *list, *show, *kernelbench, *module, *build, *check, *audit;
  std::shared_ptr<TasksCheckOptions> check_options = std::make_shared<TasksCheckOptions>();
  std::shared_ptr<TasksAuditOptions> audit_options = std::make_shared<TasksAuditOptions>();
};

void AddListAndShow(CLI::App& sub, TasksOptions& o, TasksCommands& c) {
  c.list = sub.add_subcommand("list", "One line per task: id, level, tags, shapes, cost");
  c.list->add_option("root", o.root, "Task root (default: $KFORGE_TASKS or tasks)");
  c.list->add_flag("--json", o.json, "Print one JSON object per line");
  c.show = sub.add_subcommand("show", "A task's fields and its shapes per variant");
  c.show->add_option("root", o.root, "Task root")->required();
  c.show->add_option("id", o.id, "Task id, e.g. kernelbench/level1/19_ReLU")->required();
}

void AddImport(CLI::App& sub, TasksOptions& o, TasksCommands& c) {
  CLI::App* import = sub.add_subcommand("import", "Create task folders with the Python exporter");
  import->require_subcommand(1);
  CLI::App* kb = c.kernelbench = import->add_subcommand("kernelbench", "Import a KernelBench checkout");
  kb->add_option("dir", o.source, "KernelBench folder (holding level1/, level2/, ...)")->required();
  kb->add_option("--out", o.out, "Task root to write (default: $KFORGE_TASKS or tasks)");
  kb->add_option("--levels", o.levels, "Comma-separated levels, e.g. 1,2");
  kb->add_option("--device", o.device, "Export packages for cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  kb->add_option("--jobs", o.jobs, "Parallel exports")->check(CLI::Range(1, 256));
  kb->add_option("--mem-limit-gb", o.mem_limit_gb,
                 "Memory limit per export process (default 12; a problem refused for memory is retried "
                 "alone with 4x)")
      ->check(CLI::Range(0.5, 4096.0));
  CLI::App* mod = c.module = import->add_subcommand("module", "Import one PyTorch module file (KernelBench style)");
  mod->add_option("file", o.source, "Python file with Model, get_inputs, get_init_inputs")->required();
  mod->add_option("--out", o.out, "Task root to write");
  mod->add_option("--id", o.id, "Task id SUITE/NAME")->required();
  mod->add_option("--device", o.device, "Export packages for cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  mod->add_option("--timeout", o.module_timeout_s, "Seconds the import may take (the module runs)")
      ->default_val(600)
      ->check(CLI::Range(1.0, 86400.0));
  mod->add_option("--mem-limit-gb", o.module_mem_limit_gb, "Memory limit of the import (RLIMIT_DATA)")
      ->default_val(12)
      ->check(CLI::Range(0.5, 4096.0));
  mod->add_flag("--force", o.force, "Replace the task of that id when --out holds one");
}

void AddBuild(CLI::App& sub, TasksOptions& o, TasksCommands& c) {
  c.build = sub.add_subcommand("build", "Export packages, params and golden files for every task under ROOT");
  c.build->add_option("root", o.root, "Task root holding hand-written tasks (default: $KFORGE_TASKS or tasks)");
  c.build->add_option("--out", o.build_out, "Write the built tasks to OUT/<id>/ instead of updating them in place");
  c.build->add_option("--device", o.device, "Export packages for cpu, or for cuda (and cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
}

void AddCheckAndAudit(CLI::App& sub, TasksCommands& c) {
  TasksCheckOptions& check_options = *c.check_options;
  c.check = sub.add_subcommand(
      "check", "Run every task's reference through the GPU harness: memory, self-agreement, golden file");
  CLI::App* check = c.check;
  check->add_option("root", check_options.root, "Task root")->required();
  check->add_option("--filter", check_options.filter, "Only task ids matching this glob")->check(NonEmptyFilter, "GLOB");
  check->add_option("--shard", check_options.shard,
                    "Check shard i of n (i/n, 0-based): the tasks whose position in the sorted list is i modulo n");
  check->add_option("--device", check_options.device, "cuda or cuda:N")->default_val("cuda");
  check->add_option("--seed", check_options.seed, "Input seed")->default_val(1);
  check->add_option("--timeout", check_options.timeout_s, "Seconds per task")->check(CLI::Range(1, 86400));
  check->add_flag("--json", check_options.json, "One JSON record per task");
  AddCiFlags(*check, check_options.ci);

  TasksAuditOptions& audit_options = *c.audit_options;
  c.audit = sub.add_subcommand(
      "audit", "Judge no-work candidates (zeros, copies of inputs, half outputs, ...) against every task on a GPU");
  CLI::App* audit = c.audit;
  audit->add_option("root", audit_options.root, "Task root")->required();
  audit->add_option("--filter", audit_options.filter, "Only task ids matching this glob")->check(NonEmptyFilter, "GLOB");
  audit->add_option("--device", audit_options.device, "cuda or cuda:N")->default_val("cuda");
  audit->add_option("--seed", audit_options.seed, "Input seed")->default_val(1);
  audit->add_option("--trials", audit_options.trials, "Trials on the default variant, as verify's")
      ->check(CLI::Range(1, 1000));
  audit->add_option("--timeout", audit_options.timeout_s, "Seconds per task")->check(CLI::Range(1, 86400));
  audit->add_flag("--json", audit_options.json, "One JSON record per task");
  audit->add_flag("--timing", audit_options.timing,
                  "Instead: correct kernels that cheat on speed (a memo of their outputs, a launch counter, a "
                  "relaunch flag), timed as bench times a candidate; none may be faster than the honest work");
}

/// `tasks import kernelbench` / `tasks import module`: the exporter's arguments, then its run.
int ImportTasks(const TasksOptions& o, bool kernelbench) {
  if (Status checked = CheckImport(o, kernelbench); !checked.ok()) return Fail("tasks import", checked);
  std::vector<std::string> args;
  if (kernelbench) {
    args = {"bulk-kernelbench", o.source, "--out", o.out, "--device", ExporterDevices(o.device),
            "--jobs", std::to_string(o.jobs)};
    if (!o.levels.empty()) args.insert(args.end(), {"--levels", o.levels});
    if (o.mem_limit_gb > 0) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", o.mem_limit_gb);
      args.insert(args.end(), {"--mem-limit-gb", limit});
    }
  } else {
    args = {"module", o.source, "--out", o.out, "--id", o.id, "--device", ExporterDevices(o.device)};
  }
  if (Status gpu = CheckExportDevice(o.device); !gpu.ok()) return Fail("tasks import", gpu);
  if (kernelbench) return RunExporter(args, o.out);
  const fs::path task_json = fs::path(o.out) / o.id / "task.json";
  const auto started = fs::file_time_type::clock::now();
  const int code = RunExporter(args, o.out, {o.module_timeout_s, o.module_mem_limit_gb});
  std::error_code ec;
  if (code == kExitOk && !(fs::last_write_time(task_json, ec) >= started - std::chrono::seconds(2) && !ec))
    return Fail("tasks import", "the exporter wrote no " + task_json.string() + " (did the module end the process?)",
                kExitFailed);
  return code;
}

/// `tasks build`: every task folder under the root through the exporter.
int BuildTasks(const TasksOptions& o) {
  std::error_code ec;
  if (!o.build_out.empty() && fs::exists(o.build_out, ec) && !fs::is_directory(o.build_out, ec))
    return Fail("tasks build", "--out " + o.build_out + ": not a folder");
  auto dirs = TaskDirs(o.root);
  if (!dirs.ok()) return Fail("tasks build", dirs.status());
  std::vector<std::string> args = {"task"};
  args.insert(args.end(), dirs->begin(), dirs->end());
  args.insert(args.end(), {"--device", ExporterDevices(o.device)});
  if (!o.build_out.empty()) args.insert(args.end(), {"--out", o.build_out});
  if (Status gpu = CheckExportDevice(o.device); !gpu.ok()) return Fail("tasks build", gpu);
  return RunExporter(args, o.build_out.empty() ? fs::path(o.root) : fs::path(o.build_out));
}

int RunTasksCommand(const TasksOptions& o, const TasksCommands& c) {
  if (c.list->parsed()) return List(o);
  if (c.check->parsed()) return CheckTasks(*c.check_options);
  if (c.audit->parsed()) return AuditTasks(*c.audit_options);
  if (c.show->parsed()) return Show(o);
  if (c.kernelbench->parsed() || c.module->parsed()) return ImportTasks(o, c.kernelbench->parsed());
  if (c.build->parsed()) return BuildTasks(o);
  return kExitUsage;
}

}  // namespace

Runner AttachTasks(CLI::App& sub) {
  auto o = std::make_shared<TasksOptions>();
  o->root = DefaultRoot();
  o->out = DefaultRoot();
  sub.require_subcommand(1);
  auto c = std::make_shared<TasksCommands>();
  AddListAndShow(sub, *o, *c);
  AddImport(sub, *o, *c);
  AddBuild(sub, *o, *c);
  AddCheckAndAudit(sub, *c);
  return [o, c] { return RunTasksCommand(*o, *c); };
}

}  // namespace kforge::cli
