// Text helpers for error messages: untrusted text (expressions, names, file content) is quoted
// short and on one line, so a message never spans lines or echoes a whole input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kforge::common {

/// `text` in double quotes, with '"', '\\', control characters and invalid UTF-8 escaped (\n, \xNN),
/// cut after about `max_bytes` of input (never inside a UTF-8 sequence) and then marked "...".
std::string Quote(std::string_view text, size_t max_bytes = 40);

/// `text` safe to print on a terminal: control characters (C0, DEL and C1: an ESC or CSI would
/// drive the terminal), backslashes and invalid UTF-8 escaped as \xNN; nothing cut, no quotes.
std::string Printable(std::string_view text);

/// True when `text` is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
/// Otherwise `*bad_offset`, when given, is the offset of the first byte that is not.
bool IsValidUtf8(std::string_view text, size_t* bad_offset = nullptr);

/// One number printed with a printf `format` that takes one double ("%.1f%%"), for tables and pages.
std::string FormatNumber(const char* format, double value);

}  // namespace kforge::common
