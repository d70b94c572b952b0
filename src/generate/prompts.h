// Prompt templates: plain files in a prompts folder that users edit without rebuilding. `{{name}}`
// is replaced by a value; an unknown name is an error, so a typo in a template fails at start.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "kforge/common/library_ops.h"
#include "kforge/common/status.h"
#include "kforge/dataset/trajectory.h"
#include "kforge/verify/worker_protocol.h"

namespace kforge::generate {

struct PromptSet {
  std::string system;          ///< system.md
  std::string task;            ///< task.md
  std::string feedback;        ///< feedback.md
  std::string protocol_text;   ///< protocol_text.md
  std::string protocol_tools;  ///< protocol_tools.md
  std::string ops_library;     ///< ops_library.md: the allowlisted library ops (--allow-ops library)
  std::string ops_all;         ///< ops_all.md: added under --allow-ops all (aten:: operators)
  std::string ops_none;        ///< ops_none.md: instead of both under --allow-ops none
  /// "sha256:<hex>" over every template, for run.json: a changed prompt is a changed run.
  std::string hash;

  /// Reads the templates from `dir`; an error names the missing file.
  static StatusOr<PromptSet> Load(const std::filesystem::path& dir);

  /// The system prompt's {{library_ops}}: what a plan may call under `policy`.
  std::string LibraryOps(common::OpPolicy policy) const;
};

/// system.md for a run: the device (from the first worker's hello; a compile-only line without one),
/// the NVRTC target, the library ops `op_policy` allows and the protocol's instructions. Skills are
/// added by the caller.
StatusOr<std::string> RenderSystemPrompt(const PromptSet& prompts, dataset::Protocol protocol,
                                         const std::optional<verify::HelloReply>& hello, bool compile_only,
                                         const std::string& arch, common::OpPolicy op_policy);

/// Replaces every `{{name}}` in `text` with `values[name]`. InvalidArgument naming `where` for a
/// name without a value or an unclosed `{{`.
StatusOr<std::string> Render(const std::string& text, const std::map<std::string, std::string>& values,
                             const std::string& where);

}  // namespace kforge::generate
