// Tokens, normalised sources, exact keys and MinHash signatures.
#include "export/dedup.h"

#include <algorithm>
#include <cctype>

#include "kforge/common/hash.h"

namespace kforge::exporter {
namespace {

using common::SplitMix64;

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); }

}  // namespace

std::vector<std::string_view> Tokenize(std::string_view text, CommentStyle style) {
  std::vector<std::string_view> tokens;
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    bool c_style = style == CommentStyle::kC;
    if (c_style && c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if (c_style && c == '/' && i + 1 < n && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? n : end + 2;
      continue;
    }
    if (!c_style && c == '#') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    size_t start = i;
    if (IsWordChar(c)) {
      while (i < n && IsWordChar(text[i])) ++i;
    } else if (!c_style && (text.substr(i, 3) == "\"\"\"" || text.substr(i, 3) == "\'\'\'")) {
      size_t end = text.find(text.substr(i, 3), i + 3);
      i = end == std::string_view::npos ? n : end + 3;
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < n && text[i] != c && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, n);
    } else {
      ++i;
    }
    tokens.push_back(text.substr(start, i - start));
  }
  return tokens;
}

std::string NormalizeSource(std::string_view source) {
  std::string out;
  for (std::string_view token : Tokenize(source, CommentStyle::kC)) {
    if (!out.empty()) out += ' ';
    out += token;
  }
  return out;
}

uint64_t Hash64(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t SolutionKey(const nlohmann::json& solution) {
  if (!solution.is_object()) return Hash64(solution.dump());
  std::string text = NormalizeSource(solution.value("source", ""));
  for (const char* key : {"launches", "scratch", "options"}) {
    text += '\n';
    if (auto it = solution.find(key); it != solution.end()) text += it->dump();
  }
  return Hash64(text);
}

MinHash MinHashOf(const std::vector<std::string_view>& tokens) {
  MinHash sig;
  sig.fill(UINT32_MAX);
  size_t width = std::min<size_t>(kShingleTokens, tokens.size());
  if (width == 0) return sig;
  for (size_t start = 0; start + width <= tokens.size(); ++start) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t t = start; t < start + width; ++t) h = SplitMix64(h ^ Hash64(tokens[t]));
    for (int p = 0; p < kMinHashSize; ++p) {
      uint32_t v = static_cast<uint32_t>(SplitMix64(h + static_cast<uint64_t>(p) * 0x632be59bd9b4e019ULL) >> 32);
      sig[p] = std::min(sig[p], v);
    }
  }
  return sig;
}

double Similarity(const MinHash& a, const MinHash& b) {
  int equal = 0;
  for (int p = 0; p < kMinHashSize; ++p) equal += a[p] == b[p];
  return static_cast<double>(equal) / kMinHashSize;
}

CompactMinHash Compact(const MinHash& full) {
  CompactMinHash out;
  for (int p = 0; p < kMinHashSize; ++p) out[p] = static_cast<uint8_t>(full[p]);
  return out;
}

double Similarity(const CompactMinHash& a, const CompactMinHash& b) {
  int equal = 0;
  for (int p = 0; p < kMinHashSize; ++p) equal += a[p] == b[p];
  constexpr double kChance = 1.0 / 256;
  double estimate = (static_cast<double>(equal) / kMinHashSize - kChance) / (1 - kChance);
  return std::clamp(estimate, 0.0, 1.0);
}

}  // namespace kforge::exporter
