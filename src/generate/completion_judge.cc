// The completion judge (kforge/generate/completion_judge.h): requests of kforge.rl/1 answered with
// generate's reply parser, judge and feedback.
#include "kforge/generate/completion_judge.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "generate/attempt.h"
#include "generate/episode.h"
#include "generate/prompts.h"
#include "generate/reply.h"
#include "generate/task_view.h"
#include "kforge/common/json_fields.h"
#include "kforge/common/thread_pool.h"
#include "kforge/llm/chat.h"

namespace kforge::generate {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

/// Longest task id echoed back in an error.
constexpr size_t kShownId = 120;

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// One completion of a batch: what was asked, what was read from it, and its attempts.
struct Item {
  std::string id;
  std::string task;
  dataset::Protocol protocol = dataset::Protocol::kText;
  std::string refusal;  ///< why it is not judged at all (unknown task, over the cap, malformed)
  std::vector<Candidate> candidates;
  std::vector<dataset::Attempt> attempts;  ///< one per candidate judged (at most kMaxCandidatesPerReply)
  double judged_ms = 0;                    ///< since the batch began, when its last candidate was judged
};

/// The assistant message of a completion: text, a message object, or a conversation (its last
/// assistant message), as TRL hands completions to a reward function.
StatusOr<common::Message> CompletionMessage(const json& completion) {
  if (completion.is_string()) return common::Message::Assistant(completion.get<std::string>());
  if (completion.is_object()) return common::MessageFromJson(completion);
  if (completion.is_array()) {
    for (auto it = completion.rbegin(); it != completion.rend(); ++it)
      if (it->is_object() && it->value("role", std::string()) == "assistant")
        return common::MessageFromJson(*it);
    return Status::InvalidArgument("completion: a conversation without an assistant message");
  }
  return Status::InvalidArgument(
      "completion: expected a string, a message object or a list of messages, got " +
      common::JsonTypeName(completion));
}

/// The item of `entry` (index `index` of the batch), read strictly; a bad entry is a refused item.
Item ReadItem(const json& entry, size_t index, const std::map<std::string, common::Task>& tasks,
              size_t max_bytes) {
  Item item;
  item.id = std::to_string(index);
  const std::string where = "batch[" + std::to_string(index) + "]";
  if (!entry.is_object()) {
    item.refusal = where + ": expected an object, got " + common::JsonTypeName(entry);
    return item;
  }
  common::JsonFields in(entry, where);
  std::string protocol;
  Status read = in.CheckObject({"id", "task", "completion", "protocol"});
  if (read.ok()) read = in.Read("id", item.id);
  if (read.ok()) read = in.Read("task", item.task, /*required=*/true);
  if (read.ok()) read = in.Read("protocol", protocol);
  if (read.ok() && !in.Has("completion")) read = in.Error("completion", "missing");
  if (!read.ok()) {
    item.refusal = read.message();
    return item;
  }
  if (item.id.size() > 200) item.id = item.id.substr(0, 200);
  if (!tasks.count(item.task)) {
    item.refusal = where + ".task: no task \"" + item.task.substr(0, kShownId) + "\" on this server";
    item.task = item.task.substr(0, kShownId);
    return item;
  }
  const json& completion = entry["completion"];
  const size_t bytes = completion.is_string() ? completion.get_ref<const std::string&>().size()
                                              : common::JsonText(completion).size();
  if (bytes > max_bytes) {
    item.refusal = where + ".completion: " + std::to_string(bytes) + " bytes, over the server's limit of " +
                   std::to_string(max_bytes) + " (kforge serve --max-completion-bytes)";
    return item;
  }
  StatusOr<common::Message> message = CompletionMessage(completion);
  if (!message.ok()) {
    item.refusal = where + "." + message.status().message();
    return item;
  }
  if (!protocol.empty()) {
    auto named = dataset::kProtocolNames.Parse(protocol);
    if (!named) {
      item.refusal = where + ".protocol: expected text or tools, got \"" + protocol.substr(0, 40) + "\"";
      return item;
    }
    item.protocol = *named;
  } else {
    item.protocol = message->tool_calls.empty() ? dataset::Protocol::kText : dataset::Protocol::kTools;
  }
  item.candidates = CandidatesOf(*message, item.protocol, item.task);
  return item;
}

/// The attempts generate would have judged of `item`, in order, and what the teacher would be told of
/// them: a tool result per call (tools protocol) or the feedback text; `done` when one ended the episode.
std::vector<dataset::Attempt> CountedAttempts(Item& item, const PromptSet& prompts, bool compile_only,
                                              double target_speedup, json& tool_results, std::string& feedback,
                                              bool& done) {
  std::vector<dataset::Attempt> counted;
  for (size_t i = 0; i < item.candidates.size(); ++i) {
    const Candidate& candidate = item.candidates[i];
    if (done || i >= item.attempts.size()) {  // not judged; every tool call still gets its result
      tool_results.push_back(
          {{"tool_call_id", candidate.tool_call_id},
           {"content", done ? std::string("Not run: an earlier call of this reply ended the episode.")
                            : "Not run: at most " + std::to_string(kMaxCandidatesPerReply) +
                                  " tool calls of one reply are run."},
           {"is_error", true}});
      continue;
    }
    dataset::Attempt& attempt = item.attempts[i];
    const bool reached = ReachedTarget(attempt, compile_only, target_speedup);
    done = candidate.submit || reached;
    const std::string text = AttemptFeedback(prompts, attempt, done, target_speedup, compile_only);
    if (item.protocol == dataset::Protocol::kTools)
      tool_results.push_back({{"tool_call_id", candidate.tool_call_id},
                              {"content", text},
                              {"is_error", !attempt.correct && !reached}});
    else
      feedback = text;
    counted.push_back(attempt);
  }
  if (item.candidates.empty())  // tools protocol without a tool call
    feedback = "Call `run` to test a solution or `submit` to hand it in.";
  if (item.protocol == dataset::Protocol::kTools)
    for (const json& r : tool_results)
      feedback += (feedback.empty() ? "" : "\n\n") + r["content"].get<std::string>();
  return counted;
}

/// The result of one judged item: the best attempt's verdict and reward, and the feedback of each
/// candidate as generate would send it.
json ItemResult(Item& item, const PromptSet& prompts, bool compile_only, double target_speedup) {
  json out = {{"id", item.id}, {"task", item.task}};
  // Where the time went, over its candidates: NVRTC, the GPU check against the reference, the timing.
  double compile_ms = 0, check_ms = 0, bench_ms = 0;
  for (const dataset::Attempt& a : item.attempts) {
    if (!a.verdict) continue;
    if (a.verdict->compile) compile_ms += a.verdict->compile->ms;
    check_ms += a.verdict->timing.gpu_ms.value_or(0);
    if (a.bench) bench_ms += a.bench->wall_seconds * 1000;
  }
  out["timing"] = {{"judged_ms", item.judged_ms},
                   {"compile_ms", compile_ms},
                   {"gpu_check_ms", check_ms},
                   {"bench_ms", bench_ms}};
  if (!item.refusal.empty()) {
    out["status"] = "refused";
    out["error"] = item.refusal;
    out["reward"] = nullptr;
    return out;
  }
  json tool_results = json::array();
  std::string feedback;
  bool done = false;
  const std::vector<dataset::Attempt> counted =
      CountedAttempts(item, prompts, compile_only, target_speedup, tool_results, feedback, done);

  const std::optional<int> best = BestAttempt(counted);
  const dataset::Attempt none;  // no solution
  const dataset::Attempt& a = best ? counted[*best] : none;
  const bool harness = a.Is(common::VerdictStatus::kHarnessError);
  const bool suspect = !a.suspect_timing.empty();
  out["status"] = a.StatusName();
  out["message"] = !a.status ? a.parse_error
                   : a.verdict               ? a.verdict->message.substr(0, 2000)
                                             : "";
  out["compiled"] = a.compiled;
  out["correct"] = compile_only ? json(nullptr) : json(a.correct);
  out["speedup"] = a.speedup ? json(*a.speedup) : json(nullptr);
  out["sol_pct"] = a.bench && a.bench->roofline && a.bench->roofline->sol_pct > 0
                       ? json(a.bench->roofline->sol_pct)
                       : json(nullptr);
  out["suspect_timing"] = a.suspect_timing;
  out["components"] = {{"compiled", a.compiled ? 1 : 0},
                       {"correct", a.correct ? 1 : 0},
                       {"speedup", a.speedup ? json(*a.speedup) : json(nullptr)},
                       {"suspect_timing", suspect ? 1 : 0}};
  out["reward"] = harness ? json(nullptr) : json(ShapedReward(a.compiled, a.correct, a.speedup));
  out["done"] = done;
  out["candidates"] = item.candidates.size();
  out["judged"] = item.attempts.size();
  out["feedback"] = feedback;
  if (item.protocol == dataset::Protocol::kTools) out["tool_results"] = std::move(tool_results);
  return out;
}

/// Admission: the completions of every client being judged stay under `max`. Counts `n` more in
/// `in_flight`, or returns the busy answer.
std::optional<json> Admit(std::atomic<size_t>& in_flight, size_t n, size_t max) {
  size_t before = in_flight.load();
  do {
    if (before + n > max)
      return json{{"error", "busy: " + std::to_string(before) + " completions are being judged (the server's limit is " +
                                std::to_string(max) + "); retry shortly"},
                  {"busy", true}};
  } while (!in_flight.compare_exchange_weak(before, before + n));
  return std::nullopt;
}

/// Judges the candidates of `items` with `judge`, filling their attempts in place, until `gone` says
/// the client left (then `abandoned`). Returns how many items were started.
size_t JudgeItems(bench::Judge& judge, std::vector<Item>& items, const std::function<bool()>& gone,
                  bool compile_only, Clock::time_point start, bool& abandoned) {
  // Every attempt exists before any is judged: the waiters below fill them in place.
  for (Item& item : items) {
    if (!item.refusal.empty()) continue;
    const size_t judged = std::min(item.candidates.size(), kMaxCandidatesPerReply);
    for (size_t c = 0; c < judged; ++c) item.attempts.push_back(StartAttempt(item.candidates[c], 1));
  }
  // Candidates go to the judge a window at a time, so that a client that left stops the rest. Each
  // judgment is waited for on a thread of its own, so that each completion's time is when it was judged.
  const size_t window = std::max<size_t>(16, 4 * std::max(1u, std::thread::hardware_concurrency()));
  std::mutex mu;
  std::condition_variable cv;
  size_t outstanding = 0;
  size_t started = 0;  // items with a candidate submitted, or nothing to submit
  {
    common::ThreadPool waiters(window);  // its destructor waits for every judgment
    for (size_t i = 0; i < items.size() && !abandoned; ++i) {
      Item& item = items[i];
      if (gone()) {
        abandoned = true;
        break;
      }
      ++started;
      for (size_t c = 0; c < item.attempts.size(); ++c) {
        if (!item.candidates[c].solution.ok()) continue;
        if (gone()) {
          abandoned = true;
          break;
        }
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return outstanding < window; });
          ++outstanding;
        }
        auto judged = std::make_shared<std::future<bench::Judgment>>(
            judge.Submit({"rl " + item.id + " " + item.task, *item.candidates[c].solution}));
        waiters.Post([&, i, c, judged] {
          bench::Judgment judgment;
          try {
            judgment = judged->get();
          } catch (const std::exception& e) {  // kforge's failure, not the completion's
            judgment.verdict.status = common::VerdictStatus::kHarnessError;
            judgment.verdict.message = std::string("completion judge: ") + e.what();
          }
          std::lock_guard<std::mutex> lock(mu);
          FinishAttempt(items[i].attempts[c], std::move(judgment), compile_only);
          items[i].judged_ms = std::max(items[i].judged_ms, MillisSince(start));
          --outstanding;
          cv.notify_all();
        });
      }
    }
  }
  return started;
}

}  // namespace

