// Text made safe for HTML and SVG pages (reports, the skill eval page).
#pragma once

#include <string>
#include <string_view>

namespace kforge::common {

/// `text` with &, <, >, " escaped, safe in HTML and SVG text and in double-quoted attributes, and
/// bidirectional controls shown as escapes (BidiControlText) rather than obeyed.
std::string HtmlEscape(std::string_view text);

}  // namespace kforge::common
