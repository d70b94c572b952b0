// HtmlEscape.
#include "kforge/common/html.h"

#include "kforge/common/text.h"

namespace kforge::common {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (const size_t bidi = BidiControlLength(text, i); bidi > 0) {  // shown, not obeyed
      out += BidiControlText(text, i);
      i += bidi - 1;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace kforge::common
