// The command table and the top-level parser.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/version.h"
#include "kforge/common/status.h"

namespace kforge::cli {

Runner AttachBench(CLI::App& sub);
Runner AttachExport(CLI::App& sub);
Runner AttachFinetune(CLI::App& sub);
Runner AttachGenerate(CLI::App& sub);
Runner AttachReport(CLI::App& sub);
Runner AttachServe(CLI::App& sub);
Runner AttachSkill(CLI::App& sub);
Runner AttachSlurm(CLI::App& sub);
Runner AttachTasks(CLI::App& sub);
Runner AttachVerify(CLI::App& sub);
Runner AttachWorker(CLI::App& sub);

namespace {

const Command kCommands[] = {
    {"generate", "Ask a teacher LLM for kernels, verify them, feed results back; record trajectories",
     AttachGenerate},
    {"verify", "Compile and check solutions against their task's reference; one verdict per solution",
     AttachVerify},
    {"bench", "Time solutions and references on the same inputs", AttachBench},
    {"export", "Turn trajectories into fine-tuning datasets and KernelBench solutions", AttachExport},
    {"finetune-launch", "Check a dataset, render a trainer config (TRL, axolotl) and launch it locally or on Slurm",
     AttachFinetune},
    {"tasks", "List, show, import and build tasks", AttachTasks},
    {"slurm", "Run a batch command over a Slurm job array, one shard per array task, then merge", AttachSlurm},
    {"report", "KernelBench-style metrics from trajectories, per level and against a baseline", AttachReport},
    {"skill", "Agent Skills: check a skill folder, put skills in the teacher's context, measure their lift",
     AttachSkill},
    {"serve", "Keep a judge warm (GPU workers, references, compile cache) for kforge verify --server", AttachServe},
    {"worker", "GPU worker process (internal; JSON lines over stdin/stdout)", AttachWorker, true},
};

/// Diagnostics go to stderr through spdlog ("warning ..."), and also to `log_file` when one is
/// given (appended, with times and the process id). Records and summaries never go through it.
Status SetUpLogging(bool verbose, const std::string& log_file) {
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  console->set_pattern("%^%l%$ %v");
  std::vector<spdlog::sink_ptr> sinks = {console};
  if (!log_file.empty()) {
    try {
      auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file);
      file->set_pattern("%Y-%m-%d %H:%M:%S.%e %l [%P] %v");
      sinks.push_back(file);
    } catch (const spdlog::spdlog_ex&) {
      return Status::InvalidArgument("--log-file " + log_file + ": cannot open it for writing");
    }
  }
  auto logger = std::make_shared<spdlog::logger>("kforge", sinks.begin(), sinks.end());
  logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  logger->flush_on(spdlog::level::debug);  // a worker may end with _Exit
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// For a parse error: the first word that is not a command where one is expected, with the closest
/// command name when one is near ("unknown command 'genrate'; did you mean 'generate'?"). Empty when
/// every word names a command.
std::string UnknownCommandHint(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.empty() || word[0] == '-') return "";  // options: CLI11's message says it
    std::vector<CLI::App*> subs = current->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) return "";
    CLI::App* next = nullptr;
    std::string best;
    size_t best_distance = SIZE_MAX;
    for (CLI::App* sub : subs) {
      if (sub->get_name() == word) next = sub;
      if (sub->get_group().empty()) continue;  // hidden: never suggested
      size_t d = EditDistance(word, sub->get_name());
      if (d < best_distance) best_distance = d, best = sub->get_name();
    }
    if (next) {
      current = next;
      continue;
    }
    std::string where = current == &app ? "" : " of '" + current->get_name() + "'";
    std::string hint = "unknown command '" + word.substr(0, 40) + "'" + where;
    if (best_distance <= std::max<size_t>(2, best.size() / 3)) hint += "; did you mean '" + best + "'?";
    return hint;
  }
  return "";
}

/// The deepest command `argv` names ("tasks import module"), for messages about its flags.
CLI::App* NamedCommand(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    for (CLI::App* sub : current->get_subcommands([](CLI::App*) { return true; }))
      if (sub->get_name() == word) {
        current = sub;
        break;
      }
  }
  return current;
}

/// "unknown flag '--sed' of 'generate'; did you mean '--seed'?": the closest flag of the command (or
/// of kforge itself, whose flags every command takes).
std::string UnknownFlagHint(CLI::App& app, CLI::App& command, const std::string& flag) {
  const std::string name = flag.substr(0, flag.find('='));
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (CLI::App* owner : {&command, &app})
    for (const CLI::Option* option :
         owner->get_options([](const CLI::Option* o) { return !o->get_group().empty(); }))
      for (const std::string& long_name : option->get_lnames()) {
        const size_t d = EditDistance(name, "--" + long_name);
        if (d < best_distance) best_distance = d, best = "--" + long_name;
      }
  std::string hint = "unknown flag '" + name.substr(0, 40) + "'" +
                     (&command == &app ? "" : " of '" + command.get_name() + "'");
  if (!best.empty() && best_distance <= std::max<size_t>(2, best.size() / 3))
    hint += "; did you mean '" + best + "'?";
  return hint;
}

