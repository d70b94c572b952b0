// Parquet files and Hub dataset ids as --data: converted to JSON lines in the run folder.
#include "finetune/data_source.h"

#include <regex>
#include <sstream>

#include "finetune/process.h"

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;

/// A Hub id's split (`org/name:split`), else `fallback`; the id without it in `id`.
std::string SplitOf(const std::string& source, const std::string& fallback, std::string& id) {
  const size_t colon = source.rfind(':');
  const bool has_split = colon != std::string::npos && source.find('/') < colon;
  id = has_split ? source.substr(0, colon) : source;
  return has_split ? source.substr(colon + 1) : fallback;
}

std::string ConverterLine(const std::string& text) {
  std::istringstream lines(text);
  std::string last;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) last = line;
  const std::string prefix = "sft_trl: ";
  return last.rfind(prefix, 0) == 0 ? last.substr(prefix.size()) : last;
}

/// Runs the converter for one source; `flag` names it in errors.
Status Convert(const LaunchOptions& o, const std::string& flag, const std::string& source, const std::string& split,
               const fs::path& out, const RunOutput& output) {
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec);
  if (ec) return Status::IoError(out.parent_path().string() + ": " + ec.message());
  std::string id;
  const std::string chosen = SplitOf(source, split, id);
  KFORGE_ASSIGN_OR_RETURN(ProcessResult run, Capture({o.python, o.trl_script.string(), "--to-jsonl", id, "--split",
                                                      chosen, "--out", out.string()}));
  if (run.exit_code != 0) return Status::InvalidArgument(flag + " " + source + ": " + ConverterLine(run.err));
  output.note(flag + " " + source + ": " + ConverterLine(run.out) + " written to " + out.string());
  return Status::Ok();
}

}  // namespace

bool IsConvertedData(const std::string& argument) {
  if (fs::path(argument).extension() == ".parquet") return true;
  std::error_code ec;
  if (argument.empty() || argument == "-" || fs::exists(argument, ec)) return false;
  static const std::regex kHubDataset(R"([A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(:[A-Za-z0-9_.-]+)?)");
  return std::regex_match(argument, kHubDataset) && argument.find("..") == std::string::npos;
}

std::string DataSource(const std::string& argument) {
  if (fs::path(argument).extension() == ".parquet") return fs::absolute(argument).lexically_normal().string();
  return argument;
}

Status ConvertData(LaunchOptions& o, const RunOutput& output) {
  if (!o.data_source.empty()) {
    o.data = o.out / "data" / "train.jsonl";
    KFORGE_RETURN_IF_ERROR(Convert(o, "--data", o.data_source, "train", o.data, output));
  }
  if (!o.eval_data_source.empty()) {
    o.eval_data = o.out / "data" / "validation.jsonl";
    KFORGE_RETURN_IF_ERROR(Convert(o, "--eval-data", o.eval_data_source, "validation", o.eval_data, output));
  }
  return Status::Ok();
}

}  // namespace kforge::finetune
