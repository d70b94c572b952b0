// Reads solutions for verify/bench: files (a JSON object, a model reply, or JSON lines when the
// name ends in .jsonl) and standard input ("-", JSON lines), one at a time. A JSON line may carry
// the verdict that passed it under "verdict" (`kforge verify --emit passing`); it is set aside.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "kforge/common/solution.h"
#include "kforge/common/status.h"

namespace kforge::verify {

/// One solution as read: where it came from, and the solution or why it could not be read.
struct SolutionInput {
  std::string label;  ///< File path, "path:N" for line N of a .jsonl file, "-:N" for stdin.
  StatusOr<common::Solution> solution = Status::Internal("unset");
};

class SolutionReader {
 public:
  /// Largest file or line accepted.
  static constexpr size_t kMaxBytes = 64 << 20;

  explicit SolutionReader(std::vector<std::string> sources) : sources_(std::move(sources)) {}

  /// Checks, before any is read, that every source is "-" or a file that can be opened: a missing
  /// file or a folder is the caller's mistake, not a bad solution. A pipe is a file here.
  static Status CheckSources(const std::vector<std::string>& sources);

  /// Reads only shard `index` of `count`: the solutions whose 0-based position in the input (every
  /// file and line read, the unreadable ones included) is `index` modulo `count`. The same inputs
  /// always split the same way (`kforge verify --shard i/n`).
  void SetShard(int index, int count) {
    shard_index_ = index;
    shard_count_ = count;
  }

  /// The next solution of the shard, or nullopt when every source is exhausted.
  std::optional<SolutionInput> Next();

 private:
  std::optional<SolutionInput> NextOfAll();

  std::vector<std::string> sources_;
  size_t next_source_ = 0;
  std::FILE* lines_ = nullptr;  ///< Open JSON-lines source (stdin or a .jsonl file).
  std::string lines_label_;
  int line_number_ = 0;
  int shard_index_ = 0, shard_count_ = 1;
  uint64_t position_ = 0;  ///< of the next input read
};

}  // namespace kforge::verify