double ShapedReward(bool compiled, bool correct, std::optional<double> speedup) {
  if (!compiled) return 0;
  double reward = 0.1;
  if (!correct) return reward;
  reward += 0.3;
  if (speedup && *speedup > 0) reward += 0.6 * std::min(*speedup, 4.0) / 4.0;
  return reward;
}

struct CompletionJudge::Loaded {
  std::map<std::string, common::Task> tasks;
  PromptSet prompts;
};

CompletionJudge::CompletionJudge(CompletionJudgeOptions options)
    : options_(std::move(options)), loaded_(std::make_unique<Loaded>()) {}

CompletionJudge::~CompletionJudge() = default;

StatusOr<std::unique_ptr<CompletionJudge>> CompletionJudge::Create(CompletionJudgeOptions options,
                                                                    bench::Judge* given) {
  std::unique_ptr<CompletionJudge> judge(new CompletionJudge(std::move(options)));
  judge->given_judge_ = given;
  KFORGE_ASSIGN_OR_RETURN(judge->loaded_->prompts, PromptSet::Load(judge->options_.prompts_dir));
  KFORGE_ASSIGN_OR_RETURN(std::vector<common::Task> tasks, common::LoadTaskTree(judge->options_.tasks_root));
  for (common::Task& task : tasks) {
    std::string id = task.id;
    judge->loaded_->tasks.emplace(std::move(id), std::move(task));
  }
  return judge;
}

