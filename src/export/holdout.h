// Decontamination: tasks held out of training data (an evaluation suite), by id and by the
// similarity of their reference programs, so a renamed copy of a held-out problem is caught too.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "export/dedup.h"
#include "kforge/common/status.h"

namespace kforge::exporter {

class Holdout {
 public:
  /// No task held out.
  Holdout() = default;

  /// `path` is an ids file (one task id per line; blank lines and `#` comments ignored) or a task
  /// root (every task.json below it; their reference programs are read for similarity). References
  /// whose MinHash similarity to a held-out reference is at least `threshold` are held out too.
  /// InvalidArgument naming the file and line, or the task, when it cannot be read.
  static StatusOr<Holdout> Load(const std::filesystem::path& path, double threshold);

  bool empty() const { return ids_.empty(); }
  size_t size() const { return ids_.size(); }
  bool HasId(std::string_view task_id) const { return ids_.count(std::string(task_id)) > 0; }

  /// Adds the reference of a held-out task (from a record of it: an ids file brings no text).
  void AddReference(std::string_view reference_source);

  /// True when a reference with this MinHash (ReferenceMinHash) is similar to a held-out reference:
  /// at least the threshold.
  bool Similar(const MinHash& reference) const;

 private:
  std::set<std::string> ids_;
  std::vector<MinHash> references_;
  std::set<uint64_t> reference_hashes_;  ///< of references already added
  double threshold_ = 1.0;
};

/// The MinHash of a reference program: its Python tokens without comments and string literals
/// (docstrings included), so that rewording a docstring does not hide a copy.
MinHash ReferenceMinHash(std::string_view reference_source);

}  // namespace kforge::exporter
