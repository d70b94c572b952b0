// Solutions out of a teacher's reply: the cuda and json blocks of a text reply, or the arguments of
// the `run` and `submit` tool calls, which are a solution's own fields.
#pragma once

#include <string>
#include <vector>

#include "kforge/common/solution.h"
#include "kforge/common/status.h"
#include "kforge/dataset/trajectory.h"
#include "kforge/llm/chat.h"

namespace kforge::generate {

/// The tools of the tools protocol: `run` (judge a candidate, return the result) and `submit` (judge
/// the final solution and end the episode). Both take source, launches, scratch and options.
std::vector<common::ToolSpec> SolutionTools();

/// One candidate found in a reply.
struct Candidate {
  std::string tool_call_id;  ///< tools protocol; empty for text
  bool submit = false;       ///< the `submit` tool
  StatusOr<common::Solution> solution = Status::Internal("unset");
};

/// Text protocol: the reply's one candidate (or why it has none), read leniently (reply_text.h). Tools protocol: one per call of
/// `run` or `submit`; a call of another tool is a candidate whose error says so. `task` is set on
/// every solution.
std::vector<Candidate> CandidatesOf(const common::Message& reply, dataset::Protocol protocol,
                                    const std::string& task);

}  // namespace kforge::generate