bench::Judge& CompletionJudge::judge() {
  if (given_judge_) return *given_judge_;
  std::call_once(judge_started_, [this] {
    bench::BenchOptions bench_options = options_.bench;
    bench_options.verify.tasks_root = options_.tasks_root;
    service_judge_ = std::make_unique<bench::ServiceJudge>(
        bench_options, bench_options.verify.compile_only ? bench::ServiceJudge::Mode::kCompileOnly
                                                         : bench::ServiceJudge::Mode::kTimed);
  });
  return *service_judge_;
}

json CompletionJudge::About() const {
  return {{"protocol", kRlProtocol},
          {"compile_only", options_.bench.verify.compile_only},
          {"arch", options_.bench.verify.arch},
          {"tasks", loaded_->tasks.size()},
          {"target_speedup", options_.target_speedup},
          {"max_batch", options_.max_batch},
          {"max_completion_bytes", options_.max_completion_bytes},
          {"max_in_flight", options_.max_in_flight},
          {"max_request_bytes", MaxRequestBytes()}};
}

size_t CompletionJudge::MaxRequestBytes() const {
  // Enough for two completions at the cap (escaped), at least 64 MiB: a connection holds at most one
  // such line. A client splits a larger batch (kforge_client reads the limit from the hello).
  return std::max<size_t>(size_t{64} << 20, 2 * 6 * options_.max_completion_bytes + (size_t{1} << 20));
}

