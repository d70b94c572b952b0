// Task-level splits.
#include "kforge/export/split.h"

#include <cstdlib>
#include <set>

#include "kforge/common/hash.h"
#include "kforge/common/text.h"
#include "kforge/export/filters.h"

namespace kforge::exporter {
namespace {

const std::string kTrain = "train";

bool IsSplitName(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

}  // namespace

std::string CanonicalSplitName(const std::string& name) {
  if (name == "val" || name == "valid" || name == "dev") return "validation";
  return name;
}

double TaskFraction(std::string_view task_id) {
  std::string hex = common::Sha256Hex(task_id).substr(0, 16);
  return static_cast<double>(std::strtoull(hex.c_str(), nullptr, 16)) / 18446744073709551616.0;
}

StatusOr<SplitSpec> SplitSpec::Parse(const std::string& text) {
  SplitSpec spec;
  std::set<std::string> names = {kTrain};
  double total = 0;
  for (const std::string& item : SplitList(text)) {
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (eq == std::string::npos || !IsSplitName(name))
      return Status::InvalidArgument(common::Quote(item, 40) + " is not NAME=FRACTION");
    name = CanonicalSplitName(name);
    if (name == kTrain)
      return Status::InvalidArgument(common::Quote(item, 40) +
                                     ": train is what the other splits leave; name " +
                                     "those, e.g. validation=0.05");
    if (!names.insert(name).second) return Status::InvalidArgument("split \"" + name + "\" given twice");
    std::string number = item.substr(eq + 1);
    char* end = nullptr;
    double fraction = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || !(fraction > 0 && fraction < 1))
      return Status::InvalidArgument(common::Quote(item, 40) + ": the fraction must be a number in (0, 1)");
    total += fraction;
    spec.parts_.emplace_back(name, total);
  }
  if (spec.parts_.empty()) return Status::InvalidArgument("no split given");
  if (total >= 1)
    return Status::InvalidArgument("the split fractions add up to 1 or more; nothing is left to train");
  return spec;
}

const std::string& SplitSpec::SplitOf(std::string_view task_id) const {
  if (parts_.empty()) return kTrain;
  double u = TaskFraction(task_id);
  for (const auto& [name, upper] : parts_)
    if (u < upper) return name;
  return kTrain;
}

std::vector<std::string> SplitSpec::Names() const {
  std::vector<std::string> names = {kTrain};
  for (const auto& [name, upper] : parts_) names.push_back(name);
  return names;
}

}  // namespace kforge::exporter
