// The op code plan v2 `op` steps run (src/reference/library_op_calls.inc), on CPU tensors: the same
// text the worker compiles and exported KernelBench files carry.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace kforge::reference {
namespace {

#include "reference/library_op_calls.inc"

/// The message of the c10::Error `run` throws, or "" when it throws none.
template <typename F>
std::string ErrorOf(F run) {
  try {
    run();
  } catch (const c10::Error& e) {
    std::string text = e.what_without_backtrace();
    return text.substr(0, text.find('\n'));
  }
  return "";
}

TEST(LibraryOpCallsTest, AllowlistOpsMatchATen) {
  at::manual_seed(0);
  at::Tensor x = at::randn({4, 8}), w = at::randn({3, 8}), b = at::randn({3});
  at::Tensor out = at::empty({4, 3});
  KfRunOp("linear", {x, w, b}, {}, out);
  EXPECT_TRUE(at::allclose(out, at::linear(x, w, b)));
  KfOpAttrs attrs;
  attrs.ints["dim"] = {1};
  attrs.bools["keepdim"] = true;
  at::Tensor sums = at::empty({4, 1});
  KfRunOp("sum", {x}, attrs, sums);
  EXPECT_TRUE(at::allclose(sums, x.sum(1, true)));
  EXPECT_EQ(ErrorOf([&] { KfRunOp("linear", {x, w}, {}, sums); }), "linear gives [4, 3], out is [4, 1]");
  EXPECT_EQ(ErrorOf([&] { KfRunOp("copy", {x}, {}, sums); }), "copy: the source is [4, 8], out is [4, 1]");
}

TEST(LibraryOpCallsTest, AtenOpsBySchemaNameWithAttributesByArgumentName) {
  at::manual_seed(0);
  at::Tensor x = at::randn({2, 3, 8, 8});
  KfOpAttrs pool;
  pool.ints["kernel_size"] = {2, 2};
  at::Tensor out = at::empty({2, 3, 4, 4});
  KfRunOp("aten::max_pool2d", {x}, pool, out);
  EXPECT_TRUE(at::equal(out, at::max_pool2d(x, {2, 2})));
  // A Scalar argument from a number, and an overload named after the dot.
  KfOpAttrs alpha;
  alpha.numbers["alpha"] = 0.5;
  at::Tensor sum = at::empty_like(x);
  KfRunOp("aten::add.Tensor", {x, x}, alpha, sum);
  EXPECT_TRUE(at::allclose(sum, x * 1.5));
  // Defaults fill what the plan leaves out (gelu's approximate="none").
  at::Tensor g = at::empty_like(x);
  KfRunOp("aten::gelu", {x}, {}, g);
  EXPECT_TRUE(at::allclose(g, at::gelu(x)));
}

TEST(LibraryOpCallsTest, AtenOpsThatAPlanMustNotCallAreRefused) {
  at::Tensor x = at::ones({4});
  at::Tensor out = at::empty({4});
  EXPECT_EQ(ErrorOf([&] { KfRunOp("aten::no_such_op", {x}, {}, out); }),
            "aten::no_such_op: no such ATen operator");
  EXPECT_EQ(ErrorOf([&] { KfRunOp("aten::relu_", {x}, {}, out); }),
            "aten::relu_: writes to its arguments; only functional operators are allowed");
  EXPECT_EQ(ErrorOf([&] { KfRunOp("aten::_local_scalar_dense", {x}, {}, out); }),
            "aten::_local_scalar_dense: does not return one tensor");
  // A file name (a string) is never something a plan can give.
  EXPECT_NE(ErrorOf([&] { KfRunOp("aten::from_file", {}, {}, out); }).find("argument filename is missing"),
            std::string::npos);
  KfOpAttrs typo;
  typo.numbers["alhpa"] = 2;
  EXPECT_NE(ErrorOf([&] {
              KfRunOp("aten::add.Tensor", {x, x}, typo, out);
            }).find("an attribute names no argument"),
            std::string::npos);
  KfOpAttrs wrong_kind;
  wrong_kind.bools["alpha"] = true;
  EXPECT_EQ(ErrorOf([&] {
              KfRunOp("aten::add.Tensor", {x, x}, wrong_kind, out);
            }),
            "aten::add.Tensor: alpha must be a number");
  EXPECT_EQ(ErrorOf([&] {
              KfRunOp("aten::add.Tensor", {x, x, x}, {}, out);
            }),
            "aten::add.Tensor: takes 2 tensors, the step gives 3");
  // A dtype is an integer in the schema's fake types, but not something a plan sets.
  KfOpAttrs dtype;
  dtype.ints["dim"] = {0};
  dtype.ints["dtype"] = {6};
  std::string message = ErrorOf([&] { KfRunOp("aten::softmax.int", {x}, dtype, out); });
  EXPECT_NE(message.find("cannot be set by a plan"), std::string::npos) << message;
}

}  // namespace
}  // namespace kforge::reference