json CompletionJudge::Answer(const json& request, const std::function<bool()>& gone) {
  if (!request.is_object())
    return {{"error", "request: expected an object, got " + common::JsonTypeName(request)}};
  const std::string op =
      request.contains("op") && request["op"].is_string() ? request["op"].get<std::string>() : "";
  if (op == "judge") return JudgeBatch(request, gone);
  if (op == "prompt") return Prompt(request);
  if (op == "tasks") return Tasks();
  if (op == "stats")
    return {{"in_flight", in_flight_.load()}, {"judged", judged_.load()}, {"abandoned", abandoned_.load()}};
  return {{"error", "request.op: expected judge, prompt, tasks or stats" +
                        (op.empty() ? std::string() : ", got \"" + op.substr(0, 40) + "\"")}};
}

json CompletionJudge::Tasks() const {
  json list = json::array();
  for (const auto& [id, task] : loaded_->tasks)
    list.push_back(
        {{"id", id}, {"level", task.level ? json(*task.level) : json(nullptr)}, {"tags", task.tags}});
  return {{"tasks", std::move(list)}};
}

json CompletionJudge::Prompt(const json& request) {
  common::JsonFields in(request, "request");
  std::string task_id, protocol_name = "text";
  Status read = in.CheckObject({"op", "task", "protocol"});
  if (read.ok()) read = in.Read("task", task_id, /*required=*/true);
  if (read.ok()) read = in.Read("protocol", protocol_name);
  if (!read.ok()) return {{"error", read.message()}};
  auto protocol = dataset::kProtocolNames.Parse(protocol_name);
  if (!protocol)
    return {
        {"error", "request.protocol: expected text or tools, got \"" + protocol_name.substr(0, 40) + "\""}};
  auto found = loaded_->tasks.find(task_id);
  if (found == loaded_->tasks.end())
    return {{"error", "request.task: no task \"" + task_id.substr(0, kShownId) + "\" on this server"}};
  const common::Task& task = found->second;
  std::string reference;
  {
    std::lock_guard<std::mutex> lock(references_mu_);
    auto cached = references_.find(task_id);
    if (cached == references_.end()) {
      size_t total = 0;
      StatusOr<std::string> text = ReadTaskReference(task, total);
      if (!text.ok()) return {{"error", task_id + ": " + text.status().message()}};
      cached = references_.emplace(task_id, std::move(*text)).first;
    }
    reference = cached->second;
  }
  const bool compile_only = options_.bench.verify.compile_only;
  std::optional<verify::HelloReply> hello;
  if (!compile_only && !given_judge_) {
    judge();  // starts the service judge, whose first worker describes the device
    hello = service_judge_->Hello();
  }
  StatusOr<std::string> system =
      RenderSystemPrompt(loaded_->prompts, *protocol, hello, compile_only, options_.bench.verify.arch,
                         options_.bench.verify.op_policy);
  StatusOr<std::string> view = system.ok() ? RenderTaskView(task, View::kCode, reference) : system.status();
  StatusOr<std::string> user =
      view.ok() ? Render(loaded_->prompts.task,
                         {{"task_id", task.id}, {"task_view", *view}, {"tensors", RenderTensorTable(task)}},
                         "task.md")
                : view.status();
  if (!user.ok()) return {{"error", task_id + ": " + user.status().message()}};
  json tools = json::array();
  if (*protocol == dataset::Protocol::kTools)
    for (const common::ToolSpec& tool : SolutionTools()) tools.push_back(common::ToolSpecToJson(tool));
  return {{"task", task.id},
          {"protocol", protocol_name},
          {"messages",
           common::TrlMessagesToJson({common::Message::System(*system), common::Message::User(*user)}, {})},
          {"tools", std::move(tools)}};
}

