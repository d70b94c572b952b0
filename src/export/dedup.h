// Duplicate detection over program text: an exact key of a solution (its normalised source and its
// plan) and MinHash signatures whose agreement estimates the Jaccard similarity of two programs'
// 5-token shingles. Used to deduplicate solutions and to find references close to a held-out one.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::exporter {

/// How comments are written in the text being tokenised.
enum class CommentStyle {
  kC,       ///< `//` to the end of the line and `/* ... */` (CUDA C++)
  kPython,  ///< `#` to the end of the line; triple-quoted strings are one token (references)
};

/// Tokens of program text: identifiers and numbers, string and character literals (whole), and
/// single punctuation characters. Whitespace and comments are dropped. Views into `text`.
std::vector<std::string_view> Tokenize(std::string_view text, CommentStyle style);

/// The source with comments removed and whitespace collapsed: its tokens joined by one space, so
/// `a+b` and `a + b // sum` normalise alike.
std::string NormalizeSource(std::string_view source);

/// 64-bit FNV-1a; stable across builds and platforms.
uint64_t Hash64(std::string_view data);

/// Exact-duplicate key of a kforge.solution/1 object: the normalised source with the launches,
/// scratch and options. Two solutions with equal keys run the same code the same way.
uint64_t SolutionKey(const nlohmann::json& solution);

inline constexpr int kMinHashSize = 64;   ///< permutations
inline constexpr int kShingleTokens = 5;  ///< tokens per shingle

using MinHash = std::array<uint32_t, kMinHashSize>;

/// MinHash of the set of `kShingleTokens`-token shingles (one shingle of all tokens when there are
/// fewer).
MinHash MinHashOf(const std::vector<std::string_view>& tokens);

/// Estimated Jaccard similarity: the fraction of equal positions.
double Similarity(const MinHash& a, const MinHash& b);

/// A MinHash kept in 64 bytes: the low byte of each position (b-bit minwise hashing, b = 8).
using CompactMinHash = std::array<uint8_t, kMinHashSize>;
CompactMinHash Compact(const MinHash& full);

/// Jaccard estimate of two compact signatures, corrected for chance agreement of bytes:
/// (equal / 64 - 1/256) / (1 - 1/256), clamped to [0, 1].
double Similarity(const CompactMinHash& a, const CompactMinHash& b);

}  // namespace kforge::exporter
