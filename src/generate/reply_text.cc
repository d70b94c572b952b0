// Reading a text-protocol reply (generate/reply_text.h).
#include "generate/reply_text.h"

#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/text.h"

namespace kforge::generate {
namespace {

using nlohmann::json;

struct Block {
  std::string lang;  ///< first word of the info string, lowercased
  std::string body;
};

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

size_t Backticks(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && s[n] == '`') ++n;
  return n;
}

/// Fenced blocks whose fences open a line (after any indentation). The body loses the opening
/// fence's indentation. A block left open at the end (a reply cut short) is not a block.
std::vector<Block> FindBlocks(std::string_view text) {
  std::vector<Block> blocks;
  std::optional<Block> open;
  size_t fence = 0, indent = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t ws = 0;
    while (ws < line.size() && (line[ws] == ' ' || line[ws] == '\t')) ++ws;
    std::string_view rest = line.substr(ws);
    size_t ticks = Backticks(rest);
    if (!open) {
      if (ticks < 3) continue;
      std::string_view info = TrimView(rest.substr(ticks));
      if (info.find('`') != std::string_view::npos) continue;  // inline code, not a fence
      size_t word = 0;
      while (word < info.size() && !std::isspace(static_cast<unsigned char>(info[word])) && info[word] != '{' &&
             info[word] != ',')
        ++word;
      Block block;
      for (char c : info.substr(0, word)) block.lang += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      open = std::move(block);
      fence = ticks;
      indent = ws;
      continue;
    }
    if (ticks >= fence && TrimView(rest.substr(ticks)).empty()) {
      blocks.push_back(std::move(*open));
      open.reset();
      continue;
    }
    size_t strip = std::min(ws, indent);
    open->body.append(line.substr(strip));
    open->body.push_back('\n');
  }
  return blocks;
}

bool IsKernelLang(const std::string& lang) {
  static const char* kTags[] = {"cuda", "cu",  "cuh", "c",        "c++",      "cpp",    "cxx",   "cc",
                                "h",    "hpp", "hip", "cuda-c++", "cuda-cpp", "cuda_c", "cuda-c", "cudacpp"};
  for (const char* tag : kTags)
    if (lang == tag) return true;
  return false;
}

bool IsPlanLang(const std::string& lang) { return lang == "json" || lang == "jsonc" || lang == "json5"; }

