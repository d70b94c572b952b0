// The torch.compile baseline of a task, measured by a Python script (scripts/torch_compile_baseline.py)
// on the task's exported reference program: what people compare a kernel with besides eager PyTorch.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "kforge/common/bench_record.h"
#include "kforge/common/status.h"

namespace kforge::bench {

struct TorchCompileOptions {
  /// The Python with torch. Default: common::FindPython().
  std::string python;
  /// scripts/torch_compile_baseline.py. Required.
  std::filesystem::path script;
  /// "cuda" or "cpu". Default "cuda".
  std::string device = "cuda";
  /// torch.compile's mode. Default "default".
  std::string mode = "default";
  /// torch.compile's backend. Default "inductor"; "aot_eager" traces without generating code.
  std::string backend = "inductor";
  /// Most seconds of sampling per program (eager, then compiled). Default 10.
  double max_seconds = 10;
};

/// One measurement per task folder and variant, kept for the life of the object. Not thread-safe.
class TorchCompileBaselines {
 public:
  explicit TorchCompileBaselines(TorchCompileOptions options);

  /// The baseline of the task in `task_dir` (built, with a package for the device). Unavailable with the
  /// script's one-line reason when it cannot be measured (no package, torch.compile failed, no GPU).
  StatusOr<common::TorchCompileBaseline> For(const std::filesystem::path& task_dir,
                                             const std::string& variant = "default");

 private:
  TorchCompileOptions options_;
  std::map<std::string, StatusOr<common::TorchCompileBaseline>> measured_;
};

/// Reads the script's JSON line into a baseline (its "error" as Unavailable).
StatusOr<common::TorchCompileBaseline> ParseTorchCompileLine(const std::string& line);

}  // namespace kforge::bench
