#include "export/kernelbench.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "export/host_code.h"
#include "fakes/command.h"

namespace kforge::exporter {
namespace {

namespace fs = std::filesystem;

common::TensorSpec Spec(const std::string& name, std::vector<std::string> shape,
                        common::DType dtype = common::DType::kFloat32) {
  common::TensorSpec spec;
  spec.name = name;
  spec.shape = std::move(shape);
  spec.dtype = dtype;
  return spec;
}

/// Row sums in two kernels: per-block partial sums into scratch, then a templated kernel in a
/// namespace adds them up; out0 is zeroed by a memset first.
common::Task RowSumTask() {
  common::Task task;
  task.id = "kernelbench/level1/47_Sum_reduction_over_a_dimension";
  task.level = 1;
  task.symbols = {{"M", 64}, {"N", 4096}, {"K", 3}};
  task.inputs = {Spec("x", {"M", "N"})};
  task.outputs = {Spec("out0", {"M", "1"})};
  return task;
}

constexpr const char* kTwoKernels = R"cu(#include <cuda_fp16.h>
// partial sums: one block per 256 columns of a row
extern "C" __global__ void partial(const float* x, float* tmp, long long n, int blocks) {
  __shared__ float s[256];
  int row = blockIdx.y, col = blockIdx.x * 256 + threadIdx.x;
  s[threadIdx.x] = col < n ? x[row * n + col] : 0.f;
  __syncthreads();
  for (int k = 128; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) tmp[row * blocks + blockIdx.x] = s[0];
}
namespace ops {
template <typename T>
__global__ void finish(const T* tmp, T* out, int blocks, float scale) {
  T acc = 0;
  for (int b = 0; b < blocks; ++b) acc += tmp[blockIdx.x * blocks + b];
  out[blockIdx.x] += acc * scale;
}
}  // namespace ops
)cu";

common::Solution TwoKernelSolution() {
  nlohmann::json j = {
      {"task", "kernelbench/level1/47_Sum_reduction_over_a_dimension"},
      {"source", kTwoKernels},
      {"scratch", {{{"name", "tmp"}, {"dtype", "float32"}, {"shape", {"M", "cdiv(N, 256)"}}}}},
      {"options", {"--use_fast_math", "-default-device"}},
      {"launches", nlohmann::json::parse(R"J([
        {"memset": "out0", "value": 0},
        {"kernel": "partial", "grid": ["cdiv(size(x, -1), 256)", "M"], "block": [256],
         "args": ["x", "tmp", "i64:N", "i32:cdiv(N, 256)"]},
        {"kernel": "ops::finish<float>", "grid": ["M"], "block": [1], "shared_bytes": "0",
         "args": ["tmp", "out0", "i32:cdiv(N, 256)", "f32:1.0"]}
      ])J")}};
  StatusOr<common::Solution> solution = common::SolutionFromJson(j, "test");
  EXPECT_TRUE(solution.ok()) << solution.status().message();
  return *solution;
}

void ExpectHas(const std::string& text, const std::string& piece) {
  EXPECT_NE(text.find(piece), std::string::npos) << "missing: " << piece;
}

TEST(KernelBenchTest, ProblemsAndFileNamesFollowKernelBench) {
  std::optional<KernelBenchProblem> p = KernelBenchProblemOf("kernelbench/level2/5_Conv_Add");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->level, 2);
  EXPECT_EQ(p->number, 5);
  EXPECT_EQ(p->name, "5_Conv_Add");
  EXPECT_EQ(KernelBenchFileName(*p, 3), "level_2_problem_5_sample_3_kernel.py");
  EXPECT_FALSE(KernelBenchProblemOf("core/softmax"));
  EXPECT_FALSE(KernelBenchProblemOf("kernelbench/level1/ReLU"));
}

TEST(KernelBenchTest, ExpressionsBecomeCpp) {
  std::vector<std::string> symbols = {"N", "M"};
  std::vector<std::pair<std::string, std::string>> vars = {{"x", "t_x"}, {"conv.weight", "t_conv_weight"}};
  struct Case {
    const char* expr;
    const char* cpp;
  };
  const Case cases[] = {
      {"N", "sym_N"},
      {"cdiv(numel(x), 256)", "kf_cdiv(kf_numel(t_x), int64_t(256))"},
      {"size(conv.weight, -1) * (M + 1)", "kf_size(t_conv_weight, -int64_t(1)) * (sym_M + int64_t(1))"},
      {"min(N,max(M, 4)) % 3", "kf_min(sym_N, kf_max(sym_M, int64_t(4))) % int64_t(3)"},
  };
  for (const Case& c : cases) {
    StatusOr<std::string> cpp = internal::TranslateExpr(c.expr, symbols, vars);
    ASSERT_TRUE(cpp.ok()) << c.expr << ": " << cpp.status().message();
    EXPECT_EQ(*cpp, c.cpp) << c.expr;
  }
  EXPECT_FALSE(internal::TranslateExpr("Q + 1", symbols, vars).ok()) << "unknown symbol";
  EXPECT_FALSE(internal::TranslateExpr("numel(y)", symbols, vars).ok()) << "unknown tensor";
  EXPECT_FALSE(internal::TranslateExpr("sqrt(N)", symbols, vars).ok()) << "unknown function";
  EXPECT_EQ(internal::FileScopeNamespaces("namespace a { namespace b {} } namespace c::d { } namespace { }"),
            (std::vector<std::string>{"a", "c::d"}));
}

TEST(KernelBenchTest, RendersScratchMemsetAndTwoKernels) {
  StatusOr<std::string> py =
      RenderModelNew(TwoKernelSolution(), RowSumTask(), "ignored: no params", "label line");
  ASSERT_TRUE(py.ok()) << py.status().message();
  const std::string& text = *py;
  ExpectHas(text, "# label line\n");
  ExpectHas(text, "from torch.utils.cpp_extension import load_inline");
  ExpectHas(text, "class ModelNew(nn.Module):");
  ExpectHas(text, "def __init__(self, *init_inputs):");
  ExpectHas(text, "functions=[\"forward\"]");
  ExpectHas(text, "extra_cuda_cflags=[\"--use_fast_math\"]");  // -default-device is NVRTC's only
  EXPECT_EQ(text.find("ignored: no params"), std::string::npos) << "no params: the reference is not included";
  // Symbols from the input's shape, checked dimensions.
  ExpectHas(text, "const int64_t sym_M = t_x.size(0);");
  ExpectHas(text, "const int64_t sym_N = t_x.size(1);");
  ExpectHas(text, "const int64_t sym_K = 3;  // no input shows it: the task's default");
  EXPECT_EQ(text.find("TORCH_CHECK(t_x.size("), std::string::npos) << "x's dimensions define M and N";
  // Output and scratch.
  ExpectHas(text,
            "torch::Tensor t_out0 = torch::empty(std::vector<int64_t>{sym_M, int64_t(1)}, "
            "options.dtype(torch::kFloat32));");
  ExpectHas(text,
            "torch::Tensor t_tmp = torch::empty(std::vector<int64_t>{sym_M, kf_cdiv(sym_N, int64_t(256))}");
  // The plan, in order.
  size_t memset = text.find("cudaMemsetAsync(t_out0.data_ptr(), 0, t_out0.nbytes(), stream)");
  size_t first = text.find("kforge_kernel(1)"), second = text.find("kforge_kernel(2)");
  ASSERT_NE(memset, std::string::npos);
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(memset, first);
  EXPECT_LT(first, second);
  ExpectHas(text, "kf_dim(kf_cdiv(kf_size(t_x, -int64_t(1)), int64_t(256)), \\\"launches[1].grid[0]\\\")");
  ExpectHas(text, "int64_t a2 = static_cast<int64_t>(sym_N);");
  ExpectHas(text, "int32_t a3 = static_cast<int32_t>(kf_cdiv(sym_N, int64_t(256)));");
  ExpectHas(text, "float a3 = 0x1p+0f;");
  ExpectHas(text, "void* args[] = {&a0, &a1, &a2, &a3};");
  ExpectHas(text, "cudaLaunchKernel(kernel, grid, block, args, shared, stream)");
  ExpectHas(text, "return {t_out0};");
  // The kernel table after the solution's source, which is kept as it is (quotes escaped).
  ExpectHas(text, "extern \\\"C\\\" __global__ void partial(");
  ExpectHas(text, "using namespace ops;");
  ExpectHas(text, "case 1: return reinterpret_cast<const void*>(&partial);");
  ExpectHas(text, "case 2: return reinterpret_cast<const void*>(&ops::finish<float>);");
}

TEST(KernelBenchTest, ATaskWithParamsDerivesFromTheReferenceModel) {
  common::Task task;
  task.id = "kernelbench/level2/1_Linear_ReLU";
  task.symbols = {{"B", 8}, {"IN", 16}, {"OUT", 4}};
  task.inputs = {Spec("x", {"B", "IN"})};
  task.params = {Spec("fc.weight", {"OUT", "IN"}), Spec("fc.bias", {"OUT"})};
  task.outputs = {Spec("out0", {"B", "OUT"})};
  nlohmann::json j = {{"source",
                       "extern \"C\" __global__ void k(const float* x, const float* w, const float* b, "
                       "float* y, int n) {}"},
                      {"launches",
                       {{{"kernel", "k"},
                         {"grid", {"B"}},
                         {"block", {"OUT"}},
                         {"args", {"x", "fc.weight", "fc.bias", "out0", "i32:IN"}}}}}};
  common::Solution solution = *common::SolutionFromJson(j, "test");
  std::string reference =
      "import torch\nimport torch.nn as nn\nB = 8\nIN = 16\nOUT = 4\n\n\nclass Model(nn.Module):\n"
      "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(IN, OUT)\n\n"
      "    def forward(self, x):\n        return torch.relu(self.fc(x))\n\n\n"
      "def get_inputs():\n    return [torch.randn(B, IN)]\n\n\ndef get_init_inputs():\n    return []\n";
  StatusOr<std::string> py = RenderModelNew(solution, task, reference, "label");
  ASSERT_TRUE(py.ok()) << py.status().message();
  ExpectHas(*py, reference);
  ExpectHas(*py, "class ModelNew(Model):");
  ExpectHas(*py, "PARAMS = [\"fc.weight\", \"fc.bias\"]");
  ExpectHas(*py, "PARAM_DTYPES = [torch.float32, torch.float32]");
  ExpectHas(*py, "INPUT_DTYPES = [torch.float32]");
  ExpectHas(*py, "const torch::Tensor& t_fc_weight = tensors[1];");
  ExpectHas(*py, "const torch::Tensor& t_fc_bias = tensors[2];");
  ExpectHas(*py, "const int64_t sym_OUT = t_fc_weight.size(0);");
  ExpectHas(*py, "TORCH_CHECK(t_fc_weight.size(1) == sym_IN, ");
  ExpectHas(*py, "TORCH_CHECK(t_fc_bias.size(0) == sym_OUT, ");
}

TEST(KernelBenchTest, PlansThatCannotBeHostCodeAreRefused) {
  common::Solution solution = TwoKernelSolution();
  solution.launches[1].kernel = "_Z7partialPKfPfxi";
  StatusOr<std::string> py = RenderModelNew(solution, RowSumTask(), "", "");
  ASSERT_FALSE(py.ok());
  EXPECT_NE(py.status().message().find("launches[1].kernel: a mangled symbol"), std::string::npos);
  solution = TwoKernelSolution();
  solution.launches[0].memset_value = 1.0;  // 0x3f800000: not one repeated byte
  EXPECT_FALSE(RenderModelNew(solution, RowSumTask(), "", "").ok());
  // A plan that names an unknown tensor is refused as InvalidArgument (the record is left out, not the
  // export).
  solution = TwoKernelSolution();
  solution.launches[1].args[0] = common::LaunchArg{common::LaunchArg::Kind::kItem, "nowhere", 0};
  py = RenderModelNew(solution, RowSumTask(), "", "");
  ASSERT_FALSE(py.ok());
  EXPECT_EQ(py.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(py.status().message().find("launches[1].args[0]: unknown tensor \"nowhere\""), std::string::npos);
}

/// A plan v2 solution with every step kind: a fill, a view with a dtype, an allowlisted op with
/// attributes, an aten:: op, a kernel with an item: argument, a copy.
common::Solution EveryStepKindSolution() {
  nlohmann::json j = {
      {"schema", "kforge.solution/2"},
      {"source", "extern \"C\" __global__ void scale(const float* x, float* y, long long n, float s) {}\n"},
      {"scratch", {{{"name", "acc"}, {"dtype", "float32"}, {"shape", {"M", "1"}}}}},
      {"launches", nlohmann::json::parse(R"J([
        {"fill": "out0", "value": "-inf"},
        {"view": "x_bits", "of": "x", "offset": "N", "shape": ["M - 1", "N"], "dtype": "int32"},
        {"op": "sum", "args": ["x"], "out": "acc", "attrs": {"dim": [1], "keepdim": true}},
        {"op": "aten::clamp_min", "args": ["acc"], "out": "acc", "attrs": {"min": 0.5}},
        {"kernel": "scale", "grid": ["cdiv(numel(x), 256)"], "block": [256],
         "args": ["x", "out0", "i64:numel(x)", "item:acc[M - 1]"]},
        {"op": "copy", "args": ["acc"], "out": "out0"}
      ])J")}};
  StatusOr<common::Solution> solution = common::SolutionFromJson(j, "test");
  EXPECT_TRUE(solution.ok()) << solution.status().message();
  return *solution;
}

TEST(KernelBenchTest, RendersEveryPlanV2StepKind) {
  StatusOr<internal::HostCode> host = internal::RenderHostCode(EveryStepKindSolution(), RowSumTask());
  ASSERT_TRUE(host.ok()) << host.status().message();
  const std::string* py = &host->cpp;
  ExpectHas(*py, "t_out0.fill_(-std::numeric_limits<double>::infinity());");
  ExpectHas(*py,
            "torch::Tensor t_x_bits = kf_view(t_x, sym_N, std::vector<int64_t>{sym_M - int64_t(1), sym_N}, "
            "torch::kInt32, ");
  ExpectHas(*py, "attrs.ints[\"dim\"] = {1};");
  ExpectHas(*py, "attrs.bools[\"keepdim\"] = true;");
  ExpectHas(*py, "KfRunOp(\"sum\", {t_x}, attrs, t_acc);");
  ExpectHas(*py, "attrs.numbers[\"min\"] = 0x1p-1;");
  ExpectHas(*py, "KfRunOp(\"aten::clamp_min\", {t_acc}, attrs, t_acc);");
  ExpectHas(*py, "uint64_t a3 = kf_item(t_acc, sym_M - int64_t(1), stream, ");
  ExpectHas(*py, "KfRunOp(\"copy\", {t_acc}, attrs, t_out0);");
  ExpectHas(*py, "inline at::Tensor KfAtenOp(");  // the worker's op code, copied in
  // Only the kernel step has a kernel address; a plan without ops does not carry the op code.
  ExpectHas(host->cuda_suffix, "case 4: return reinterpret_cast<const void*>(&scale);");
  EXPECT_EQ(host->cuda_suffix.find("case 0:"), std::string::npos);
  StatusOr<internal::HostCode> plain = internal::RenderHostCode(TwoKernelSolution(), RowSumTask());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->cpp.find("KfRunOp"), std::string::npos);
  EXPECT_TRUE(RenderModelNew(EveryStepKindSolution(), RowSumTask(), "", "").ok());
}

/// The venv's Python, when it can import torch; else "".
std::string TorchPython();

// The generated host code is C++ that compiles against LibTorch's headers, op code included (a syntax
// check with the venv's torch: building the extension itself needs nvcc and a GPU).
TEST(KernelBenchTest, TheGeneratedHostCodeCompiles) {
  std::string python = TorchPython();
  if (python.empty() || fakes::RunCommand("command -v g++ >/dev/null").exit_code != 0)
    GTEST_SKIP() << "no g++, or no ~/.cache/kforge/venv/bin/python3 with torch (scripts/setup.sh makes it)";
  fakes::CommandResult flags = fakes::RunCommand(
      python +
      " -c \"import sysconfig, torch.utils.cpp_extension as e; print(' '.join('-I' + p for p in "
      "e.include_paths() + [sysconfig.get_paths()['include'], e.CUDA_HOME + '/include']))\" 2>/dev/null");
  ASSERT_EQ(flags.exit_code, 0) << flags.out;
  StatusOr<internal::HostCode> host = internal::RenderHostCode(EveryStepKindSolution(), RowSumTask());
  ASSERT_TRUE(host.ok()) << host.status().message();
  fs::path file = fs::temp_directory_path() / ("kforge-host-" + std::to_string(::getpid()) + ".cpp");
  std::ofstream(file) << host->cpp;
  std::string flag_line = flags.out.substr(0, flags.out.find('\n'));
  fakes::CommandResult compile = fakes::RunCommand(
      "g++ -std=c++17 -fsyntax-only -D_GLIBCXX_USE_CXX11_ABI=1 " + flag_line + " " + file.string() + " 2>&1");
  EXPECT_EQ(compile.exit_code, 0) << compile.out.substr(0, 4000);
  fs::remove(file);
}

TEST(KernelBenchTest, PythonStringsRoundTrip) {
  EXPECT_EQ(PythonTripleQuoted("a\\b\"\"\"c\""), "\"\"\"a\\\\b\\\"\\\"\\\"c\\\"\"\"\"");
}

/// The venv's Python, when it can import torch; else "".
std::string TorchPython() {
  const char* home = std::getenv("HOME");
  if (!home) return "";
  std::string python = std::string(home) + "/.cache/kforge/venv/bin/python3";
  if (!fs::exists(python)) return "";
  fakes::CommandResult probe = fakes::RunCommand(python + " -c 'import torch' 2>/dev/null");
  return probe.exit_code == 0 ? python : "";
}

// The generated file is valid Python, and its ModelNew passes the inputs, then the params in task
// order, to the extension, and returns what it returns (load_inline is replaced by a stand-in: the
// CUDA build itself needs nvcc and a GPU).
TEST(KernelBenchTest, TheGeneratedFileRunsUnderPython) {
  std::string python = TorchPython();
  if (python.empty())
    GTEST_SKIP() << "no ~/.cache/kforge/venv/bin/python3 with torch (scripts/setup.sh makes it)";
  common::Task task;
  task.id = "kernelbench/level2/1_Linear_ReLU";
  task.symbols = {{"B", 8}, {"IN", 16}, {"OUT", 4}};
  task.inputs = {Spec("x", {"B", "IN"})};
  task.params = {Spec("fc.weight", {"OUT", "IN"}), Spec("fc.bias", {"OUT"})};
  task.outputs = {Spec("out0", {"B", "OUT"})};
  nlohmann::json j = {
      {"source", "extern \"C\" __global__ void k(const float* x, float* y) { /* \"\"\" */ }"},
      {"launches", {{{"kernel", "k"}, {"grid", {"B"}}, {"block", {"OUT"}}, {"args", {"x", "out0"}}}}}};
  std::string reference =
      "import torch\nimport torch.nn as nn\nB = 8\nIN = 16\nOUT = 4\n\n\nclass Model(nn.Module):\n"
      "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(IN, OUT)\n\n"
      "    def forward(self, x):\n        return torch.relu(self.fc(x))\n\n\n"
      "def get_inputs():\n    return [torch.randn(B, IN)]\n\n\ndef get_init_inputs():\n    return []\n";
  StatusOr<std::string> py = RenderModelNew(*common::SolutionFromJson(j, "t"), task, reference, "label");
  ASSERT_TRUE(py.ok()) << py.status().message();
  fs::path dir = fs::temp_directory_path() / ("kforge-kb-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "level_2_problem_1_sample_0_kernel.py") << *py;
  std::ofstream(dir / "check.py") << R"PY(import sys, torch, torch.utils.cpp_extension as ext
calls = []
class Ext:
    def forward(self, tensors):
        calls.append(tensors)
        return [tensors[0][:, :4] * 0 + 1]
ext.load_inline = lambda **kw: (calls.append(kw), Ext())[1]
source = open(sys.argv[1]).read()
compile(source, sys.argv[1], "exec")
scope = {}
exec(source, scope)
build = calls[0]
assert build["functions"] == ["forward"], build
assert "kforge_kernel" in build["cuda_sources"][0] and '/* """ */' in build["cuda_sources"][0]
assert "std::vector<torch::Tensor> forward(" in build["cpp_sources"][0]
torch.manual_seed(42); ref = scope["Model"]()
torch.manual_seed(42); new = scope["ModelNew"]()
x = torch.randn(8, 16, dtype=torch.float64)  # KernelBench casts inputs to its precision
out = new(x)
tensors = calls[1]
assert len(tensors) == 3
assert tensors[0].dtype == torch.float32 and torch.equal(tensors[0], x.float()), "cast to the task's dtype"
assert torch.equal(tensors[1], ref.fc.weight) and torch.equal(tensors[2], ref.fc.bias), "same seeded weights"
assert out.shape == (8, 4)
print("ok")
)PY";
  fakes::CommandResult run =
      fakes::RunCommand(python + " " + (dir / "check.py").string() + " " +
                        (dir / "level_2_problem_1_sample_0_kernel.py").string() + " 2>&1");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(run.out.size() >= 3 && run.out.compare(run.out.size() - 3, 3, "ok\n") == 0) << run.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge::exporter
