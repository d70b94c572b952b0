// Seeded mutational fuzzing inside GoogleTest: a corpus of seed inputs is mutated (bytes, ranges,
// dictionary tokens, splices) for a fixed time, and every mutant is checked against a property.
// Mutants whose outcome is new to the run join the corpus, so the search follows the parser's
// behaviours rather than only the seeds. A signal (SIGFPE, SIGSEGV, ...) prints the input that
// raised it before the process dies; an exception or a broken property is recorded with its input
// (the first input of each kind of failure) and the run goes on.
//
// Budget: KFORGE_FUZZ_SECONDS per target (default 2), seed KFORGE_FUZZ_SEED (default 1).
// scripts/fuzz.sh runs the targets for longer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kforge::fakes {

/// What one execution found: `failure` empty when the property held, and an outcome label
/// (e.g. the error message with digits dropped) that tells behaviours apart.
struct FuzzOutcome {
  std::string failure;
  std::string label;
};

struct FuzzTarget {
  std::string name;
  std::vector<std::string> seeds;
  /// Tokens the mutator inserts or substitutes: operators, extreme numbers, keywords, bad bytes.
  std::vector<std::string> dictionary;
  /// Mutants are cut to this many bytes.
  size_t max_bytes = 4096;
  /// Checks one input.
  std::function<FuzzOutcome(const std::string& input)> property;
  /// Optional structure-aware mutation, used for one mutant in four: a new input from a parent.
  std::function<std::string(const std::string& parent, std::mt19937_64& rng)> mutate;
};

struct FuzzFailure {
  std::string what;          ///< What broke (the property's text, or the exception).
  std::string input;         ///< The first input that broke it this way.
  uint64_t count = 0;        ///< Inputs that broke it this way.
  uint64_t first_at = 0;     ///< Executions until the first of them.
  double first_seconds = 0;  ///< Seconds until the first of them.
};

struct FuzzReport {
  size_t seeds = 0;         ///< Seed inputs.
  size_t corpus = 0;        ///< Seeds plus mutants kept for a new outcome, at the end.
  uint64_t executions = 0;  ///< Inputs checked.
  double seconds = 0;
  std::vector<FuzzFailure> failures;  ///< One per kind of failure (digits dropped), in order found.
  /// "N seeds, corpus C, E executions in S s", then one line per kind of failure.
  std::string Summary() const;
};

/// Seconds per target: $KFORGE_FUZZ_SECONDS, else `fallback`.
double FuzzSeconds(double fallback = 2.0);
/// $KFORGE_FUZZ_SEED, else 1.
uint64_t FuzzSeed();

/// Runs `target` for `seconds` (every seed at least once), or until 16 kinds of failure are found.
FuzzReport RunFuzz(const FuzzTarget& target, double seconds, uint64_t seed);

/// A random shape expression (docs/formats.md grammar) over `symbols` and `tensors`, with extreme
/// literals (INT64_MIN and MAX, 2^31, 2^32, -1, 0) among the leaves, nested at most `depth` deep.
std::string RandomExpression(std::mt19937_64& rng, const std::vector<std::string>& symbols,
                             const std::vector<std::string>& tensors, int depth = 4);

/// The input as a C string literal (escapes, cut to `max` bytes), for reproducing a failure.
std::string Escape(const std::string& input, size_t max = 400);

/// Contents of every regular file under `dir` (recursively) whose name ends in `suffix`, sorted by path.
std::vector<std::string> ReadFilesUnder(const std::string& dir, const std::string& suffix);

/// "digits dropped, cut to 60 characters": an outcome label from an error message.
std::string MessageLabel(const std::string& message);

}  // namespace kforge::fakes
