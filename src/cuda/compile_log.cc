// See compile_log.h.
#include "cuda/compile_log.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

namespace kforge::cuda::internal {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The lines of `text`, without their '\n'.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

// The integer just before `suffix` in `text` ("12 bytes stack frame" -> 12), or 0.
int NumberBefore(std::string_view text, std::string_view suffix) {
  const size_t at = text.find(suffix);
  if (at == std::string_view::npos) return 0;
  size_t start = at;
  while (start > 0 && text[start - 1] == ' ') --start;
  size_t end = start;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(text[start - 1]))) --start;
  if (start == end) return 0;
  return std::stoi(std::string(text.substr(start, end - start)));
}

std::string Quoted(std::string_view line, size_t from) {
  const size_t open = line.find('\'', from);
  if (open == std::string_view::npos) return "";
  const size_t close = line.find('\'', open + 1);
  if (close == std::string_view::npos) return "";
  return std::string(line.substr(open + 1, close - open - 1));
}

bool UnderDir(std::string_view path, const std::vector<std::string>& dirs) {
  const std::string normal = std::filesystem::path(path).lexically_normal().string();
  if (normal.find("/..") != std::string::npos) return false;
  for (const std::string& d : dirs) {
    if (d.empty()) continue;
    const std::string dir = d.back() == '/' ? d : d + "/";
    if (StartsWith(normal, dir)) return true;
  }
  return false;
}

// "<file>(<line>): <rest>" at the start of a line.
struct Location {
  std::string_view file;
  std::string_view rest;
};

std::optional<Location> ParseLocation(std::string_view line) {
  const size_t paren = line.find('(');
  if (paren == std::string_view::npos || paren == 0) return std::nullopt;
  const size_t close = line.find("): ", paren);
  if (close == std::string_view::npos) return std::nullopt;
  const std::string_view digits = line.substr(paren + 1, close - paren - 1);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(),
                                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return std::nullopt;
  }
  const std::string_view file = line.substr(0, paren);
  if (file.find(' ') != std::string_view::npos) return std::nullopt;  // prose, not a location
  return Location{file, line.substr(close + 3)};
}

bool IsError(std::string_view rest) {
  return StartsWith(rest, "error") || StartsWith(rest, "catastrophic error");
}

}  // namespace

std::string ExtractPtxasInfo(std::string_view log, std::map<std::string, KernelInfo>* kernels) {
  std::string out;
  std::map<std::string, KernelInfo> props;  // by function, from "Function properties for"
  std::vector<std::string> entries;
  std::string entry, props_for;
  for (const std::string_view line : Lines(log)) {
    if (StartsWith(line, "ptxas info")) {
      const size_t colon = line.find(':');
      const std::string_view body = colon == std::string_view::npos ? line : line.substr(colon + 1);
      if (body.find("Compiling entry function") != std::string_view::npos) {
        entry = Quoted(body, 0);
        entries.push_back(entry);
      } else if (StartsWith(body, " Function properties for ")) {
        props_for = std::string(body.substr(25));
      } else if (body.find(" registers") != std::string_view::npos && !entry.empty()) {
        KernelInfo& k = props[entry];
        k.registers = NumberBefore(body, " registers");
        k.shared_bytes = NumberBefore(body, " bytes smem");
      }
      continue;
    }
    if (StartsWith(line, "ptxas ") && line.find("bytes stack frame") != std::string_view::npos) {
      KernelInfo& k = props[props_for];
      k.stack_bytes = NumberBefore(line, " bytes stack frame");
      k.spill_store_bytes = NumberBefore(line, " bytes spill stores");
      k.spill_load_bytes = NumberBefore(line, " bytes spill loads");
      continue;
    }
    out.append(line);
    if (line.data() + line.size() < log.data() + log.size()) out.push_back('\n');  // it had one
  }
  for (const std::string& e : entries) (*kernels)[e] = props[e];
  return out;
}

std::string ShortenPaths(std::string log, std::vector<PathAlias> aliases) {
  std::sort(aliases.begin(), aliases.end(),
            [](const PathAlias& a, const PathAlias& b) { return a.dir.size() > b.dir.size(); });
  for (const PathAlias& a : aliases) {
    if (a.dir.empty()) continue;
    const std::string from = a.dir.back() == '/' ? a.dir : a.dir + "/";
    const std::string to = a.alias + "/";
    for (size_t at = log.find(from); at != std::string::npos; at = log.find(from, at + to.size())) {
      log.replace(at, from.size(), to);
    }
  }
  return log;
}

