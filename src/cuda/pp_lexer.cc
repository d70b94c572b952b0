// Translation phases 1-3 over untrusted source; see pp_lexer.h for what is refused and why.
#include "cuda/pp_lexer.h"

#include <algorithm>
#include <string>

namespace kforge::cuda::internal {
namespace {

bool IsIdentStart(unsigned char c) { return std::isalpha(c) || c == '_' || c == '$' || c >= 0x80; }
bool IsIdentChar(unsigned char c) { return IsIdentStart(c) || std::isdigit(c); }
bool IsHorizontalSpace(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }

Status Fail(int line, const std::string& what) {
  return Status::InvalidArgument("line " + std::to_string(line) + ": " + what);
}

// Phase 2 output: the spliced text, and for each character the physical line it came from.
struct Spliced {
  std::string text;
  std::vector<int> line;
  std::vector<size_t> splices;  // indices into `text` where a backslash-newline was removed
};

StatusOr<Spliced> SpliceLines(std::string_view s) {
  Spliced out;
  out.text.reserve(s.size());
  out.line.reserve(s.size());
  int line = 1;
  size_t i = 0;
  if (s.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // UTF-8 byte order mark
  while (i < s.size()) {
    const char c = s[i];
    if (c == '?' && i + 2 < s.size() && s[i + 1] == '?' &&
        std::string_view("=/'()!<>-").find(s[i + 2]) != std::string_view::npos) {
      return Fail(line, "trigraph sequences are not allowed");
    }
    if (c == '\r') {
      if (i + 1 >= s.size() || s[i + 1] != '\n') return Fail(line, "carriage return without line feed");
      ++i;
      continue;
    }
    if (c == '\\') {
      size_t j = i + 1;
      while (j < s.size() && IsHorizontalSpace(s[j])) ++j;
      const bool eol = j >= s.size() || s[j] == '\n' || s[j] == '\r';
      if (eol && j != i + 1) return Fail(line, "backslash followed by whitespace at end of line");
      if (j >= s.size()) return Fail(line, "backslash at end of file");
      if (eol) {
        if (s[j] == '\r') ++j;
        if (j >= s.size() || s[j] != '\n') return Fail(line, "carriage return without line feed");
        out.splices.push_back(out.text.size());
        ++line;
        i = j + 1;
        continue;
      }
    }
    out.text.push_back(c);
    out.line.push_back(line);
    if (c == '\n') ++line;
    ++i;
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(const Spliced& in) : s_(in.text), lines_(in.line), splices_(in.splices) {}

  StatusOr<std::vector<PpToken>> Run() {
    while (true) {
      KFORGE_RETURN_IF_ERROR(SkipSpaceAndComments());
      if (pos_ >= s_.size()) break;
      KFORGE_RETURN_IF_ERROR(LexOne());
    }
    return std::move(tokens_);
  }

 private:
  int LineAt(size_t p) const {
    if (lines_.empty()) return 1;
    return lines_[std::min(p, lines_.size() - 1)];
  }
  char At(size_t p) const { return p < s_.size() ? s_[p] : '\0'; }

  void Emit(TokenKind kind, std::string text, size_t start) {
    tokens_.push_back({kind, std::move(text), LineAt(start), line_start_});
    line_start_ = kind == TokenKind::kNewline;
  }

  Status SkipSpaceAndComments() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (IsHorizontalSpace(c)) {
        ++pos_;
      } else if (c == '\n') {
        Emit(TokenKind::kNewline, "\n", pos_);
        ++pos_;
      } else if (c == '/' && At(pos_ + 1) == '*') {
        const size_t end = s_.find("*/", pos_ + 2);
        if (end == std::string_view::npos) return Fail(LineAt(pos_), "unterminated /* comment");
        // A newline inside a comment counts as a line break here, whatever the compiler does.
        if (s_.substr(pos_, end - pos_).find('\n') != std::string_view::npos) line_start_ = true;
        pos_ = end + 2;
      } else if (c == '/' && At(pos_ + 1) == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
    return Status::Ok();
  }

  // True when the next token must be read as a header name: after `# include` (and the other
  // file-reading directives) and after `__has_include(`.
  bool ExpectHeaderName() const {
    const size_t n = tokens_.size();
    if (n >= 2 && tokens_[n - 1].kind == TokenKind::kIdentifier && tokens_[n - 2].kind == TokenKind::kPunct &&
        tokens_[n - 2].text == "#" && tokens_[n - 2].at_line_start) {
      const std::string& d = tokens_[n - 1].text;
      return d == "include" || d == "include_next" || d == "import" || d == "embed";
    }
    if (n >= 2 && tokens_[n - 1].kind == TokenKind::kPunct && tokens_[n - 1].text == "(" &&
        tokens_[n - 2].kind == TokenKind::kIdentifier) {
      const std::string& f = tokens_[n - 2].text;
      return f == "__has_include" || f == "__has_include_next" || f == "__has_embed";
    }
    return false;
  }

  Status LexOne() {
    const size_t start = pos_;
    const unsigned char c = static_cast<unsigned char>(s_[pos_]);
    if ((c == '<' || c == '"') && ExpectHeaderName()) {
      const char close = c == '<' ? '>' : '"';
      size_t end = pos_ + 1;
      while (end < s_.size() && s_[end] != close && s_[end] != '\n') ++end;
      if (end >= s_.size() || s_[end] != close) return Fail(LineAt(start), "unterminated header name");
      Emit(TokenKind::kHeaderName, std::string(s_.substr(start + 1, end - start - 1)), start);
      pos_ = end + 1;
      return Status::Ok();
    }
    if (IsIdentStart(c)) {
      size_t end = pos_;
      while (end < s_.size() && IsIdentChar(static_cast<unsigned char>(s_[end]))) ++end;
      const std::string_view ident = s_.substr(pos_, end - pos_);
      const char next = At(end);
      if (next == '"' &&
          (ident == "R" || ident == "u8R" || ident == "uR" || ident == "UR" || ident == "LR")) {
        return LexRawString(start, end);
      }
      if ((next == '"' || next == '\'') && (ident == "u8" || ident == "u" || ident == "U" || ident == "L")) {
        return LexQuoted(start, end);
      }
      Emit(TokenKind::kIdentifier, std::string(ident), start);
      pos_ = end;
      return Status::Ok();
    }
    if (std::isdigit(c) || (c == '.' && std::isdigit(static_cast<unsigned char>(At(pos_ + 1))))) {
      size_t end = pos_ + 1;
      while (end < s_.size()) {
        const unsigned char d = static_cast<unsigned char>(s_[end]);
        if ((d == 'e' || d == 'E' || d == 'p' || d == 'P') && (At(end + 1) == '+' || At(end + 1) == '-')) {
          end += 2;
        } else if (d == '\'' && IsIdentChar(static_cast<unsigned char>(At(end + 1)))) {
          end += 2;
        } else if (IsIdentChar(d) || d == '.') {
          ++end;
        } else {
          break;
        }
      }
      Emit(TokenKind::kNumber, std::string(s_.substr(start, end - start)), start);
      pos_ = end;
      return Status::Ok();
    }
    if (c == '"' || c == '\'') return LexQuoted(start, pos_);
    if (c == '\\')
      return Fail(LineAt(start),
                  "backslash outside a literal (universal character names are not allowed there)");
    if (s_.substr(pos_, 4) == "%:%:") {
      Emit(TokenKind::kPunct, "##", start);
      pos_ += 4;
    } else if (s_.substr(pos_, 2) == "%:") {
      Emit(TokenKind::kPunct, "#", start);
      pos_ += 2;
    } else if (s_.substr(pos_, 2) == "##") {
      Emit(TokenKind::kPunct, "##", start);
      pos_ += 2;
    } else {
      Emit(TokenKind::kPunct, std::string(1, static_cast<char>(c)), start);
      ++pos_;
    }
    return Status::Ok();
  }

  // A string or character literal whose opening quote is at `quote` (prefix, if any, at `start`).
  Status LexQuoted(size_t start, size_t quote) {
    const char q = s_[quote];
    size_t i = quote + 1;
    while (true) {
      if (i >= s_.size() || s_[i] == '\n') return Fail(LineAt(start), "unterminated literal");
      if (s_[i] == '\\') {
        i += 2;
        continue;
      }
      if (s_[i] == q) break;
      ++i;
    }
    Emit(q == '"' ? TokenKind::kString : TokenKind::kChar, std::string(s_.substr(start, i + 1 - start)),
         start);
    pos_ = i + 1;
    return Status::Ok();
  }

  Status LexRawString(size_t start, size_t quote) {
    size_t open = quote + 1;
    while (open < s_.size() && s_[open] != '(') {
      const unsigned char d = static_cast<unsigned char>(s_[open]);
      if (d == ')' || d == '\\' || d == '"' || d <= ' ' || d >= 0x7f || open - quote > 16) {
        return Fail(LineAt(start), "invalid raw string delimiter");
      }
      ++open;
    }
    if (open >= s_.size()) return Fail(LineAt(start), "unterminated raw string literal");
    const std::string terminator = ")" + std::string(s_.substr(quote + 1, open - quote - 1)) + "\"";
    const size_t close = s_.find(terminator, open + 1);
    if (close == std::string_view::npos) return Fail(LineAt(start), "unterminated raw string literal");
    const size_t end = close + terminator.size();
    // Splices are reverted inside raw strings, so the spliced and physical views of where the
    // literal ends could differ; refuse rather than pick one.
    const auto it = std::upper_bound(splices_.begin(), splices_.end(), quote);
    if (it != splices_.end() && *it < end)
      return Fail(LineAt(start), "line splice inside a raw string literal");
    Emit(TokenKind::kString, std::string(s_.substr(start, end - start)), start);
    pos_ = end;
    return Status::Ok();
  }

  std::string_view s_;
  const std::vector<int>& lines_;
  const std::vector<size_t>& splices_;
  size_t pos_ = 0;
  bool line_start_ = true;
  std::vector<PpToken> tokens_;
};

}  // namespace

StatusOr<std::vector<PpToken>> LexPreprocessingTokens(std::string_view source) {
  KFORGE_ASSIGN_OR_RETURN(Spliced spliced, SpliceLines(source));
  return Lexer(spliced).Run();
}

std::string Truncate(std::string_view text, size_t max_len) {
  std::string out;
  for (const char c : text) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  return out;
}

}  // namespace kforge::cuda::internal
