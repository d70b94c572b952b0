// The YAML front matter of a SKILL.md, read strictly: a `---` line, `key: value` lines of scalars
// (plain, 'single' or "double" quoted) and at most one level of indented `key: value` map, a `---`
// line, then the Markdown body. Everything else YAML allows (block scalars, flow collections,
// sequences, anchors, tags, values continued on the next line) is refused in one line naming the
// line, so that what kforge reads is what any YAML reader reads.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::skill {

struct FrontMatterField {
  std::string key;
  int line = 0;                                          ///< 1-based line of the key in the file
  bool is_map = false;                                   ///< `key:` followed by indented `name: value` lines
  std::string scalar;                                    ///< when !is_map
  std::vector<std::pair<std::string, std::string>> map;  ///< when is_map, in file order
};

struct FrontMatter {
  std::vector<FrontMatterField> fields;  ///< in file order, keys distinct
  std::string body;                      ///< everything after the closing `---` line
  int body_line = 0;                     ///< 1-based line where the body starts
};

/// Parses `text` (a whole SKILL.md). Errors read "WHERE:LINE: what is wrong".
StatusOr<FrontMatter> ParseFrontMatter(std::string_view text, const std::string& where);

}  // namespace kforge::skill