/// The block's JSON object (comments and trailing commas allowed), or nullopt.
std::optional<json> RelaxedObject(std::string_view text) {
  json j = json::parse(RelaxedJson(text), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

/// The parameter list of `__global__ ... kernel(...)` in `source`, split at top-level commas.
std::optional<std::vector<std::string>> KernelParams(std::string_view source, const std::string& kernel) {
  if (kernel.empty()) return std::nullopt;  // found everywhere: the search below would never move on
  size_t at = 0;
  while ((at = source.find(kernel, at)) != std::string_view::npos) {
    size_t after = at + kernel.size();
    bool starts_word = at == 0 || !(std::isalnum(static_cast<unsigned char>(source[at - 1])) || source[at - 1] == '_');
    size_t paren = after;
    while (paren < source.size() && std::isspace(static_cast<unsigned char>(source[paren]))) ++paren;
    size_t decl = source.find_last_of(";}", at);
    decl = decl == std::string_view::npos ? 0 : decl;
    if (!starts_word || paren >= source.size() || source[paren] != '(' ||
        source.substr(decl, at - decl).find("__global__") == std::string_view::npos) {
      at = after;
      continue;
    }
    std::vector<std::string> params(1);
    int depth = 0;
    for (size_t i = paren + 1; i < source.size(); ++i) {
      char c = source[i];
      if (c == '(' || c == '<' || c == '[') ++depth;
      if (c == ')' && depth == 0) return params;
      if (c == ')' || c == '>' || c == ']') --depth;
      if (c == ',' && depth == 0) {
        params.emplace_back();
        continue;
      }
      params.back() += c;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// The typed-scalar prefix for a parameter declaration ("const long long n" -> "i64:").
std::optional<std::string> ScalarPrefix(std::string param) {
  if (size_t eq = param.find('='); eq != std::string::npos) param.resize(eq);
  if (param.find('*') != std::string::npos || param.find('&') != std::string::npos) return std::nullopt;
  auto has = [&param](const char* word) { return param.find(word) != std::string::npos; };
  if (has("double")) return "f64:";
  if (has("float")) return "f32:";
  if (has("uint64") || has("size_t") || has("unsigned long")) return "u64:";
  if (has("int64") || has("long") || has("ptrdiff_t")) return "i64:";
  if (has("uint32") || has("unsigned")) return "u32:";
  if (has("int")) return "i32:";
  return std::nullopt;
}

/// A number written where a typed scalar belongs, typed by the kernel's parameter.
std::optional<std::string> TypedNumber(const json& number, std::string_view source, const std::string& kernel,
                                       size_t index) {
  auto params = KernelParams(source, kernel);
  if (!params || index >= params->size()) return std::nullopt;
  std::optional<std::string> prefix = ScalarPrefix((*params)[index]);
  if (!prefix) return std::nullopt;
  const bool floating = *prefix == "f32:" || *prefix == "f64:";
  if (number.is_number_float() && !floating) return std::nullopt;
  if (number.is_number_unsigned()) return *prefix + std::to_string(number.get<uint64_t>());
  if (number.is_number_integer()) return *prefix + std::to_string(number.get<int64_t>());
  return *prefix + number.dump();
}

/// Makes a plan as models write it into the plan kforge reads: scalar grid/block, numeric args.
void NormalisePlan(json& plan, std::string_view source) {
  if (!plan.contains("launches") || !plan["launches"].is_array()) return;
  for (json& step : plan["launches"]) {
    if (!step.is_object()) continue;
    for (const char* dims : {"grid", "block"})
      if (step.contains(dims) && (step[dims].is_number_integer() || step[dims].is_string()))
        step[dims] = json::array({step[dims]});
    if (!step.contains("kernel") || !step["kernel"].is_string() || !step.contains("args") ||
        !step["args"].is_array())
      continue;
    const std::string kernel = step["kernel"].get<std::string>();
    json& args = step["args"];
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].is_number())
        if (auto typed = TypedNumber(args[i], source, kernel, i)) args[i] = *typed;
  }
}

StatusOr<common::Solution> FromObject(json object, const std::string& where) {
  const std::string source = object.contains("source") && object["source"].is_string() ? object["source"].get<std::string>() : "";
  NormalisePlan(object, source);
  return common::SolutionFromJson(object, where);
}

}  // namespace

std::string WithoutThinking(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find("<think>", pos);
    if (open == std::string_view::npos) break;
    out.append(text.substr(pos, open - pos));
    size_t close = text.find("</think>", open);
    if (close == std::string_view::npos) return out;
    pos = close + 8;
  }
  if (pos < text.size()) out.append(text.substr(pos));
  return out;
}

std::string RelaxedJson(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      out += ' ';
    } else if (c == '}' || c == ']') {
      size_t last = out.find_last_not_of(" \t\r\n");
      if (last != std::string::npos && out[last] == ',') out.erase(last, 1);
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

StatusOr<common::Solution> ParseReplyText(std::string_view raw) {
  if (raw.substr(0, 3) == "\xEF\xBB\xBF") raw.remove_prefix(3);  // UTF-8 byte order mark
  const std::string text = WithoutThinking(raw);
  std::string_view trimmed = TrimView(text);
  if (!trimmed.empty() && trimmed.front() == '{') {  // the whole reply is a solution object
    if (std::optional<json> object = RelaxedObject(trimmed)) return FromObject(std::move(*object), "reply");
  }
  std::optional<std::string> kernel;
  std::optional<json> plan;
  bool bad_plan = false;  // a json block that does not parse, when no later one does
  for (Block& block : FindBlocks(text)) {
    const bool untagged = block.lang.empty() || block.lang == "text" || block.lang == "plaintext";
    if (IsPlanLang(block.lang) || (untagged && TrimView(block.body).substr(0, 1) == "{")) {
      std::optional<json> object = RelaxedObject(block.body);
      if (object && (IsPlanLang(block.lang) || object->contains("launches"))) {
        plan = std::move(*object);
        continue;
      }
      if (IsPlanLang(block.lang)) {
        bad_plan = true;
        continue;
      }
    }
    if (IsKernelLang(block.lang) || (untagged && block.body.find("__global__") != std::string::npos))
      kernel = std::move(block.body);
  }
  if (!kernel && plan && plan->contains("source")) return FromObject(std::move(*plan), "reply: ```json block");
  if (!plan && bad_plan)
    return Status::InvalidArgument("reply: ```json block: not a JSON object (comments and trailing commas are allowed)");
  if (!kernel || !plan) {
    return Status::InvalidArgument(std::string("reply: expected one ```cuda block and one ```json block, found ") +
                                   (kernel ? "1" : "0") + " and " + (plan ? "1" : "0"));
  }
  if (kernel->size() > common::kMaxSourceBytes)
    return Status::InvalidArgument("reply: ```cuda block: " + std::to_string(kernel->size()) +
                                   " bytes, over the 256 KiB limit");
  if (size_t bad = 0; !common::IsValidUtf8(*kernel, &bad))
    return Status::InvalidArgument("reply: ```cuda block: invalid UTF-8 at byte " + std::to_string(bad) +
                                   " of the block");
  if (plan->contains("source"))
    return Status::InvalidArgument("reply: ```json block: has a \"source\" beside the ```cuda block; send one");
  NormalisePlan(*plan, *kernel);
  (*plan)["source"] = std::move(*kernel);
  return common::SolutionFromJson(*plan, "reply: ```json block");
}

}  // namespace kforge::generate
