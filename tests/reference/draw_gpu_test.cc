// kforge's input draw on the GPU: float32 inputs written by one kernel whose digest, computed while
// writing, is the digest of what it wrote; the distributions have the moments they should; the same
// seed draws the same values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kforge/reference/compare.h"
#include "kforge/reference/runner.h"

namespace kforge::reference {
namespace {

using common::InitSpec;

common::Task OneInputTask(int64_t n, InitSpec init, common::DType dtype = common::DType::kFloat32) {
  common::Task task;
  task.id = "test/draw";
  common::TensorSpec spec;
  spec.name = "x";
  spec.dtype = dtype;
  spec.shape = {std::to_string(n)};
  spec.init = init;
  task.inputs = {spec};
  task.variants = {common::Variant{"default", {}}};
  return task;
}

struct Drawn {
  std::vector<float> values;
  uint64_t drawn_digest = 0;  ///< as GenerateInputsInto reports it
  uint64_t digest = 0;        ///< Digest of the tensor afterwards
};

Drawn Draw(const common::Task& task, uint64_t seed, int dist) {
  auto inputs = GenerateInputs(task, "default", seed, dist, Device::Cuda(0));
  EXPECT_TRUE(inputs.ok()) << inputs.status().message();
  std::map<std::string, uint64_t> digests;
  Status drawn = GenerateInputsInto(task, "default", seed, dist, *inputs, &digests);
  EXPECT_TRUE(drawn.ok()) << drawn.message();
  const Tensor& x = *inputs->Find("x");
  Drawn out;
  out.drawn_digest = digests.at("x");
  out.digest = *Digest(x);
  if (x.dtype() == common::DType::kFloat32) {
    std::string bytes = x.HostBytes();
    out.values.resize(bytes.size() / 4);
    std::memcpy(out.values.data(), bytes.data(), bytes.size());
  }
  return out;
}

class DrawGpuTest : public testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(DrawGpuTest, TheDigestOfTheDrawIsTheDigestOfWhatItWrote) {
  for (int64_t n : std::vector<int64_t>{1, 2, 3, 255, 256, 1000001, int64_t{1} << 22}) {
    for (InitSpec::Dist dist : {InitSpec::Dist::kRandn, InitSpec::Dist::kRand, InitSpec::Dist::kUniform}) {
      InitSpec init;
      init.dist = dist;
      for (int d = 0; d < kNumDistributions; ++d) {
        Drawn drawn = Draw(OneInputTask(n, init), 7, d);
        EXPECT_EQ(drawn.drawn_digest, drawn.digest) << "n " << n << ", distribution " << d;
      }
    }
  }
  // A structured input is digested after its structure is applied: the same contract.
  InitSpec rand;
  rand.dist = InitSpec::Dist::kRand;
  for (common::Structure structure : {common::Structure::kLower, common::Structure::kSymmetric}) {
    common::Task task = OneInputTask(1, rand);
    task.inputs[0].shape = {"257", "257"};
    task.inputs[0].structure = structure;
    Drawn drawn = Draw(task, 7, 0);
    EXPECT_EQ(drawn.drawn_digest, drawn.digest) << common::kStructureNames.Name(structure);
    EXPECT_EQ(drawn.values[1], structure == common::Structure::kLower ? 0.0f : drawn.values[257]);
  }
  // Inputs LibTorch draws (not float32) are digested after the draw: the same contract.
  InitSpec ints;
  ints.dist = InitSpec::Dist::kRandint;
  ints.high = 10;
  Drawn drawn = Draw(OneInputTask(1001, ints, common::DType::kInt64), 7, 0);
  EXPECT_EQ(drawn.drawn_digest, drawn.digest);
}

TEST_F(DrawGpuTest, DistributionsHaveTheirMoments) {
  const int64_t n = int64_t{1} << 22;
  auto moments = [](const std::vector<float>& v, double& mean, double& sd, float& lo, float& hi) {
    double s = 0, s2 = 0;
    lo = v[0], hi = v[0];
    for (float x : v) s += x, s2 += double(x) * x, lo = std::min(lo, x), hi = std::max(hi, x);
    mean = s / v.size();
    sd = std::sqrt(s2 / v.size() - mean * mean);
  };
  double mean, sd;
  float lo, hi;
  InitSpec normal;
  moments(Draw(OneInputTask(n, normal), 1, 0).values, mean, sd, lo, hi);
  EXPECT_NEAR(mean, 0, 0.01);
  EXPECT_NEAR(sd, 1, 0.01);
  EXPECT_LT(lo, -4.5f);  // tails are there
  EXPECT_GT(hi, 4.5f);
  moments(Draw(OneInputTask(n, normal), 1, 1).values, mean, sd, lo, hi);
  EXPECT_NEAR(mean, 1, 0.02);
  EXPECT_NEAR(sd, 4, 0.02);
  InitSpec uniform;
  uniform.dist = InitSpec::Dist::kUniform;
  uniform.low = -2;
  uniform.high = 3;
  uniform.scale = 2;  // then 2x + 1: [-3, 7)
  uniform.shift = 1;
  moments(Draw(OneInputTask(n, uniform), 1, 0).values, mean, sd, lo, hi);
  EXPECT_NEAR(mean, 2, 0.02);
  EXPECT_NEAR(sd, 10 / std::sqrt(12.0), 0.02);
  EXPECT_GE(lo, -3.0f);
  EXPECT_LT(hi, 7.0f);
  InitSpec rand;
  rand.dist = InitSpec::Dist::kRand;
  moments(Draw(OneInputTask(n, rand), 1, 2).values, mean, sd, lo, hi);  // 1 - u^2: mean 2/3
  EXPECT_NEAR(mean, 2.0 / 3, 0.01);
  EXPECT_GT(lo, 0.0f - 1e-6f);
  EXPECT_LE(hi, 1.0f);
}

TEST_F(DrawGpuTest, TheSameSeedDrawsTheSameValues) {
  InitSpec normal;
  common::Task task = OneInputTask(4097, normal);
  Drawn a = Draw(task, 42, 0), b = Draw(task, 42, 0), c = Draw(task, 43, 0);
  EXPECT_EQ(a.values, b.values);
  EXPECT_NE(a.digest, c.digest);
  EXPECT_NE(a.values, c.values);
}

}  // namespace
}  // namespace kforge::reference
