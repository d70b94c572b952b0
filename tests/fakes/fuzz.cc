#include "fakes/fuzz.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace kforge::fakes {
namespace {

// The input being checked and its target, for the signal handler.
const std::string* g_input = nullptr;
const char* g_target = "";
uint64_t g_executions = 0;
timespec g_start{};

void WriteRaw(const char* text, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(2, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}

// Async-signal-safe: formats the input with write() only, then dies of the same signal.
void OnFatalSignal(int sig) {
  static char buffer[4096];
  size_t n = 0;
  auto put = [&](const char* s) {
    while (*s && n < sizeof buffer - 8) buffer[n++] = *s++;
  };
  put("\nfuzz ");
  put(g_target);
  put(": fatal signal ");
  char num[4] = {static_cast<char>('0' + sig / 10 % 10), static_cast<char>('0' + sig % 10), 0, 0};
  put(num);
  // Executions and milliseconds so far, formatted without stdio.
  auto put_number = [&](uint64_t v) {
    char digits[24];
    int k = 0;
    do digits[k++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) != 0 && k < 24);
    while (k > 0 && n < sizeof buffer - 8) buffer[n++] = digits[--k];
  };
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  put(" after ");
  put_number(g_executions);
  put(" executions, ");
  put_number(static_cast<uint64_t>((now.tv_sec - g_start.tv_sec) * 1000 +
                                   (now.tv_nsec - g_start.tv_nsec) / 1000000));
  put(" ms, on input \"");
  if (g_input != nullptr) {
    static const char kHex[] = "0123456789abcdef";
    for (size_t i = 0; i < g_input->size() && i < 1000 && n < sizeof buffer - 16; ++i) {
      unsigned char c = static_cast<unsigned char>((*g_input)[i]);
      if (c == '"' || c == '\\') {
        buffer[n++] = '\\';
        buffer[n++] = static_cast<char>(c);
      } else if (c >= 0x20 && c < 0x7f) {
        buffer[n++] = static_cast<char>(c);
      } else {
        buffer[n++] = '\\';
        buffer[n++] = 'x';
        buffer[n++] = kHex[c >> 4];
        buffer[n++] = kHex[c & 15];
        buffer[n++] = '"';  // end the literal so that a following hex digit is not absorbed
        buffer[n++] = '"';
      }
    }
  }
  put("\"\n");
  WriteRaw(buffer, n);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

class SignalGuard {
 public:
  SignalGuard() {
    static char stack[1 << 16];
    stack_t ss{};
    ss.ss_sp = stack;
    ss.ss_size = sizeof stack;
    ::sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_handler = OnFatalSignal;
    sa.sa_flags = SA_ONSTACK;
    for (int i = 0; i < 5; ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~SignalGuard() {
    for (int i = 0; i < 5; ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
    g_input = nullptr;
  }

 private:
  static constexpr int kSignals[5] = {SIGFPE, SIGSEGV, SIGBUS, SIGILL, SIGABRT};
  struct sigaction old_[5]{};
};

class Mutator {
 public:
  Mutator(uint64_t seed, const std::vector<std::string>& dictionary) : rng_(seed), dictionary_(dictionary) {}

  std::string Mutate(std::string s, const std::vector<std::string>& corpus, size_t max_bytes) {
    int ops = 1 + static_cast<int>(Below(4));
    for (int i = 0; i < ops; ++i) Apply(s, corpus);
    if (s.size() > max_bytes) s.resize(max_bytes);
    return s;
  }

  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }
  std::mt19937_64& rng() { return rng_; }

 private:
  static constexpr unsigned char kBytes[] = {0,    0xff, '"', '{', '}', '[', ']',  '(',  ')',  ',', '-',
                                             '\\', '\n', ':', '0', '9', 'e', 0xc3, 0x80, 0xef, '`', '#'};

  const std::string& Token() { return dictionary_[Below(dictionary_.size())]; }

  void Apply(std::string& s, const std::vector<std::string>& corpus) {
    size_t pos = Below(s.size() + 1);
    switch (Below(dictionary_.empty() ? 5 : 8)) {
      case 0:  // flip one bit
        if (!s.empty()) s[Below(s.size())] ^= static_cast<char>(1u << Below(8));
        break;
      case 1:  // set or insert an interesting byte
        if (!s.empty() && Below(2) == 0)
          s[Below(s.size())] = static_cast<char>(kBytes[Below(sizeof kBytes)]);
        else
          s.insert(pos, 1, static_cast<char>(Below(4) == 0 ? Below(256) : kBytes[Below(sizeof kBytes)]));
        break;
      case 2:  // delete a range
        if (!s.empty()) s.erase(Below(s.size()), 1 + Below(std::min<size_t>(s.size(), 32)));
        break;
      case 3: {  // repeat a range, sometimes many times (nesting, long runs)
        if (s.empty()) break;
        size_t from = Below(s.size());
        std::string chunk = s.substr(from, 1 + Below(std::min<size_t>(s.size() - from, 32)));
        size_t times = Below(8) == 0 ? 1 + Below(512) : 1 + Below(4);
        std::string repeated;
        for (size_t t = 0; t < times; ++t) repeated += chunk;
        s.insert(from, repeated);
        break;
      }
      case 4: {  // splice in a range of another corpus entry
        const std::string& other = corpus[Below(corpus.size())];
        if (other.empty()) break;
        size_t from = Below(other.size());
        std::string piece = other.substr(from, 1 + Below(std::min<size_t>(other.size() - from, 256)));
        if (!s.empty() && Below(2) == 0) s.erase(pos, Below(std::min<size_t>(s.size() - pos, 64) + 1));
        s.insert(std::min(pos, s.size()), piece);
        break;
      }
      case 5:  // insert a dictionary token
        s.insert(pos, Token());
        break;
      default: {  // replace a word or number with a dictionary token
        auto word = [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
        };
        if (s.empty()) {
          s = Token();
          break;
        }
        size_t at = Below(s.size());
        size_t begin = at, end = at;
        while (begin > 0 && word(s[begin - 1])) --begin;
        while (end < s.size() && word(s[end])) ++end;
        if (begin == end) end = begin + 1;
        s.replace(begin, end - begin, Token());
        break;
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<std::string>& dictionary_;
};

}  // namespace

std::string FuzzReport::Summary() const {
  char text[256];
  std::snprintf(text, sizeof text, "%zu seeds, corpus %zu, %llu executions in %.1f s", seeds, corpus,
                static_cast<unsigned long long>(executions), seconds);
  std::string out = text;
  for (const FuzzFailure& f : failures) {
    std::snprintf(text, sizeof text, "\n  FAILED (%llu inputs, first after %llu executions, %.2f s): ",
                  static_cast<unsigned long long>(f.count), static_cast<unsigned long long>(f.first_at),
                  f.first_seconds);
    out += std::string(text) + f.what.substr(0, 300) + "\n    first input: " + Escape(f.input);
  }
  return out;
}

double FuzzSeconds(double fallback) {
  const char* env = std::getenv("KFORGE_FUZZ_SECONDS");
  if (env == nullptr || *env == '\0') return fallback;
  double value = std::atof(env);
  return value > 0 ? value : fallback;
}

uint64_t FuzzSeed() {
  const char* env = std::getenv("KFORGE_FUZZ_SEED");
  return env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10) : 1;
}

FuzzReport RunFuzz(const FuzzTarget& target, double seconds, uint64_t seed) {
  using Clock = std::chrono::steady_clock;
  constexpr size_t kMaxCorpus = 4096;
  SignalGuard guard;
  g_target = target.name.c_str();
  FuzzReport report;
  report.seeds = target.seeds.size();
  std::vector<std::string> corpus = target.seeds;
  if (corpus.empty()) corpus.push_back("");
  std::set<std::string> labels;
  Mutator mutator(seed, target.dictionary);
  auto start = Clock::now();
  ::clock_gettime(CLOCK_MONOTONIC, &g_start);
  g_executions = 0;
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));

  // Checks one input; a mutant whose outcome is new joins the corpus.
  auto check = [&](const std::string& input, bool mutant) -> bool {
    g_input = &input;
    g_executions = ++report.executions;
    FuzzOutcome outcome;
    try {
      outcome = target.property(input);
    } catch (const std::exception& e) {
      outcome.failure = std::string("exception: ") + e.what();
    } catch (...) {
      outcome.failure = "exception of unknown type";
    }
    g_input = nullptr;
    if (!outcome.failure.empty()) {
      std::string kind = MessageLabel(outcome.failure);
      auto same = std::find_if(report.failures.begin(), report.failures.end(),
                               [&](const FuzzFailure& f) { return MessageLabel(f.what) == kind; });
      if (same == report.failures.end()) {
        double t = std::chrono::duration<double>(Clock::now() - start).count();
        report.failures.push_back({outcome.failure, input, 1, report.executions, t});
        // Printed now: a later fatal signal must not lose it.
        std::printf("fuzz %s: failure after %llu executions, %.2f s: %s\n  on input %s\n",
                    target.name.c_str(), static_cast<unsigned long long>(report.executions), t,
                    outcome.failure.substr(0, 300).c_str(), Escape(input).c_str());
        std::fflush(stdout);
      } else {
        ++same->count;
      }
      return report.failures.size() < 16;
    }
    if (labels.insert(outcome.label).second && mutant) {
      // A full corpus makes room by replacing a mutant kept earlier; seeds stay.
      if (corpus.size() < kMaxCorpus)
        corpus.push_back(input);
      else
        corpus[target.seeds.size() + mutator.Below(corpus.size() - target.seeds.size())] = input;
    }
    return true;
  };

  bool going = true;
  for (size_t i = 0; going && i < target.seeds.size(); ++i) going = check(target.seeds[i], false);
  while (going) {
    if ((report.executions & 63) == 0 && Clock::now() >= deadline) break;
    const std::string& parent = corpus[mutator.Below(corpus.size())];
    std::string mutant = target.mutate && mutator.Below(4) == 0
                             ? target.mutate(parent, mutator.rng())
                             : mutator.Mutate(parent, corpus, target.max_bytes);
    going = check(mutant, true);
  }
  report.corpus = corpus.size();
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

std::string RandomExpression(std::mt19937_64& rng, const std::vector<std::string>& symbols,
                             const std::vector<std::string>& tensors, int depth) {
  auto below = [&rng](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  static const char* kLiterals[] = {"0",
                                    "1",
                                    "2",
                                    "7",
                                    "256",
                                    "-1",
                                    "2147483648",
                                    "4294967296",
                                    "9223372036854775807",
                                    "(-9223372036854775807-1)"};
  if (depth <= 0 || below(10) < 3) {
    switch (below(4)) {
      case 0:
        if (!symbols.empty()) return symbols[below(symbols.size())];
        [[fallthrough]];
      case 1:
        if (!tensors.empty())
          return below(2) == 0 ? "numel(" + tensors[below(tensors.size())] + ")"
                               : "size(" + tensors[below(tensors.size())] + ", " +
                                     std::to_string(int(below(7)) - 3) + ")";
        [[fallthrough]];
      default:
        return kLiterals[below(sizeof kLiterals / sizeof *kLiterals)];
    }
  }
  std::string a = RandomExpression(rng, symbols, tensors, depth - 1);
  switch (below(4)) {
    case 0:
      return "-" + a;
    case 1: {
      static const char* kOps[] = {" + ", " - ", " * ", " / ", " % "};
      return "(" + a + kOps[below(5)] + RandomExpression(rng, symbols, tensors, depth - 1) + ")";
    }
    default: {
      static const char* kFns[] = {"cdiv(", "min(", "max("};
      return kFns[below(3)] + a + ", " + RandomExpression(rng, symbols, tensors, depth - 1) + ")";
    }
  }
}

std::string Escape(const std::string& input, size_t max) {
  std::string out = "\"";
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < input.size() && i < max; ++i) {
    unsigned char c = static_cast<unsigned char>(input[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      out += "\"\"";
    }
  }
  out += "\"";
  if (input.size() > max) out += " (" + std::to_string(input.size()) + " bytes in all)";
  return out;
}

std::vector<std::string> ReadFilesUnder(const std::string& dir, const std::string& suffix) {
  namespace fs = std::filesystem;
  std::vector<fs::path> paths;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file() && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      paths.push_back(it->path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> contents;
  for (const fs::path& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    contents.push_back(buffer.str());
  }
  return contents;
}

std::string MessageLabel(const std::string& message) {
  std::string label;
  for (char c : message) {
    if (label.size() >= 60 || c == '"') break;
    if (!std::isdigit(static_cast<unsigned char>(c))) label += c;
  }
  return label;
}

}  // namespace kforge::fakes