json CompletionJudge::JudgeBatch(const json& request, const std::function<bool()>& gone) {
  const auto start = Clock::now();
  common::JsonFields in(request, "request");
  if (Status shape = in.CheckObject({"op", "batch"}); !shape.ok()) return {{"error", shape.message()}};
  if (!request.contains("batch") || !request["batch"].is_array())
    return {{"error", "request.batch: expected a list of {task, completion}"}};
  const json& batch = request["batch"];
  if (batch.size() > options_.max_batch)
    return {{"error", "request.batch: " + std::to_string(batch.size()) +
                          " completions, over the server's limit of " + std::to_string(options_.max_batch) +
                          " (kforge serve --max-batch); split the batch"}};
  if (std::optional<json> busy = Admit(in_flight_, batch.size(), options_.max_in_flight)) return *busy;
  struct Release {
    std::atomic<size_t>& count;
    size_t n;
    ~Release() { count -= n; }
  } release{in_flight_, batch.size()};

  std::vector<Item> items;
  items.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i)
    items.push_back(ReadItem(batch[i], i, loaded_->tasks, options_.max_completion_bytes));

  bool abandoned = false;
  const size_t started = JudgeItems(this->judge(), items, gone, options_.bench.verify.compile_only, start, abandoned);
  if (abandoned) abandoned_ += items.size() - started;
  else judged_ += items.size();
  if (abandoned)
    return {{"error", "the client left; the rest of the batch was not judged"},
            {"abandoned", items.size() - started},
            {"of", items.size()}};

  const double judge_ms = MillisSince(start);
  json results = json::array();
  for (Item& item : items)
    results.push_back(
        ItemResult(item, loaded_->prompts, options_.bench.verify.compile_only, options_.target_speedup));
  return {{"results", std::move(results)},
          {"timing", {{"judge_ms", judge_ms}, {"wall_ms", MillisSince(start)}}}};
}

}  // namespace kforge::generate