std::vector<std::string> FilesNamedInLog(std::string_view log) {
  std::vector<std::string> files;
  for (const std::string_view line : Lines(log)) {
    if (std::optional<Location> at = ParseLocation(line)) files.emplace_back(at->file);
    // "... at line 12 of /path/header.h" (the file is left out for the program itself).
    for (size_t at = line.find(" at line "); at != std::string_view::npos;
         at = line.find(" at line ", at + 1)) {
      size_t i = at + 9;
      const size_t digits = i;
      while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
      if (i == digits || line.substr(i, 4) != " of ") continue;
      i += 4;
      size_t end = i;
      while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
      if (end > i) files.emplace_back(line.substr(i, end - i));
    }
  }
  return files;
}

bool LogNamesOnlyAllowedFiles(std::string_view log, std::string_view program,
                              const std::vector<std::string>& dirs,
                              const std::vector<std::string>& in_memory) {
  for (const std::string& file : FilesNamedInLog(log)) {
    if (file != program && !IsAllowedOpenedFile(file, dirs, in_memory)) return false;
  }
  return true;
}

bool ErrorsOnlyInNameMap(std::string_view log) {
  bool any = false;
  for (const std::string_view line : Lines(log)) {
    const std::optional<Location> at = ParseLocation(line);
    if (!at || !IsError(at->rest)) continue;
    if (at->file != kNameMapFile) return false;
    any = true;
  }
  return any;
}

std::map<std::string, std::string> NameMapErrors(std::string_view log,
                                                 const std::vector<std::string>& names) {
  std::map<std::string, std::string> errors;
  const std::vector<std::string_view> lines = Lines(log);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::optional<Location> at = ParseLocation(lines[i]);
    if (!at || at->file != kNameMapFile || !IsError(at->rest)) continue;
    std::string_view quoted = lines[i + 1];
    while (!quoted.empty() && quoted.front() == ' ') quoted.remove_prefix(1);
    constexpr std::string_view kPragma = "#pragma nv_mangled_name ";
    if (quoted.substr(0, kPragma.size()) != kPragma) continue;
    quoted.remove_prefix(kPragma.size());
    while (!quoted.empty() && std::isspace(static_cast<unsigned char>(quoted.back())))
      quoted.remove_suffix(1);
    for (const std::string& name : names) {
      if (name == quoted && !errors.count(name)) {
        std::string_view text = at->rest;
        const size_t colon = text.find(": ");
        if (colon != std::string_view::npos) text.remove_prefix(colon + 2);  // past "error: "
        errors[name] = std::string(text.substr(0, 200));
      }
    }
  }
  return errors;
}

bool ReadOpenedHeaders(const std::string& trace_json, std::vector<std::string>* headers) {
  const nlohmann::json j = nlohmann::json::parse(trace_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("traceEvents") || !j["traceEvents"].is_array()) return false;
  for (const nlohmann::json& e : j["traceEvents"]) {
    if (!e.is_object() || e.value("name", "") != "Processing Header File") continue;
    if (!e.contains("args") || !e["args"].is_object() || !e["args"].contains("detail") ||
        !e["args"]["detail"].is_string()) {
      return false;
    }
    headers->push_back(e["args"]["detail"].get<std::string>());
  }
  return true;
}

bool IsAllowedOpenedFile(std::string_view path, const std::vector<std::string>& dirs,
                         const std::vector<std::string>& in_memory) {
  // NVRTC's builtin headers have bare names such as __nv_nvrtc_builtin_header.h.
  if (StartsWith(path, "__nv") && path.find('/') == std::string_view::npos) return true;
  // The helper's working directory is empty, so a relative path can only be an in-memory header.
  if (std::find(in_memory.begin(), in_memory.end(), path) != in_memory.end()) return true;
  return !path.empty() && path.front() == '/' && UnderDir(path, dirs);
}

std::string FirstErrorLine(std::string_view log) {
  std::string_view first;
  for (const std::string_view line : Lines(log)) {
    if (line.empty()) continue;
    if (first.empty()) first = line;
    if (line.find("error") != std::string_view::npos) {
      first = line;
      break;
    }
  }
  std::string out(first.substr(0, 200));
  std::replace(out.begin(), out.end(), '\r', ' ');
  return out;
}

}  // namespace kforge::cuda::internal
