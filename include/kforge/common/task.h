// Tasks: the `task.json` folders that say what a kernel must compute (docs/formats.md, kforge.task/1).
// Loading validates strictly, so a typo in a hand-written task is an error with file and JSON path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/dtype.h"
#include "kforge/common/names.h"
#include "kforge/common/status.h"

namespace kforge::common {

/// How an input is drawn: `x = (draw(dist) * scale + shift) * factor`.
struct InitSpec {
  enum class Dist { kRandn, kRand, kUniform, kRandint, kOnes, kZeros };
  /// A number drawn once per input draw from [low, high): KernelBench's `x * torch.rand(())`.
  struct Factor {
    double low = 0;
    double high = 1;
  };
  Dist dist = Dist::kRandn;
  double low = 0;   // uniform/randint only; randint's range is [low, high)
  double high = 1;  // uniform/randint only
  double scale = 1;
  double shift = 0;
  std::optional<Factor> factor;  // floating inputs only; absent: 1
};

/// "randn", "rand", ...
std::string_view InitDistName(InitSpec::Dist dist);

/// A structure an input keeps on every draw, over its last two dimensions (which are equal): what
/// KernelBench's `get_inputs` gives a problem about triangular or symmetric matrices
/// (`torch.tril(torch.rand(N, N))`, `(A + A.T) / 2`). A kernel may rely on it, as the problem says it may.
enum class Structure {
  kNone,
  kLower,      ///< zero above the diagonal (torch.tril)
  kUpper,      ///< zero below the diagonal (torch.triu)
  kSymmetric,  ///< equal to its transpose: (x + x^T) / 2 of the draw
};
inline constexpr NameTable<Structure, 4> kStructureNames = {{{Structure::kNone, ""},
                                                              {Structure::kLower, "lower"},
                                                              {Structure::kUpper, "upper"},
                                                              {Structure::kSymmetric, "symmetric"}}};
static_assert(kStructureNames.MatchesEnum());

/// One named tensor: an input, a parameter/buffer or an output.
struct TensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::string> shape;  // each entry an expression over the task's symbols ("4096", "N*2")
  /// As written, or when absent: randn for floating dtypes, randint [0, 2) for bool, randint [0, 10)
  /// for integers.
  InitSpec init;
  /// Inputs only: applied after every draw, whatever the draw's init (a measured domain's included).
  Structure structure = Structure::kNone;
};

/// Whether a variant's sizes are the task's own or were made up to probe generality.
enum class VariantKind {
  kDeclared,  ///< the task's own sizes (the base symbols, a hand-written variant): they decide the verdict
  kDerived,   ///< sizes the problem never asked for (the import's `small`): reported as a check only
};
inline constexpr NameTable<VariantKind, 2> kVariantKindNames = {
    {{VariantKind::kDeclared, "declared"}, {VariantKind::kDerived, "derived"}}};
static_assert(kVariantKindNames.MatchesEnum());

/// A named set of shape symbols. The "default" variant holds the task's base `symbols`; others
/// are the base symbols overridden by the variant's.
struct Variant {
  std::string name;
  std::map<std::string, int64_t> symbols;
  VariantKind kind = VariantKind::kDeclared;  ///< task.json's `kind`; "default" is always declared
};

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};

/// Default tolerance for outputs of `dtype`: 1e-2 for fp16/bf16, else 1e-4.
Tolerance DefaultTolerance(DType dtype);

/// One output of the float64 run: its relative L2 error and whether its float32 values are rounding
/// noise (the float64 ones are zero within atol and the float32 ones not close to them), so that it
/// has no scale and the judge checks it by elements alone.
struct OutputConditioning {
  std::optional<double> float64_rel_l2;  // none for a noise output
  bool noise = false;
};

/// A float64 eager run of the reference judged against the golden outputs, as the judge would judge
/// a perfectly accurate candidate (written by the exporter at import, docs/tasks.md "Conditioning").
struct Conditioning {
  /// Largest relative L2 error over the outputs held to the L2 bound (may be infinite); none when
  /// every floating output is zero within atol (judged by elements alone).
  std::optional<double> float64_rel_l2;
  int64_t float64_mismatches = 0;  // elements outside atol + rtol |golden|
  int64_t numel = 0;               // elements of the floating outputs
  double rel_l2_bound = 1e-3;      // max(10 rtol, 1e-3)
  bool ill_conditioned = false;    // float64_rel_l2 > rel_l2_bound: no kernel can be judged
  std::string variant = "default";  // the variant measured (the golden file's)
  /// Per output; empty in task.json written before outputs were measured one by one.
  std::map<std::string, OutputConditioning> outputs;
};

/// How an output of the reference changed between two independent input draws.
enum class OutputDependence {
  kVaries,    // it depends on the inputs
  kConstant,  // bit-identical for both draws, not all zero
  kZero,      // zero (exactly, or rounding noise) for both draws
};

/// "varies", "constant", "zero".
std::string_view OutputDependenceName(OutputDependence dependence);

/// What the import measured of the reference's behaviour (docs/tasks.md, "What the import measures").
struct Behaviour {
  std::string variant = "default";
  std::map<std::string, OutputDependence> outputs;
  int64_t rerun_mismatches = 0;   // elements out of tolerance between two runs on the same inputs
  bool degenerate = false;        // no output depends on the inputs: any no-op passes
  bool nondeterministic = false;  // the reference disagrees with itself: nothing can match it
};

