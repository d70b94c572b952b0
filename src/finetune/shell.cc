// Shell quoting, for the command lines kforge prints and the batch scripts it writes.
#include <algorithm>
#include <cctype>
#include <string>

#include "kforge/finetune/launch.h"

namespace kforge::finetune {

std::string ShellQuote(std::string_view value) {
  const bool safe = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  });
  if (safe) return std::string(value);
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) line += (line.empty() ? "" : " ") + ShellQuote(arg);
  return line;
}

}  // namespace kforge::finetune
