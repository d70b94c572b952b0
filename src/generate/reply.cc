// Candidates from replies, and the tools that carry them.
#include "generate/reply.h"

#include "generate/reply_text.h"

namespace kforge::generate {

std::vector<common::ToolSpec> SolutionTools() {
  nlohmann::json expr = {{"type", {"integer", "string"}}};
  nlohmann::json dims = {{"type", "array"}, {"items", expr}, {"minItems", 1}, {"maxItems", 3}};
  nlohmann::json launch = {
      {"type", "object"},
      {"description",
       "A kernel step {kernel, grid, block, shared_bytes, args} or a memset step {memset, value}"},
      {"properties",
       {{"kernel", {{"type", "string"}}},
        {"grid", dims},
        {"block", dims},
        {"shared_bytes", expr},
        {"args", {{"type", "array"}, {"items", {{"type", "string"}}}}},
        {"memset", {{"type", "string"}}},
        {"value", {{"type", "number"}}}}}};
  nlohmann::json scratch = {{"type", "object"},
                            {"properties",
                             {{"name", {{"type", "string"}}},
                              {"dtype", {{"type", "string"}}},
                              {"shape", {{"type", "array"}, {"items", expr}}}}},
                            {"required", {"name", "dtype", "shape"}}};
  nlohmann::json parameters = {
      {"type", "object"},
      {"properties",
       {{"source", {{"type", "string"}, {"description", "CUDA C++ source with the __global__ kernels"}}},
        {"launches",
         {{"type", "array"}, {"items", launch}, {"description", "The launch plan, run in order"}}},
        {"scratch", {{"type", "array"}, {"items", scratch}}},
        {"options", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
      {"required", {"source", "launches"}}};
  return {{"run",
           "Compile, check and time a solution; returns the compiler output, the correctness check "
           "and the timing against the reference.",
           parameters},
          {"submit", "Hand in the final solution and end the session.", parameters}};
}

std::vector<Candidate> CandidatesOf(const common::Message& reply, dataset::Protocol protocol,
                                    const std::string& task) {
  std::vector<Candidate> found;
  auto with_task = [&task](StatusOr<common::Solution> solution) {
    if (solution.ok()) solution->task = task;
    return solution;
  };
  if (protocol == dataset::Protocol::kText) {
    Candidate c;
    c.solution = with_task(ParseReplyText(reply.content));
    found.push_back(std::move(c));
    return found;
  }
  for (const common::ToolCall& call : reply.tool_calls) {
    Candidate c;
    c.tool_call_id = call.id;
    c.submit = call.name == "submit";
    if (call.name != "run" && call.name != "submit") {
      c.solution =
          Status::InvalidArgument("unknown tool \"" + call.name.substr(0, 40) + "\": use run or submit");
    } else if (!call.arguments.is_object()) {
      c.solution = Status::InvalidArgument(
          call.name + (call.arguments.is_string() ? ": arguments are not valid JSON (" +
                                                        call.arguments.get<std::string>().substr(0, 120) + ")"
                                                  : ": arguments are not a JSON object"));
    } else {
      nlohmann::json fields = call.arguments;
      fields.erase("task");
      c.solution = with_task(common::SolutionFromJson(fields, call.name));
    }
    found.push_back(std::move(c));
  }
  return found;
}

}  // namespace kforge::generate
