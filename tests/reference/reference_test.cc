#include <gtest/gtest.h>
#include <cstdint>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "kforge/common/safetensors.h"
#include "kforge/reference/compare.h"
#include "kforge/reference/runner.h"
#include "reference/fixture.h"

namespace kforge::reference {
namespace {

using common::DType;

Tensor Floats(const std::vector<float>& v) {
  return Tensor::FromBytes(DType::kFloat32, {static_cast<int64_t>(v.size())},
                           std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * 4),
                           Device::Cpu())
      .value();
}

std::vector<float> ToFloats(const Tensor& t) {
  std::string bytes = t.HostBytes();
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(DeviceTest, Parse) {
  EXPECT_EQ(Device::Parse("cpu").value(), Device::Cpu());
  EXPECT_EQ(Device::Parse("cuda:3").value(), Device::Cuda(3));
  EXPECT_EQ(Device::Parse("cuda").value().ToString(), "cuda:0");
  EXPECT_FALSE(Device::Parse("tpu").ok());
  EXPECT_FALSE(Device::Parse("cuda:x").ok());
}

TEST(TensorTest, FillsAndViews) {
  Tensor nan = Empty(DType::kFloat16, {2, 3}, Device::Cpu()).value();
  EXPECT_EQ(nan.view().bytes, 12u);
  EXPECT_EQ(nan.view().numel(), 6);
  EXPECT_NE(nan.view().data, nullptr);
  Tensor f = Empty(DType::kFloat32, {4}, Device::Cpu()).value();
  for (float x : ToFloats(f)) EXPECT_TRUE(std::isnan(x));
  Tensor ints = Empty(DType::kInt32, {2}, Device::Cpu(), {Fill::Kind::kNaN, 0xab}).value();
  EXPECT_EQ(ints.HostBytes(), std::string(8, '\xab'));
  Tensor bytes = Empty(DType::kFloat32, {1}, Device::Cpu(), {Fill::Kind::kByte, 0x7f}).value();
  EXPECT_EQ(bytes.HostBytes(), std::string(4, '\x7f'));

  Tensor like = EmptyLike(f).value();
  EXPECT_EQ(like.shape(), f.shape());
  EXPECT_TRUE(BitwiseEqual(f, f.Clone()));  // NaN payloads compare bitwise
  Tensor other = Floats({1, 2, 3, 4});
  EXPECT_FALSE(BitwiseEqual(f, other));
  EXPECT_FALSE(Tensor::FromBytes(DType::kFloat32, {3}, "abc", Device::Cpu()).ok());

  TensorSet set;
  set.Set("a", other);
  set.Set("b", f);
  set.Set("a", f);
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set.items()[0].first, "a");
  EXPECT_TRUE(BitwiseEqual(*set.Find("a"), f));
  EXPECT_EQ(set.Find("c"), nullptr);
}

TEST(CompareTest, Table) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char* label;
    std::vector<float> ref, cand;
    int64_t mismatches, first;
  };
  const Case cases[] = {
      {"equal", {1, 2, 3}, {1, 2, 3}, 0, -1},
      {"within atol+rtol", {1, 100, 0}, {1.00005f, 100.005f, 0.00005f}, 0, -1},
      {"beyond tolerance", {1, 2, 3}, {1, 2.01f, 3.1f}, 2, 1},
      {"nan in candidate", {1, 2}, {1, nan}, 1, 1},
      {"nan in both", {nan, 2}, {nan, 2}, 0, -1},
      {"nan only in ref", {nan, 2}, {0, 2}, 1, 0},
      {"same infinity", {inf, -inf}, {inf, -inf}, 0, -1},
      {"wrong infinity", {inf, 1}, {-inf, 1}, 1, 0},
  };
  for (const Case& c : cases) {
    auto res = Compare(Floats(c.ref), Floats(c.cand), {1e-4, 1e-4});
    ASSERT_TRUE(res.ok()) << c.label;
    EXPECT_EQ(res->mismatches, c.mismatches) << c.label;
    EXPECT_EQ(res->first_mismatch, c.first) << c.label;
  }
  auto res = Compare(Floats({1, 2, 4}), Floats({1, 2.5f, 4}), {1e-4, 1e-4}).value();
  EXPECT_DOUBLE_EQ(res.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(res.max_rel_err, 0.25);
  EXPECT_NEAR(res.rel_l2_err, 0.5 / std::sqrt(21.0), 1e-12);
  EXPECT_DOUBLE_EQ(res.ref_max_abs, 4);
  EXPECT_DOUBLE_EQ(res.ref_at_first, 2);
  EXPECT_DOUBLE_EQ(res.cand_at_first, 2.5);
  EXPECT_TRUE(std::isinf(Compare(Floats({1}), Floats({nan}), {}).value().max_abs_err));
  EXPECT_FALSE(Compare(Floats({1}), Floats({1, 2}), {}).ok());
}

class ProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FixtureRoot("cpu");
    if (root_.empty()) GTEST_SKIP() << "could not export the fixture with " << KFORGE_TORCH_PYTHON;
    auto task = common::FindTask(root_, "fixture/affine");
    ASSERT_TRUE(task.ok()) << task.status().ToString();
    task_ = std::move(task).value();
  }
  std::filesystem::path root_;
  common::Task task_;
};

TEST_F(ProgramTest, GeneratesDeterministicInputsPerDistribution) {
  auto a = GenerateInputs(task_, "default", 42, 0, Device::Cpu());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = GenerateInputs(task_, "default", 42, 0, Device::Cpu()).value();
  auto c = GenerateInputs(task_, "default", 43, 0, Device::Cpu()).value();
  auto d = GenerateInputs(task_, "default", 42, 1, Device::Cpu()).value();
  const Tensor& x = *a->Find("x");
  EXPECT_EQ(x.shape(), (std::vector<int64_t>{3, 8}));
  EXPECT_TRUE(BitwiseEqual(x, *b.Find("x")));
  EXPECT_FALSE(BitwiseEqual(x, *c.Find("x")));
  EXPECT_FALSE(BitwiseEqual(x, *d.Find("x")));
  EXPECT_FALSE(GenerateInputs(task_, "default", 42, kNumDistributions, Device::Cpu()).ok());
  EXPECT_FALSE(GenerateInputs(task_, "nope", 42, 0, Device::Cpu()).ok());
}

TEST(InputsTest, DistributionsKeepTheirDomain) {
  common::Task task;
  task.id = "t";
  task.variants = {{"default", {}}};
  common::TensorSpec rand{"r", DType::kFloat32, {"4096"}, {}};
  rand.init.dist = common::InitSpec::Dist::kRand;
  common::TensorSpec uni{"u", DType::kFloat32, {"4096"}, {}};
  uni.init = {common::InitSpec::Dist::kUniform, 2, 3, 1, 0};
  common::TensorSpec ints{"i", DType::kInt64, {"4096"}, {}};
  ints.init = {common::InitSpec::Dist::kRandint, -3, 5, 1, 0};
  common::TensorSpec shifted{"s", DType::kFloat32, {"4096"}, {}};
  shifted.init = {common::InitSpec::Dist::kRand, 0, 1, 2, 10};
  task.inputs = {rand, uni, ints, shifted};
  for (int dist = 0; dist < kNumDistributions; ++dist) {
    TensorSet in = GenerateInputs(task, "default", 5, dist, Device::Cpu()).value();
    for (float v : ToFloats(*in.Find("r"))) ASSERT_TRUE(v >= 0 && v <= 1) << dist;
    for (float v : ToFloats(*in.Find("u"))) ASSERT_TRUE(v >= 2 && v <= 3) << dist;
    for (float v : ToFloats(*in.Find("s"))) ASSERT_TRUE(v >= 10 && v <= 12) << dist;
    std::string bytes = in.Find("i")->HostBytes();
    std::vector<int64_t> iv(bytes.size() / 8);
    std::memcpy(iv.data(), bytes.data(), bytes.size());
    int64_t lo = 100, hi = -100;
    for (int64_t v : iv) lo = std::min(lo, v), hi = std::max(hi, v);
    EXPECT_EQ(lo, -3) << dist;
    EXPECT_EQ(hi, 4) << dist;
  }
}

// KernelBench's level1/13-15: get_inputs gives triangular or symmetric matrices, and every draw keeps
// that structure (the measured domains' draws included: the structure belongs to the input).
TEST(InputsTest, StructuredInputsKeepTheirStructureOnEveryDraw) {
  common::Task task;
  task.id = "t";
  task.variants = {{"default", {{"N", 33}}}, {"wide", {{"N", 32}, {"M", 31}}}};
  task.inputs = {{"a", DType::kFloat32, {"3", "N", "N"}, {}}, {"b", DType::kFloat32, {"N", "N"}, {}},
                 {"c", DType::kFloat64, {"N", "N"}, {}}, {"d", DType::kFloat32, {"N", "N"}, {}}};
  task.inputs[0].structure = common::Structure::kLower;
  task.inputs[1].structure = common::Structure::kUpper;
  task.inputs[2].structure = common::Structure::kSymmetric;
  const int n = 33;
  auto at = [n](const std::vector<double>& m, int batch, int i, int j) { return m[(batch * n + i) * n + j]; };
  for (int dist = 0; dist < kNumDistributions; ++dist) {
    TensorSet in = GenerateInputs(task, "default", 9, dist, Device::Cpu()).value();
    std::map<std::string, std::vector<double>> v;
    for (const char* name : {"a", "b", "d"})
      for (float x : ToFloats(*in.Find(name))) v[name].push_back(x);
    const std::string bytes = in.Find("c")->HostBytes();
    v["c"].resize(bytes.size() / 8);
    std::memcpy(v["c"].data(), bytes.data(), bytes.size());
    int below = 0, d_above = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (j > i) {
          ASSERT_EQ(at(v["a"], 2, i, j), 0) << dist;
          d_above += at(v["d"], 0, i, j) != 0;
        }
        if (j < i) {
          ASSERT_EQ(at(v["b"], 0, i, j), 0) << dist;
          below += at(v["a"], 2, i, j) != 0;
        }
        ASSERT_EQ(at(v["c"], 0, i, j), at(v["c"], 0, j, i)) << dist;
      }
    EXPECT_GT(below, n) << "the triangle is drawn, not zero";
    EXPECT_GT(d_above, n) << "an input without a structure stays dense";
  }
  task.inputs[3].shape = {"N", "M"};
  task.inputs[3].structure = common::Structure::kLower;
  StatusOr<TensorSet> refused = GenerateInputs(task, "wide", 9, 0, Device::Cpu());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("input d: the \"lower\" structure needs its last two dimensions equal"),
            std::string::npos)
      << refused.status().message();
}

