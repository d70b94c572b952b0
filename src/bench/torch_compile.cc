// The torch.compile baseline: scripts/torch_compile_baseline.py in a child process, its one JSON line read
// back with the record reader.
#include "kforge/bench/torch_compile.h"

#include <unistd.h>

#include <limits>
#include <utility>

#include "kforge/common/json_fields.h"
#include "kforge/common/python.h"
#include "kforge/common/record_reader.h"
#include "kforge/common/subprocess.h"
#include "kforge/common/text.h"

namespace kforge::bench {
namespace {

constexpr size_t kOutputLimit = size_t{1} << 20;

/// The last non-empty line of `text`.
std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const size_t newline = text.rfind('\n', end);
  const size_t from = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(from, end + 1 - from);
}

}  // namespace

TorchCompileBaselines::TorchCompileBaselines(TorchCompileOptions options) : options_(std::move(options)) {
  if (options_.python.empty()) options_.python = common::FindPython();
}

StatusOr<common::TorchCompileBaseline> TorchCompileBaselines::For(const std::filesystem::path& task_dir,
                                                                  const std::string& variant) {
  const std::string key = task_dir.string() + '\0' + variant;
  if (auto it = measured_.find(key); it != measured_.end()) return it->second;
  const std::vector<std::string> argv = {options_.python,  options_.script.string(), task_dir.string(),
                                         "--variant",      variant,                  "--device",
                                         options_.device,  "--mode",                 options_.mode,
                                         "--backend",      options_.backend,         "--max-seconds",
                                         common::FormatNumber("%g", options_.max_seconds)};
  common::SpawnOptions spawn;
  spawn.stdin_mode = common::SpawnOptions::Stream::kNull;
  spawn.stdout_mode = spawn.stderr_mode = common::SpawnOptions::Stream::kPipe;
  spawn.search_path = options_.python.find('/') == std::string::npos;
  spawn.die_with_parent = true;
  StatusOr<common::Subprocess> child = common::Subprocess::Spawn(argv, spawn);
  StatusOr<common::TorchCompileBaseline> result = child.status();
  if (child.ok()) {
    std::string out, err;
    child->ReadOutput([&](int stream, const char* data, size_t size) {
      std::string& sink = stream == STDOUT_FILENO ? out : err;
      if (sink.size() < kOutputLimit) sink.append(data, size);
    });
    const int status = child->Wait();
    const std::string line = LastLine(out);
    result = ParseTorchCompileLine(line);
    if (!result.ok() && line.empty()) {
      std::string why = LastLine(err);
      result = Status::Unavailable("the torch.compile baseline script " + common::DescribeExit(status) +
                                   (why.empty() ? "" : ": " + why));
    }
  }
  measured_.emplace(key, result);
  return result;
}

StatusOr<common::TorchCompileBaseline> ParseTorchCompileLine(const std::string& line) {
  StatusOr<nlohmann::json> parsed = common::ParseJson(line, "the torch.compile baseline");
  if (!parsed.ok()) return Status::Unavailable(parsed.status().message());
  if (!parsed->is_object()) return Status::Unavailable("the torch.compile baseline: not a JSON object");
  if (const auto error = parsed->find("error"); error != parsed->end())
    return Status::Unavailable(error->is_string() ? error->get<std::string>() : error->dump());
  common::TorchCompileBaseline t;
  Status status;
  common::RecordReader f(*parsed, "torch_compile", status);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  f.Number("median_ms", t.median_ms, nan);
  f.Number("eager_median_ms", t.eager_median_ms, nan);
  f.Number("compile_s", t.compile_seconds, nan);
  f.Number("took_s", t.took_seconds, nan);
  f.Get("samples", t.samples);
  f.Get("mode", t.mode);
  f.Get("torch", t.torch);
  f.Get("gpu", t.gpu);
  if (!status.ok()) return Status::Unavailable(status.message());
  if (!(t.median_ms > 0)) return Status::Unavailable("the torch.compile baseline has no median time");
  return t;
}

}  // namespace kforge::bench
