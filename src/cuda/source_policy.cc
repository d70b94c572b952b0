// The source policy: byte-level checks, then directive and operator checks over the tokens of
// pp_lexer. The header allowlist is the single table below.
#include "cuda/source_policy.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "cuda/header_shims.h"
#include "cuda/pp_lexer.h"

namespace kforge::cuda {
namespace {

using internal::PpToken;
using internal::TokenKind;
using internal::Truncate;

// Headers NVRTC compiles from the CUDA and CCCL include directories. An entry ending in '/' allows
// every header below that directory. thrust/ is left out (host-side). Standard and host-only
// headers (<cstdint>, <math.h>, <torch/extension.h>...) are allowed through the shims of
// header_shims.cc, which kforge supplies itself.
constexpr std::array<std::string_view, 22> kAllowedHeaders = {"cuda_runtime.h",
                                                              "cuda_runtime_api.h",
                                                              "vector_types.h",
                                                              "cuda_fp16.h",
                                                              "cuda_bf16.h",
                                                              "cuda_fp8.h",
                                                              "cuda_fp6.h",
                                                              "cuda_fp4.h",
                                                              "mma.h",
                                                              "cooperative_groups.h",
                                                              "cooperative_groups/reduce.h",
                                                              "cooperative_groups/scan.h",
                                                              "cooperative_groups/memcpy_async.h",
                                                              "cuda_pipeline.h",
                                                              "cuda_pipeline_primitives.h",
                                                              "cuda_awbarrier.h",
                                                              "cuda_awbarrier_primitives.h",
                                                              "cuda/std/",
                                                              "cuda/",
                                                              "cub/",
                                                              "nv/",
                                                              "math_constants.h"};

constexpr std::array<std::string_view, 14> kAllowedDirectives = {
    "define",   "undef", "if",    "ifdef", "ifndef",  "elif",   "elifdef",
    "elifndef", "else",  "endif", "error", "warning", "pragma", "include"};

// First words of accepted pragmas. GCC and clang pragmas are checked on their second word.
constexpr std::array<std::string_view, 21> kAllowedPragmas = {"unroll",
                                                              "nounroll",
                                                              "once",
                                                              "pack",
                                                              "push_macro",
                                                              "pop_macro",
                                                              "message",
                                                              "STDC",
                                                              "nv_diag_suppress",
                                                              "nv_diag_warning",
                                                              "nv_diag_error",
                                                              "nv_diag_default",
                                                              "nv_diag_once",
                                                              "nv_diagnostic",
                                                              "diag_suppress",
                                                              "diag_warning",
                                                              "diag_error",
                                                              "diag_default",
                                                              "nv_exec_check_disable",
                                                              "hd_warning_disable",
                                                              "nv_abi"};

Status Fail(int line, const std::string& what) {
  return Status::InvalidArgument("line " + std::to_string(line) + ": " + what);
}

Status CheckBytes(std::string_view s) {
  if (s.size() > kMaxSourceBytes) {
    return Status::InvalidArgument("source is " + std::to_string(s.size()) + " bytes; the limit is " +
                                   std::to_string(kMaxSourceBytes));
  }
  int line = 1;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '\n') ++line;
      if (c == 0) return Fail(line, "NUL byte in source");
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') || c == 0x7f) {
        return Fail(line, "control character in source");
      }
      ++i;
      continue;
    }
    // Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
    int len = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF)
      len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
      len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
      len = 4, cp = c & 0x07;
    else
      return Fail(line, "source is not valid UTF-8");
    if (i + len > s.size()) return Fail(line, "source is not valid UTF-8");
    for (int k = 1; k < len; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return Fail(line, "source is not valid UTF-8");
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return Fail(line, "source is not valid UTF-8");
    }
    // Bidirectional overrides make code read differently from how it compiles.
    if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) {
      return Fail(line, "bidirectional control character in source");
    }
    i += len;
  }
  return Status::Ok();
}

bool IsSafeHeaderPath(std::string_view h) {
  if (h.empty() || h.size() > 128 || h.front() == '/' || h.back() == '/') return false;
  for (const char c : h) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-' ||
          c == '+')) {
      return false;
    }
  }
  // Every path component must be a plain name: no "", ".", ".." or hidden entries.
  size_t start = 0;
  while (start <= h.size()) {
    const size_t end = std::min(h.find('/', start), h.size());
    const std::string_view part = h.substr(start, end - start);
    if (part.empty() || part.front() == '.') return false;
    start = end + 1;
  }
  return true;
}

Status CheckHeader(const PpToken& tok, std::string_view form, std::vector<std::string>* named) {
  if (!IsAllowedHeader(tok.text)) {
    return Fail(tok.line, std::string(form) + " of \"" + Truncate(tok.text) +
                              "\" is not allowed (only the headers listed in docs/compile.md)");
  }
  if (named != nullptr && std::find(named->begin(), named->end(), tok.text) == named->end()) {
    named->push_back(tok.text);
  }
  return Status::Ok();
}

// `words` are the pragma's leading identifiers.
Status CheckPragma(int line, const std::vector<std::string>& words) {
  if (words.empty()) return Fail(line, "#pragma without a name is not allowed");
  const std::string& first = words[0];
  if (first == "GCC" || first == "clang") {
    const std::string second = words.size() > 1 ? words[1] : "";
    if (second == "diagnostic" || second == "unroll" || second == "ivdep" || second == "loop")
      return Status::Ok();
    return Fail(line, "#pragma " + first + " " + Truncate(second) + " is not allowed");
  }
  if (std::find(kAllowedPragmas.begin(), kAllowedPragmas.end(), first) == kAllowedPragmas.end()) {
    return Fail(line, "#pragma " + Truncate(first) + " is not allowed");
  }
  return Status::Ok();
}

