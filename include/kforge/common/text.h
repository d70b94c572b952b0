// Text helpers for error messages: untrusted text (expressions, names, file content) is quoted
// short and on one line, so a message never spans lines or echoes a whole input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kforge::common {

/// `text` in double quotes, with '"', '\\', control characters and invalid UTF-8 escaped (\n, \xNN),
/// bidirectional controls as a backslash, "u" and four hex digits (BidiControlText), cut after
/// about `max_bytes` of input (never inside a UTF-8 sequence) and then marked "...".
std::string Quote(std::string_view text, size_t max_bytes = 40);

/// `text` safe to print on a terminal: control characters (C0, DEL and C1: an ESC or CSI would
/// drive the terminal), backslashes and invalid UTF-8 escaped as \xNN, bidirectional controls as
/// BidiControlText writes them; nothing cut, no quotes.
std::string Printable(std::string_view text);

/// The bytes of the bidirectional control at `text[i]` (U+061C, U+200E, U+200F, U+202A..U+202E,
/// U+2066..U+2069), or 0. Shown raw, one reorders what a reader sees ("Trojan Source").
size_t BidiControlLength(std::string_view text, size_t i);
/// The escape shown for the bidirectional control at `text[i]` (a backslash, "u" and its four hex
/// digits: U+202E shows as backslash-u202e), "" when there is none there.
std::string BidiControlText(std::string_view text, size_t i);

/// True when `text` is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
/// Otherwise `*bad_offset`, when given, is the offset of the first byte that is not.
bool IsValidUtf8(std::string_view text, size_t* bad_offset = nullptr);

/// One number printed with a printf `format` that takes one double ("%.1f%%"), for tables and pages.
std::string FormatNumber(const char* format, double value);

}  // namespace kforge::common
