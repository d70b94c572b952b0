// A conservative lexer for C++ translation phases 1-3, used to find every preprocessing directive
// and preprocessor operator in untrusted CUDA source. Where compilers may disagree (lone CR,
// backslash-space-newline, trigraphs, splices inside raw strings) it reports an error instead of
// guessing, so what it reports as a directive is a superset of what any preprocessor sees.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::cuda::internal {

enum class TokenKind { kIdentifier, kNumber, kString, kChar, kHeaderName, kPunct, kNewline };

struct PpToken {
  TokenKind kind;
  std::string text;  // spelling after line splicing; header names without the delimiters
  int line;          // 1-based physical line where the token starts
  /// No token precedes this one on its line, counting a newline inside a comment as a line break.
  bool at_line_start;
};

/// Splits `source` (already checked to be valid UTF-8 without NULs or stray control characters)
/// into preprocessing tokens with comments removed. Fails on constructs the policy does not accept.
StatusOr<std::vector<PpToken>> LexPreprocessingTokens(std::string_view source);

/// `text` made safe for a one-line message: at most `max_len` printable ASCII characters.
std::string Truncate(std::string_view text, size_t max_len = 64);

}  // namespace kforge::cuda::internal
