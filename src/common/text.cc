// Quoting for error messages and UTF-8 validation.
#include "kforge/common/text.h"

#include <cstdint>
#include <cstdio>

namespace kforge::common {
namespace {

/// Length of the valid UTF-8 sequence at `text[i]`, or 0 when it is not one.
size_t Utf8Length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  uint8_t c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t min;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2, min = 0x80, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, min = 0x800, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

size_t BidiControlLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return i + k < text.size() ? static_cast<uint8_t>(text[i + k]) : 0; };
  if (byte(0) == 0xD8 && byte(1) == 0x9C) return 2;  // U+061C
  if (byte(0) != 0xE2) return 0;
  const uint8_t b1 = byte(1), b2 = byte(2);
  const bool marks = b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F);     // U+200E, U+200F
  const bool embeddings = b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE;  // U+202A..U+202E
  const bool isolates = b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9;    // U+2066..U+2069
  return marks || embeddings || isolates ? 3 : 0;
}

std::string BidiControlText(std::string_view text, size_t i) {
  static const char kHex[] = "0123456789abcdef";
  const size_t n = BidiControlLength(text, i);
  if (n == 0) return "";
  uint32_t cp = n == 2 ? ((text[i] & 0x1F) << 6) | (text[i + 1] & 0x3F)
                       : ((text[i] & 0x0F) << 12) | ((text[i + 1] & 0x3F) << 6) | (text[i + 2] & 0x3F);
  std::string out = "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
  return out;
}

std::string Quote(std::string_view text, size_t max_bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size() && i < max_bytes) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t n = Utf8Length(text, i);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (n > 1) {
      const std::string bidi = BidiControlText(text, i);
      out.append(bidi.empty() ? text.substr(i, n) : std::string_view(bidi));
      i += n;
      continue;
    } else if (n == 0 || c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
  if (i < text.size()) out += "...";
  return out;
}

std::string Printable(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t n = Utf8Length(text, i);
    bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;  // U+0080..U+009F
    if (n > 1 && !c1) {
      const std::string bidi = BidiControlText(text, i);
      out.append(bidi.empty() ? text.substr(i, n) : std::string_view(bidi));
      i += n;
      continue;
    }
    size_t bytes = c1 ? 2 : 1;
    for (size_t k = 0; k < bytes; ++k) {
      unsigned char b = static_cast<unsigned char>(text[i + k]);
      if (!c1 && n == 1 && b >= 0x20 && b != 0x7f && b != '\\') {
        out += static_cast<char>(b);
      } else {
        out += "\\x";
        out += kHex[b >> 4];
        out += kHex[b & 15];
      }
    }
    i += bytes;
  }
  return out;
}

bool IsValidUtf8(std::string_view text, size_t* bad_offset) {
  size_t i = 0;
  while (i < text.size()) {
    size_t n = Utf8Length(text, i);
    if (n == 0) {
      if (bad_offset != nullptr) *bad_offset = i;
      return false;
    }
    i += n;
  }
  return true;
}

std::string FormatNumber(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace kforge::common