// The first two identifiers of a pragma written as a _Pragma string operand.
std::vector<std::string> PragmaWordsFromString(std::string_view lit) {
  const size_t open = lit.find('"');
  std::string body;
  for (size_t i = open + 1; i + 1 < lit.size(); ++i) {
    if (lit[i] == '\\' && i + 2 < lit.size()) ++i;
    body.push_back(lit[i]);
  }
  std::vector<std::string> words;
  size_t i = 0;
  while (words.size() < 2 && i < body.size()) {
    while (i < body.size() && !(std::isalnum(static_cast<unsigned char>(body[i])) || body[i] == '_')) {
      if (body[i] != ' ' && body[i] != '\t') return words;
      ++i;
    }
    size_t end = i;
    while (end < body.size() && (std::isalnum(static_cast<unsigned char>(body[end])) || body[end] == '_'))
      ++end;
    if (end == i) break;
    words.emplace_back(body.substr(i, end - i));
    i = end;
  }
  return words;
}

class DirectiveChecker {
 public:
  DirectiveChecker(const std::vector<PpToken>& toks, std::vector<std::string>* headers)
      : t_(toks), headers_(headers) {}

  Status Run() {
    for (size_t i = 0; i < t_.size(); ++i) {
      const PpToken& tok = t_[i];
      if (tok.kind == TokenKind::kPunct && tok.text == "#" && tok.at_line_start) {
        KFORGE_RETURN_IF_ERROR(CheckDirective(i));
      } else if (tok.kind == TokenKind::kPunct && tok.text == "##") {
        return Fail(tok.line, "token pasting (##) is not allowed");
      } else if (tok.kind == TokenKind::kIdentifier) {
        KFORGE_RETURN_IF_ERROR(CheckIdentifier(i));
      }
    }
    return Status::Ok();
  }

 private:
  const PpToken* At(size_t i) const {
    return i < t_.size() && t_[i].kind != TokenKind::kNewline ? &t_[i] : nullptr;
  }

  Status CheckDirective(size_t hash) {
    const PpToken* name = At(hash + 1);
    if (name == nullptr) return Status::Ok();  // null directive
    const int line = t_[hash].line;
    if (name->kind != TokenKind::kIdentifier) {
      return Fail(line, "# followed by \"" + Truncate(name->text) + "\" is not an allowed directive");
    }
    if (std::find(kAllowedDirectives.begin(), kAllowedDirectives.end(), name->text) ==
        kAllowedDirectives.end()) {
      return Fail(line, "#" + Truncate(name->text) + " is not allowed");
    }
    if (name->text == "include") {
      const PpToken* header = At(hash + 2);
      if (header == nullptr || header->kind != TokenKind::kHeaderName) {
        return Fail(line, "#include must name a header directly as <name> or \"name\"");
      }
      KFORGE_RETURN_IF_ERROR(CheckHeader(*header, "#include", headers_));
      if (At(hash + 3) != nullptr) return Fail(line, "unexpected tokens after #include");
    } else if (name->text == "pragma") {
      std::vector<std::string> words;
      for (size_t k = hash + 2; k < hash + 4 && At(k) && At(k)->kind == TokenKind::kIdentifier; ++k) {
        words.push_back(At(k)->text);
      }
      KFORGE_RETURN_IF_ERROR(CheckPragma(line, words));
    }
    return Status::Ok();
  }

  // Operators that reach the file system or run pragmas from inside macro expansions.
  Status CheckIdentifier(size_t i) {
    const PpToken& tok = t_[i];
    if (tok.text == "__has_include_next" || tok.text == "__has_embed" || tok.text == "__pragma") {
      return Fail(tok.line, Truncate(tok.text) + " is not allowed");
    }
    if (tok.text == "__has_include") {
      const PpToken* open = At(i + 1);
      const PpToken* header = At(i + 2);
      const PpToken* close = At(i + 3);
      if (!open || open->text != "(" || !header || header->kind != TokenKind::kHeaderName || !close ||
          close->text != ")") {
        return Fail(tok.line, "__has_include must name a header directly as <name> or \"name\"");
      }
      return CheckHeader(*header, "__has_include", headers_);
    }
    if (tok.text == "_Pragma") {
      const PpToken* open = At(i + 1);
      const PpToken* lit = At(i + 2);
      const PpToken* close = At(i + 3);
      if (!open || open->text != "(" || !lit || lit->kind != TokenKind::kString || lit->text.front() == 'R' ||
          lit->text.find("R\"") != std::string::npos || !close || close->text != ")") {
        return Fail(tok.line, "_Pragma must take a plain string literal");
      }
      return CheckPragma(tok.line, PragmaWordsFromString(lit->text));
    }
    return Status::Ok();
  }

  const std::vector<PpToken>& t_;
  std::vector<std::string>* headers_;
};

}  // namespace

bool IsAllowedHeader(std::string_view header) {
  if (!IsSafeHeaderPath(header)) return false;
  if (internal::FindHeaderShim(header) != nullptr) return true;
  for (const std::string_view entry : kAllowedHeaders) {
    if (entry.back() == '/' ? header.substr(0, entry.size()) == entry && header.size() > entry.size()
                            : header == entry) {
      return true;
    }
  }
  return false;
}

Status CheckSourcePolicy(std::string_view source, std::vector<std::string>* headers) {
  KFORGE_RETURN_IF_ERROR(CheckBytes(source));
  KFORGE_ASSIGN_OR_RETURN(std::vector<PpToken> tokens, internal::LexPreprocessingTokens(source));
  return DirectiveChecker(tokens, headers).Run();
}

}  // namespace kforge::cuda
