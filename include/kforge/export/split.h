// Splits by task: every record of a task goes to the same split, decided by a hash of the task id
// alone, so a task never leaks from validation into training and the assignment is stable across
// runs, filters and exports.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::exporter {

class SplitSpec {
 public:
  /// Everything in "train".
  SplitSpec() = default;

  /// "validation=0.05" or "validation=0.05,test=0.1": named fractions (each in (0, 1), together
  /// below 1); the rest is "train". "val" (also "valid", "dev") names "validation", the split name the
  /// Hugging Face Hub uses. InvalidArgument naming the bad item.
  static StatusOr<SplitSpec> Parse(const std::string& text);

  /// The split of `task_id`: u = the first 8 bytes of SHA-256(task_id) as a fraction of 2^64; the
  /// first named split whose cumulative fraction exceeds u, else "train".
  const std::string& SplitOf(std::string_view task_id) const;

  /// "train" first, then the named splits in the order given.
  std::vector<std::string> Names() const;

  bool empty() const { return parts_.empty(); }

 private:
  std::vector<std::pair<std::string, double>> parts_;  ///< name, cumulative upper bound
};

/// The Hub's name for a split: "validation" for "val", "valid" and "dev"; any other name as given.
std::string CanonicalSplitName(const std::string& name);

/// The hash fraction of a task id in [0, 1) that SplitOf compares.
double TaskFraction(std::string_view task_id);

}  // namespace kforge::exporter
