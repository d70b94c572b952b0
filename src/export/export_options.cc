// The checks of ExportOptions that span several options (export/exporter.h).
#include <string>

#include "kforge/export/exporter.h"

namespace kforge::exporter {

Status CheckExportOptions(const ExportOptions& o) {
  if (o.file_format == FileFormat::kParquet && !IsConversation(o.format))
    return Status::InvalidArgument(
        "--file-format parquet takes messages, pairs, turns or preference rows, not " +
        std::string(FormatName(o.format)));
  const SelectionOptions& s = o.selection;
  if (s.balance_cap && s.balance == Balance::kNone)
    return Status::InvalidArgument("--balance-cap needs --balance level|tag");
  if (o.format == Format::kPreference && (s.near_dup || s.balance != Balance::kNone))
    return Status::InvalidArgument(std::string(s.near_dup ? "--near-dup" : "--balance") +
                                   " selects records; --format preference pairs attempts (--per-task caps "
                                   "the pairs of a task)");
  if (o.format == Format::kKernelBench && !o.split.empty())
    return Status::InvalidArgument("--split applies to the JSON lines formats, not kernelbench");
  return Status::Ok();
}

}  // namespace kforge::exporter