/// An input distribution beyond the task's own inits, measured at import to keep the reference
/// finite and well-conditioned; the checks give it one trial of their own.
struct InputDomain {
  std::string name;
  std::map<std::string, InitSpec> inputs;  // input name -> init used instead of its own
};

/// Exporter outputs; paths are absolute (the task folder joined with the file's relative path).
struct Artifacts {
  /// variant name -> device ("cpu" or "cuda") -> .pt2 package.
  std::map<std::string, std::map<std::string, std::filesystem::path>> packages;
  std::optional<std::filesystem::path> params;  // safetensors holding every params entry
  struct Golden {
    uint64_t seed = 0;
    std::string variant = "default";
    std::filesystem::path file;  // safetensors: input.<name>, output.<name>
  };
  std::optional<Golden> golden;
};

/// Whether a task can judge a kernel, as its import measured: no kernel can be told apart from a
/// no-op (degenerate), or matched at all (nondeterministic, ill-conditioned). The first that applies.
enum class Judgeability { kJudgeable, kDegenerate, kNondeterministic, kIllConditioned };
inline constexpr NameTable<Judgeability, 4> kJudgeabilityNames = {{{Judgeability::kJudgeable, ""},
                                                                  {Judgeability::kDegenerate, "degenerate"},
                                                                  {Judgeability::kNondeterministic, "nondeterministic"},
                                                                  {Judgeability::kIllConditioned, "ill_conditioned"}}};
static_assert(kJudgeabilityNames.MatchesEnum());

struct Task {
  std::string id;  // "kernelbench/level1/19_ReLU"
  std::filesystem::path dir;
  std::filesystem::path json_path;
  std::optional<int> level;
  std::vector<std::string> tags;
  std::string description;
  std::string spec;
  std::string license;  // the reference program's licence, an SPDX id ("MIT"); empty when task.json has none
  std::filesystem::path reference;  // absolute; the file exists
  std::map<std::string, int64_t> symbols;
  std::map<std::string, double> constants;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> params;
  std::vector<TensorSpec> outputs;
  std::vector<Variant> variants;  // "default" first, always present
  Tolerance tolerance;            // as written, else the loosest default over the outputs' dtypes
  bool tolerance_explicit = false;
  std::optional<Conditioning> conditioning;  // absent without a golden file or floating outputs
  std::optional<Behaviour> behaviour;        // absent when the import did not measure it
  std::vector<InputDomain> domains;
  std::string cost_flops;  // expressions over symbols and tensor shapes; empty when not given
  std::string cost_bytes;
  std::string cost_derived;  // the counter that derived the cost at import ("torch-flop-counter/1"); empty when hand-written
  Artifacts artifacts;

  /// The variant called `name`, or nullptr.
  const Variant* FindVariant(std::string_view name) const;
  /// The spec of an input, param or output called `name`, or nullptr.
  const TensorSpec* FindTensor(std::string_view name) const;
  /// True when the import measured output `name` to be rounding noise (no scale of its own).
  bool NoiseOutput(std::string_view name) const;
  /// True when the import found that no kernel can be told apart from a no-op (degenerate) or
  /// matched at all (nondeterministic, ill-conditioned): such a task judges nothing.
  bool Unjudgeable() const;
  Judgeability WhyUnjudgeable() const;
  /// The name of WhyUnjudgeable(): "degenerate", "nondeterministic", "ill_conditioned", or "".
  std::string_view UnjudgeableReason() const { return kJudgeabilityNames.Name(WhyUnjudgeable()); }
};

/// OK when `id` is a task id: 2 to 8 segments joined by '/', each 1 to 128 letters, digits, '_',
/// '.' and '-' and not starting with '.' or '-' (so no "..", no empty segment, no absolute path).
/// scripts/kforge_tasks/schema.py checks the same grammar. Otherwise InvalidArgument, one line.
Status CheckTaskId(std::string_view id);

/// OK when `license` is an SPDX licence id or expression ("MIT", "Apache-2.0", "MIT OR Apache-2.0"):
/// 1 to 64 letters, digits, spaces and ".+-()". scripts/kforge_tasks/schema.py checks the same.
/// Otherwise InvalidArgument, one line.
Status CheckLicense(std::string_view license);

/// Loads and validates `task_dir/task.json`. The id's last components must equal the folder's.
StatusOr<Task> LoadTask(const std::filesystem::path& task_dir);

/// Loads every folder under `root` holding a task.json (sorted by id); the id must equal the
/// folder's path below root. Fails on the first invalid task.
StatusOr<std::vector<Task>> LoadTaskTree(const std::filesystem::path& root);

/// Loads the task `id` from `root/<id>/`.
StatusOr<Task> FindTask(const std::filesystem::path& root, std::string_view id);

/// Evaluates a spec's shape under `symbols`. Every dimension must be >= 0.
StatusOr<std::vector<int64_t>> ResolveShape(const TensorSpec& spec,
                                            const std::map<std::string, int64_t>& symbols);

/// Shapes of every input, param and output of `variant`, by name.
StatusOr<std::map<std::string, std::vector<int64_t>>> ResolveShapes(const Task& task,
                                                                    std::string_view variant);

/// Evaluates a cost expression (`task.cost_flops`) for `variant`; numel()/size() see every tensor.
StatusOr<int64_t> EvalCost(const Task& task, std::string_view expr, std::string_view variant);

}  // namespace kforge::common