/// A number as CLI11 prints it ("0.500000") as a person writes it ("0.5").
std::string Plain(const std::string& number) {
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end == number.c_str() || *end != '\0') return number;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", value);
  return buf;
}

/// CLI11's own report of a parse error in kforge's words, on one line: "--trials 5000: expected a
/// number from 1 to 1000", an unknown flag with the closest one, a value given twice.
std::string ParseErrorText(CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  std::string what = UnknownCommandHint(app, argc, argv);
  if (!what.empty()) return what;
  what = e.what();
  std::smatch m;
  static const std::regex kRange(R"(^(\S+): Value (.*) not in range (\S+) to (\S+)$)");
  static const std::regex kSet(R"(^(\S+): (.*) not in \{(.*)\}$)");
  static const std::regex kAtMost(R"(^(\S+): At Most (\d+) required but received (\d+)$)");
  static const std::regex kConvert(R"(^Could not convert: (\S+) = (.*)$)");
  static const std::regex kExtras(R"(^The following arguments? (?:was|were) not expected: (.*)$)");
  if (std::regex_match(what, m, kRange))
    return m[1].str() + " " + m[2].str() + ": expected a number from " + Plain(m[3]) + " to " + Plain(m[4]);
  if (std::regex_match(what, m, kSet))
    return m[1].str() + " " + m[2].str() + ": expected one of " + m[3].str();
  if (std::regex_match(what, m, kAtMost))
    return m[1].str() + " is given " + m[3].str() + " times; it takes " +
           (m[2] == "1" ? std::string("one value") : "at most " + m[2].str() + " values");
  if (std::regex_match(what, m, kConvert)) return m[1].str() + " " + m[2].str() + ": not a value it takes";
  if (std::regex_match(what, m, kExtras)) {  // the words CLI11 could not place, a flag's value among them
    std::istringstream words(m[1].str());
    std::string first, word;
    words >> first;
    for (words.clear(), words.str(m[1].str()); words >> word;)
      if (word.size() > 1 && word[0] == '-') return UnknownFlagHint(app, *NamedCommand(app, argc, argv), word);
    return "unexpected argument '" + first.substr(0, 40) + "'";
  }
  return what;
}

}  // namespace

std::span<const Command> Commands() { return kCommands; }

int Fail(std::string_view command, std::string_view message, int exit_code) {
  std::fprintf(stderr, "kforge%s%.*s: %.*s\n", command.empty() ? "" : " ", static_cast<int>(command.size()),
               command.data(), static_cast<int>(message.size()), message.data());
  return exit_code;
}

int Fail(std::string_view command, const Status& status, int exit_code) {
  return Fail(command, status.message(), exit_code);
}

int Main(int argc, char** argv) {
  CLI::App app{"kforge: verified CUDA kernels from LLMs, and datasets from them", "kforge"};
  app.set_version_flag(
      "--version", [] { return VersionText(); }, "Print kforge, CUDA, NVRTC and LibTorch versions");
  app.require_subcommand(1);
  bool verbose = false;
  std::string log_file;
  app.add_flag("-v,--verbose", verbose, "Debug logging on stderr");
  app.add_option("--log-file", log_file, "Also write the log to FILE (appended)");
  app.fallthrough();  // the options above are accepted after the command too: kforge verify -v ...

  std::vector<Runner> runners;
  std::vector<CLI::App*> subs;
  for (const Command& command : Commands()) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    if (command.hidden) sub->group("");
    runners.push_back(command.attach(*sub));
    subs.push_back(sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // One line: CLI11's own report adds a second one pointing to --help.
    std::string what = ParseErrorText(app, argc, argv, e);
    std::replace(what.begin(), what.end(), '\n', ' ');
    return Fail("", what + " (see --help)");
  }
  if (Status logging = SetUpLogging(verbose, log_file); !logging.ok()) {
    return Fail("", logging);
  }

  for (size_t i = 0; i < subs.size(); ++i) {
    if (!subs[i]->parsed()) continue;
    try {
      return runners[i]();
    } catch (const std::exception& e) {
      return Fail(subs[i]->get_name(), e.what());
    }
  }
  return kExitUsage;
}

}  // namespace kforge::cli
