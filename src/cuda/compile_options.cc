// The NVRTC option allowlist of docs/formats.md ("options").
#include <array>
#include <string>

#include "cuda/pp_lexer.h"
#include "cuda/source_policy.h"

namespace kforge::cuda {
namespace {

constexpr std::array<std::string_view, 9> kExactOptions = {
    "--use_fast_math", "-use_fast_math", "--extra-device-vectorization",
    "-default-device", "-lineinfo",      "--std=c++17",
    "--std=c++20",     "-std=c++17",     "-std=c++20"};
constexpr std::array<std::string_view, 4> kBoolOptions = {"--ftz=", "--prec-div=", "--prec-sqrt=", "--fmad="};

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (const char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// Names the compiler or the policy relies on (__has_include, _Pragma, __CUDA_ARCH__) are reserved.
bool IsReservedName(std::string_view s) {
  return s.substr(0, 2) == "__" ||
         (s.size() >= 2 && s[0] == '_' && std::isupper(static_cast<unsigned char>(s[1]))) || s == "defined";
}

bool IsPlainValue(std::string_view s) {
  if (s.size() > 64) return false;
  for (const char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '+'))
      return false;
  }
  return true;
}

bool IsAllowedOption(std::string_view o) {
  for (const std::string_view e : kExactOptions) {
    if (o == e) return true;
  }
  for (const std::string_view b : kBoolOptions) {
    if (o.substr(0, b.size()) == b) {
      const std::string_view v = o.substr(b.size());
      return v == "true" || v == "false";
    }
  }
  for (const std::string_view m : {std::string_view("--maxrregcount="), std::string_view("-maxrregcount=")}) {
    if (o.substr(0, m.size()) == m) {
      const std::string_view v = o.substr(m.size());
      if (v.empty() || v.size() > 3) return false;
      for (const char c : v) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      }
      const int n = std::stoi(std::string(v));
      return n >= 16 && n <= 255;
    }
  }
  if (o.substr(0, 2) == "-D") {
    const std::string_view def = o.substr(2);
    const size_t eq = def.find('=');
    const std::string_view name = def.substr(0, eq);
    if (!IsIdentifier(name) || IsReservedName(name)) return false;
    return eq == std::string_view::npos || IsPlainValue(def.substr(eq + 1));
  }
  return false;
}

// Options that set the same thing share a key ("-use_fast_math" and "--use_fast_math", "-DX" and
// "-DX=1"), so each may be given once and sorting the options cannot change their meaning.
std::string OptionKey(std::string_view o) {
  if (o.substr(0, 2) == "-D") return std::string(o.substr(0, o.find('=')));
  std::string_view k = o.substr(0, o.find('='));
  while (!k.empty() && k.front() == '-') k.remove_prefix(1);
  return std::string(k);
}

}  // namespace

Status CheckCompileOptions(const std::vector<std::string>& options) {
  if (options.size() > 64) return Status::InvalidArgument("too many compile options (at most 64)");
  for (size_t i = 0; i < options.size(); ++i) {
    if (!IsAllowedOption(options[i])) {
      return Status::InvalidArgument("options[" + std::to_string(i) + "]: \"" +
                                     internal::Truncate(options[i]) + "\" is not an allowed NVRTC option");
    }
    for (size_t j = 0; j < i; ++j) {
      if (OptionKey(options[j]) == OptionKey(options[i])) {
        return Status::InvalidArgument("options[" + std::to_string(i) + "]: \"" +
                                       internal::Truncate(options[i]) + "\" sets what options[" +
                                       std::to_string(j) + "] already set");
      }
    }
  }
  return Status::Ok();
}

}  // namespace kforge::cuda