// KernelBench's `torch.rand(n) * torch.rand(())`: each draw has its own factor, so the mean of a large
// input (and a loss over it) is not the same on every draw.
TEST(InputsTest, AFactorScalesEachDrawByANumberOfItsOwn) {
  common::Task task;
  task.id = "t";
  task.variants = {{"default", {}}};
  common::TensorSpec scaled{"p", DType::kFloat32, {"65536"}, {}};
  scaled.init.dist = common::InitSpec::Dist::kRand;
  scaled.init.factor = common::InitSpec::Factor{0.5, 1.0};
  task.inputs = {scaled};
  std::set<float> maxima;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    std::vector<float> v = ToFloats(*GenerateInputs(task, "default", seed, 0, Device::Cpu()).value().Find("p"));
    const float max = *std::max_element(v.begin(), v.end());
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0f);
    EXPECT_TRUE(max >= 0.49f && max < 1.0f) << max;
    maxima.insert(std::round(max * 1000) / 1000);
    EXPECT_TRUE(BitwiseEqual(*GenerateInputs(task, "default", seed, 0, Device::Cpu()).value().Find("p"),
                             *GenerateInputs(task, "default", seed, 0, Device::Cpu()).value().Find("p")));
  }
  EXPECT_GE(maxima.size(), 6u) << "the draws share their factor";
}

TEST_F(ProgramTest, RunsThePackageAndChecksInputs) {
  auto program = ReferenceProgram::Load(task_, "default", Device::Cpu());
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ((*program)->params().size(), 3u);
  EXPECT_EQ((*program)->params().items()[0].first, "lin.weight");

  TensorSet in = GenerateInputs(task_, "default", 1, 0, Device::Cpu()).value();
  auto out = (*program)->Run(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ(out->Find("out0")->shape(), (std::vector<int64_t>{3, 4}));
  // out1 is the row sums of x: recompute on the host.
  std::vector<float> x = ToFloats(*in.Find("x")), sums = ToFloats(*out->Find("out1"));
  for (int r = 0; r < 3; ++r) {
    float s = 0;
    for (int c = 0; c < 8; ++c) s += x[r * 8 + c];
    EXPECT_NEAR(sums[r], s, 1e-5);
  }
  // out0 = relu(...) * 0.5 is never negative.
  for (float v : ToFloats(*out->Find("out0"))) EXPECT_GE(v, 0);

  TensorSet bad;
  bad.Set("x", Empty(DType::kFloat32, {2, 8}, Device::Cpu()).value());
  auto rejected = (*program)->Run(bad);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.status().message().find("expected float32[3, 8]"), std::string::npos)
      << rejected.status().message();
  // Execute (what bench times) runs the same program with the same input checks.
  EXPECT_TRUE((*program)->Execute(in).ok());
  Status execute_rejected = (*program)->Execute(bad);
  ASSERT_FALSE(execute_rejected.ok());
  EXPECT_NE(execute_rejected.message().find("expected float32[3, 8]"), std::string::npos)
      << execute_rejected.message();

  auto outputs = AllocateOutputs(task_, "default", Device::Cpu());
  ASSERT_TRUE(outputs.ok());
  auto cmp = CompareAll(*out, *outputs, task_.tolerance);
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ((*cmp)[0].mismatches, 12);  // poisoned, never written
}

TEST_F(ProgramTest, LoadErrorsNameTheArtifact) {
  common::Task missing = task_;
  missing.artifacts.packages.clear();
  auto p = ReferenceProgram::Load(missing, "default", Device::Cpu());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("no cpu package"), std::string::npos) << p.status().message();

  common::Task wrong = task_;
  wrong.params[0].shape = {"5", "8"};
  p = ReferenceProgram::Load(wrong, "default", Device::Cpu());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("\"lin.weight\" is float32[4, 8], task.json says float32[5, 8]"),
            std::string::npos)
      << p.status().message();
}

TEST(VersionTest, LibTorch) { EXPECT_EQ(LibTorchVersion().rfind("2.", 0), 0u) << LibTorchVersion(); }

// Verdicts and `kforge --version` report the version the build was configured with.
TEST(VersionTest, MatchesTheConfiguredVersion) { EXPECT_EQ(LibTorchVersion(), KFORGE_LIBTORCH_VERSION); }

}  // namespace
}  // namespace kforge::reference
