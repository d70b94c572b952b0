// The host function of a KernelBench ModelNew, generated from a launch plan.
#include "export/host_code.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "export/dedup.h"
#include "kforge/common/text.h"
#include "kforge/reference/library_op_calls_text.h"

namespace kforge::exporter::internal {
namespace {

using common::LaunchArg;
using common::LaunchStep;

/// Headers of the generated host code. Spelled without the directive here, so that the module fences
/// (tests/common/module_fences_test.cc) see that this file itself includes no torch header.
constexpr const char* kHostHeaders[] = {"torch/extension.h",
                                        "ATen/core/dispatch/Dispatcher.h",
                                        "ATen/cuda/CUDAContext.h",
                                        "c10/cuda/CUDAException.h",
                                        "c10/cuda/CUDAGuard.h",
                                        "cuda_runtime.h",
                                        "",
                                        "algorithm",
                                        "cstdint",
                                        "limits",
                                        "map",
                                        "string",
                                        "vector"};

constexpr std::string_view kPrelude = R"host(
const void* kforge_kernel(int step);  // in the CUDA source

namespace {

int64_t kf_cdiv(int64_t a, int64_t b) {
  TORCH_CHECK(b != 0, "cdiv by zero");
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}
int64_t kf_min(int64_t a, int64_t b) { return std::min(a, b); }
int64_t kf_max(int64_t a, int64_t b) { return std::max(a, b); }
int64_t kf_numel(const torch::Tensor& t) { return t.numel(); }
int64_t kf_size(const torch::Tensor& t, int64_t d) { return t.size(d); }

unsigned int kf_dim(int64_t v, const char* what) {
  TORCH_CHECK(v >= 1 && v <= INT32_MAX, what, ": ", v, " is not a launch dimension");
  return static_cast<unsigned int>(v);
}

void kf_check_tensor(const torch::Tensor& t, const char* name, at::ScalarType dtype, int64_t rank) {
  TORCH_CHECK(t.is_cuda(), name, ": expected a CUDA tensor");
  TORCH_CHECK(t.scalar_type() == dtype, name, ": expected ", dtype, ", got ", t.scalar_type());
  TORCH_CHECK(t.dim() == rank, name, ": expected ", rank, " dimensions, got ", t.dim());
  TORCH_CHECK(t.is_contiguous(), name, ": expected a contiguous tensor");
}

// A plan's view: `shape` elements of `dtype` from element `offset` of `base` (in base's elements) on.
torch::Tensor kf_view(const torch::Tensor& base, int64_t offset, std::vector<int64_t> shape, at::ScalarType dtype,
                      const char* name) {
  const int64_t item = static_cast<int64_t>(c10::elementSize(dtype));
  int64_t count = 1;
  for (int64_t d : shape) {
    TORCH_CHECK(d >= 0, name, ": negative dimension ", d);
    count *= d;
  }
  const int64_t start = offset * base.element_size();
  TORCH_CHECK(offset >= 0 && start % item == 0 && start + count * item <= static_cast<int64_t>(base.nbytes()), name,
              ": the window lies outside its tensor or is not aligned");
  return base.reshape({-1}).view(torch::kUInt8).narrow(0, start, count * item).view(dtype).view(shape);
}

// A device scalar: the bytes of element `index` of `t`, read once the steps before have run.
uint64_t kf_item(const torch::Tensor& t, int64_t index, cudaStream_t stream, const char* name) {
  TORCH_CHECK(index >= 0 && index < t.numel(), name, ": element ", index, " is outside (", t.numel(), " elements)");
  uint64_t bits = 0;
  C10_CUDA_CHECK(cudaMemcpyAsync(&bits, static_cast<const char*>(t.data_ptr()) + index * t.element_size(),
                                 t.element_size(), cudaMemcpyDeviceToHost, stream));
  C10_CUDA_CHECK(cudaStreamSynchronize(stream));
  return bits;
}

}  // namespace
)host";

const char* TorchDType(common::DType dtype) {
  switch (dtype) {
    case common::DType::kFloat32:
      return "torch::kFloat32";
    case common::DType::kFloat16:
      return "torch::kFloat16";
    case common::DType::kBFloat16:
      return "torch::kBFloat16";
    case common::DType::kFloat64:
      return "torch::kFloat64";
    case common::DType::kInt64:
      return "torch::kInt64";
    case common::DType::kInt32:
      return "torch::kInt32";
    case common::DType::kInt8:
      return "torch::kInt8";
    case common::DType::kUInt8:
      return "torch::kUInt8";
    case common::DType::kBool:
      return "torch::kBool";
  }
  return "torch::kFloat32";
}

/// A C++ identifier for a tensor: `t_` and its name with every other character made `_`.
std::string TensorVar(const std::string& name, const std::set<std::string>& taken) {
  std::string var = "t_";
  for (char c : name) var += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  std::string unique = var;
  for (int i = 2; taken.count(unique); ++i) unique = var + "_" + std::to_string(i);
  return unique;
}

std::string SymbolVar(const std::string& name) {
  std::string var = "sym_";
  for (char c : name) var += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return var;
}

/// A C++ string literal of `text` (for error messages in the generated code).
std::string CppString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "\"";
}

std::string HexFloat(double value, bool single) {
  char buf[64];
  if (single) {
    std::snprintf(buf, sizeof buf, "%af", static_cast<double>(static_cast<float>(value)));
  } else {
    std::snprintf(buf, sizeof buf, "%a", value);
  }
  return buf;
}

/// nvcc's spelling of an allowed NVRTC option, or "" for one nvcc has no use for.
std::string NvccFlag(const std::string& option) {
  if (option == "-use_fast_math" || option == "--use_fast_math") return "--use_fast_math";
  if (option == "-default-device") return "";
  if (option.rfind("-maxrregcount=", 0) == 0) return "-" + option;
  if (option.rfind("--std=", 0) == 0) return option.substr(1);
  return option;
}

class Writer {
 public:
  Writer(const common::Solution& solution, const common::Task& task) : solution_(solution), task_(task) {}

  StatusOr<HostCode> Run() {
    HostCode code;
    KFORGE_RETURN_IF_ERROR(NameTensors());
    for (const char* header : kHostHeaders)
      code.cpp += *header ? std::string("#include <") + header + ">\n" : std::string("\n");
    code.cpp += kPrelude;
    if (HasOps()) {
      code.cpp += "\nnamespace {\n\n";
      code.cpp += reference::kLibraryOpCalls;
      code.cpp += "\n}  // namespace\n";
    }
    code.cpp += "\n// Runs the launch plan of a kforge solution for " + task_.id +
                ": takes the task's inputs, then its parameters, and returns its outputs.\n";
    code.cpp += "std::vector<torch::Tensor> forward(std::vector<torch::Tensor> tensors) {\n";
    KFORGE_RETURN_IF_ERROR(Arguments(code.cpp));
    KFORGE_RETURN_IF_ERROR(Symbols(code.cpp));
    KFORGE_RETURN_IF_ERROR(Allocations(code.cpp));
    code.cpp += "  cudaStream_t stream = at::cuda::getCurrentCUDAStream();\n";
    for (size_t i = 0; i < solution_.launches.size(); ++i) KFORGE_RETURN_IF_ERROR(Step(i, code.cpp));
    code.cpp += "  return {";
    for (size_t i = 0; i < task_.outputs.size(); ++i)
      code.cpp += (i ? ", " : "") + Var(task_.outputs[i].name);
    code.cpp += "};\n}\n";
    KFORGE_ASSIGN_OR_RETURN(code.cuda_suffix, KernelTable());
    for (const std::string& option : solution_.options)
      if (std::string flag = NvccFlag(option); !flag.empty()) code.nvcc_flags.push_back(flag);
    return code;
  }

 private:
  bool HasOps() const {
    for (const LaunchStep& step : solution_.launches)
      if (step.kind == LaunchStep::Kind::kOp) return true;
    return false;
  }

  Status NameTensors() {
    std::set<std::string> taken;
    auto add = [&](const std::string& name) -> Status {
      for (const auto& [known, var] : vars_)
        if (known == name) return Status::InvalidArgument("tensor \"" + name + "\" is named twice");
      std::string var = TensorVar(name, taken);
      taken.insert(var);
      vars_.emplace_back(name, var);
      return Status::Ok();
    };
    for (const auto* list : {&task_.inputs, &task_.params, &task_.outputs})
      for (const common::TensorSpec& spec : *list) KFORGE_RETURN_IF_ERROR(add(spec.name));
    for (const common::ScratchBuffer& buffer : solution_.scratch) KFORGE_RETURN_IF_ERROR(add(buffer.name));
    for (const LaunchStep& step : solution_.launches)
      if (step.kind == LaunchStep::Kind::kView) KFORGE_RETURN_IF_ERROR(add(step.view_name));
    for (const auto& [name, value] : task_.symbols) symbols_.push_back(name);
    return Status::Ok();
  }

  std::string Var(const std::string& tensor) const {
    for (const auto& [name, var] : vars_)
      if (name == tensor) return var;
    return "";
  }

  StatusOr<std::string> Expr(const std::string& text, const std::string& where) const {
    StatusOr<std::string> cpp = TranslateExpr(text, symbols_, vars_);
    if (!cpp.ok()) return Status::InvalidArgument(where + ": " + cpp.status().message());
    return cpp;
  }

  Status Arguments(std::string& out) const {
    size_t count = task_.inputs.size() + task_.params.size();
    out += "  TORCH_CHECK(tensors.size() == " + std::to_string(count) + ", \"expected " +
           std::to_string(count) + " tensors (the inputs, then the parameters), got \", tensors.size());\n";
    size_t index = 0;
    for (const auto* list : {&task_.inputs, &task_.params}) {
      for (const common::TensorSpec& spec : *list) {
        std::string var = Var(spec.name);
        out += "  const torch::Tensor& " + var + " = tensors[" + std::to_string(index++) + "];\n";
        out += "  kf_check_tensor(" + var + ", " + CppString(spec.name) + ", " + TorchDType(spec.dtype) +
               ", " + std::to_string(spec.shape.size()) + ");\n";
      }
    }
    if (count > 0) out += "  const c10::cuda::CUDAGuard guard(tensors[0].device());\n";
    return Status::Ok();
  }

  /// Each symbol from the first input or param dimension that is exactly it, else the task's default;
  /// then every other dimension of the inputs and params is checked against its expression.
  Status Symbols(std::string& out) const {
    out += "  // Shape symbols, read from the shapes of the inputs.\n";
    std::set<std::pair<std::string, size_t>> sources;
    for (const auto& [symbol, fallback] : task_.symbols) {
      std::string value = std::to_string(fallback) + ";  // no input shows it: the task's default";
      bool found = false;
      for (const auto* list : {&task_.inputs, &task_.params}) {
        for (const common::TensorSpec& spec : *list) {
          for (size_t d = 0; d < spec.shape.size() && !found; ++d) {
            if (spec.shape[d] != symbol) continue;
            value = Var(spec.name) + ".size(" + std::to_string(d) + ");";
            sources.insert({spec.name, d});
            found = true;
          }
        }
      }
      out += "  const int64_t " + SymbolVar(symbol) + " = " + value + "\n";
    }
    for (const auto* list : {&task_.inputs, &task_.params}) {
      for (const common::TensorSpec& spec : *list) {
        for (size_t d = 0; d < spec.shape.size(); ++d) {
          if (sources.count({spec.name, d})) continue;
          KFORGE_ASSIGN_OR_RETURN(std::string expected, Expr(spec.shape[d], spec.name + ".shape"));
          std::string actual = Var(spec.name) + ".size(" + std::to_string(d) + ")";
          out += "  TORCH_CHECK(" + actual + " == " + expected + ", " +
                 CppString(spec.name + ": dimension " + std::to_string(d) + " is ") + ", " + actual + ", " +
                 CppString(", the task says " + spec.shape[d] + " = ") + ", " + expected + ");\n";
        }
      }
    }
    return Status::Ok();
  }

  StatusOr<std::string> Shape(const std::vector<std::string>& shape, const std::string& where) const {
    std::string dims;
    for (size_t d = 0; d < shape.size(); ++d) {
      KFORGE_ASSIGN_OR_RETURN(std::string dim, Expr(shape[d], where + "[" + std::to_string(d) + "]"));
      dims += (d ? ", " : "") + dim;
    }
    return "std::vector<int64_t>{" + dims + "}";
  }

  Status Allocations(std::string& out) const {
    std::string device = task_.inputs.empty() && task_.params.empty()
                             ? "torch::TensorOptions().device(torch::kCUDA)"
                             : "tensors[0].options()";
    out += "  const torch::TensorOptions options = " + device + ";\n";
    for (const common::TensorSpec& spec : task_.outputs) {
      KFORGE_ASSIGN_OR_RETURN(std::string shape, Shape(spec.shape, spec.name + ".shape"));
      out += "  torch::Tensor " + Var(spec.name) + " = torch::empty(" + shape + ", options.dtype(" +
             TorchDType(spec.dtype) + "));  // output " + spec.name + "\n";
    }
    for (size_t i = 0; i < solution_.scratch.size(); ++i) {
      const common::ScratchBuffer& buffer = solution_.scratch[i];
      std::optional<common::DType> dtype = common::ParseDType(buffer.dtype);
      if (!dtype)
        return Status::InvalidArgument("scratch[" + std::to_string(i) + "].dtype: unknown " + buffer.dtype);
      KFORGE_ASSIGN_OR_RETURN(std::string shape,
                              Shape(buffer.shape, "scratch[" + std::to_string(i) + "].shape"));
      out += "  torch::Tensor " + Var(buffer.name) + " = torch::empty(" + shape + ", options.dtype(" +
             TorchDType(*dtype) + "));  // scratch " + buffer.name + "\n";
    }
    return Status::Ok();
  }

  common::DType DTypeOf(const std::string& tensor) const {
    if (const common::TensorSpec* spec = task_.FindTensor(tensor)) return spec->dtype;
    for (const common::ScratchBuffer& buffer : solution_.scratch)
      if (buffer.name == tensor) return common::ParseDType(buffer.dtype).value_or(common::DType::kFloat32);
    for (const LaunchStep& step : solution_.launches)
      if (step.kind == LaunchStep::Kind::kView && step.view_name == tensor)
        return step.view_dtype.empty()
                   ? DTypeOf(step.view_of)
                   : common::ParseDType(step.view_dtype).value_or(common::DType::kFloat32);
    return common::DType::kFloat32;
  }

  StatusOr<std::string> TensorArg(const std::string& name, const std::string& where) const {
    std::string var = Var(name);
    if (var.empty()) return Status::InvalidArgument(where + ": unknown tensor \"" + name + "\"");
    return var;
  }

  /// An op step: its attributes as KfOpAttrs, then the call of the shared op code.
  Status OpStep(const LaunchStep& step, const std::string& path, std::string& out) const {
    std::string args;
    for (size_t a = 0; a < step.op_args.size(); ++a) {
      KFORGE_ASSIGN_OR_RETURN(std::string var,
                              TensorArg(step.op_args[a], path + ".args[" + std::to_string(a) + "]"));
      args += (a ? ", " : "") + var;
    }
    KFORGE_ASSIGN_OR_RETURN(std::string target, TensorArg(step.op_out, path + ".out"));
    out += "\n  // " + path + ": op " + step.op + " -> " + step.op_out + "\n  {\n    KfOpAttrs attrs;\n";
    for (const auto& [key, value] : step.op_attrs.items()) {
      std::string field = "attrs.ints[" + CppString(key) + "] = {";
      if (value.is_boolean()) {
        field = "attrs.bools[" + CppString(key) + "] = " + (value.get<bool>() ? "true" : "false");
      } else if (value.is_number_integer()) {
        field += std::to_string(value.get<int64_t>()) + "}";
      } else if (value.is_number()) {
        field = "attrs.numbers[" + CppString(key) + "] = " + HexFloat(value.get<double>(), false);
      } else if (value.is_array()) {
        for (size_t i = 0; i < value.size(); ++i)
          field += (i ? ", " : "") + std::to_string(value[i].get<int64_t>());
        field += "}";
      } else {
        return Status::InvalidArgument(path + ".attrs." + key + ": not a value an op takes");
      }
      out += "    " + field + ";\n";
    }
    out += "    KfRunOp(" + CppString(step.op) + ", {" + args + "}, attrs, " + target + ");\n  }\n";
    return Status::Ok();
  }

  Status ViewStep(const LaunchStep& step, const std::string& path, std::string& out) const {
    KFORGE_ASSIGN_OR_RETURN(std::string base, TensorArg(step.view_of, path + ".of"));
    KFORGE_ASSIGN_OR_RETURN(std::string offset, Expr(step.view_offset, path + ".offset"));
    KFORGE_ASSIGN_OR_RETURN(std::string shape, Shape(step.view_shape, path + ".shape"));
    out += "\n  // " + path + ": view " + step.view_name + " of " + step.view_of + "\n";
    out += "  torch::Tensor " + Var(step.view_name) + " = kf_view(" + base + ", " + offset + ", " + shape +
           ", " + TorchDType(DTypeOf(step.view_name)) + ", " + CppString(path) + ");\n";
    return Status::Ok();
  }

  Status FillStep(const LaunchStep& step, const std::string& path, std::string& out) const {
    KFORGE_ASSIGN_OR_RETURN(std::string target, TensorArg(step.fill_target, path + ".fill"));
    double v = step.fill_value;
    std::string value = std::isnan(v) ? "std::numeric_limits<double>::quiet_NaN()"
                        : std::isinf(v)
                            ? std::string(v < 0 ? "-" : "") + "std::numeric_limits<double>::infinity()"
                            : HexFloat(v, false);
    out += "\n  // " + path + ": fill " + step.fill_target + "\n  " + target + ".fill_(" + value + ");\n";
    return Status::Ok();
  }

  Status Step(size_t i, std::string& out) const {
    const LaunchStep& step = solution_.launches[i];
    std::string path = "launches[" + std::to_string(i) + "]";
    if (step.kind == LaunchStep::Kind::kMemset) {
      std::string var = Var(step.memset_target);
      if (var.empty())
        return Status::InvalidArgument(path + ".memset: unknown tensor \"" + step.memset_target + "\"");
      std::optional<uint8_t> byte = common::MemsetByte(step.memset_value, DTypeOf(step.memset_target));
      if (!byte) return Status::InvalidArgument(path + ".value: not a value a byte fill can write");
      out += "\n  // " + path + ": memset " + step.memset_target + "\n";
      out += "  C10_CUDA_CHECK(cudaMemsetAsync(" + var + ".data_ptr(), " + std::to_string(*byte) + ", " +
             var + ".nbytes(), stream));\n";
      return Status::Ok();
    }
    if (step.kind == LaunchStep::Kind::kOp) return OpStep(step, path, out);
    if (step.kind == LaunchStep::Kind::kView) return ViewStep(step, path, out);
    if (step.kind == LaunchStep::Kind::kFill) return FillStep(step, path, out);
    if (step.kernel.rfind("_Z", 0) == 0)
      return Status::InvalidArgument(path + ".kernel: a mangled symbol; name the kernel as C++ declares it");
    out += "\n  // " + path + ": " + step.kernel + "\n  {\n";
    std::string pointers;
    for (size_t a = 0; a < step.args.size(); ++a) {
      const LaunchArg& arg = step.args[a];
      std::string name = "a" + std::to_string(a), where = path + ".args[" + std::to_string(a) + "]";
      std::string line;
      switch (arg.kind) {
        case LaunchArg::Kind::kTensor: {
          KFORGE_ASSIGN_OR_RETURN(std::string var, TensorArg(arg.text, where));
          line = "void* " + name + " = " + var + ".data_ptr();";
          break;
        }
        case LaunchArg::Kind::kItem: {
          KFORGE_ASSIGN_OR_RETURN(std::string var, TensorArg(arg.text, where));
          KFORGE_ASSIGN_OR_RETURN(std::string index, Expr(arg.index, where));
          line = "uint64_t " + name + " = kf_item(" + var + ", " + index + ", stream, " + CppString(where) +
                 ");  // item:" + arg.text + "[" + arg.index + "]";
          break;
        }
        case LaunchArg::Kind::kF32:
          line = "float " + name + " = " + HexFloat(arg.number, true) + ";  // " + arg.text;
          break;
        case LaunchArg::Kind::kF64:
          line = "double " + name + " = " + HexFloat(arg.number, false) + ";  // " + arg.text;
          break;
        default: {
          const char* type = arg.kind == LaunchArg::Kind::kI32   ? "int32_t"
                             : arg.kind == LaunchArg::Kind::kU32 ? "uint32_t"
                             : arg.kind == LaunchArg::Kind::kI64 ? "int64_t"
                                                                 : "uint64_t";
          KFORGE_ASSIGN_OR_RETURN(std::string value, Expr(arg.text, where));
          line = std::string(type) + " " + name + " = static_cast<" + type + ">(" + value + ");";
        }
      }
      out += "    " + line + "\n";
      pointers += (a ? ", &" : "&") + name;
    }
    out += step.args.empty() ? "    void** args = nullptr;\n" : "    void* args[] = {" + pointers + "};\n";
    for (const char* which : {"grid", "block"}) {
      const std::vector<std::string>& dims = std::string(which) == "grid" ? step.grid : step.block;
      std::string values;
      for (size_t d = 0; d < 3; ++d) {
        std::string where = path + "." + which + "[" + std::to_string(d) + "]";
        KFORGE_ASSIGN_OR_RETURN(std::string value, Expr(dims[d], where));
        values += (d ? ", " : "") + std::string("kf_dim(") + value + ", " + CppString(where) + ")";
      }
      out += std::string("    const dim3 ") + which + "(" + values + ");\n";
    }
    KFORGE_ASSIGN_OR_RETURN(std::string shared, Expr(step.shared_bytes, path + ".shared_bytes"));
    out += "    const size_t shared = static_cast<size_t>(" + shared + ");\n";
    out += "    const void* kernel = kforge_kernel(" + std::to_string(i) + ");\n";
    out += "    if (shared > 48 * 1024)\n";
    out +=
        "      C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, "
        "static_cast<int>(shared)));\n";
    out += "    C10_CUDA_CHECK(cudaLaunchKernel(kernel, grid, block, args, shared, stream));\n  }\n";
    return Status::Ok();
  }

  StatusOr<std::string> KernelTable() const {
    std::string out =
        "\n\n// kforge: the address of the kernel each step of the launch plan runs, for the host code.\n"
        "const void* kforge_kernel(int step) {\n";
    for (const std::string& ns : FileScopeNamespaces(solution_.source))
      out += "  using namespace " + ns + ";\n";
    out += "  switch (step) {\n";
    for (size_t i = 0; i < solution_.launches.size(); ++i) {
      const LaunchStep& step = solution_.launches[i];
      if (step.kind != LaunchStep::Kind::kKernel) continue;
      out +=
          "    case " + std::to_string(i) + ": return reinterpret_cast<const void*>(&" + step.kernel + ");\n";
    }
    out += "    default: return nullptr;\n  }\n}\n";
    return out;
  }

  const common::Solution& solution_;
  const common::Task& task_;
  std::vector<std::pair<std::string, std::string>> vars_;  ///< tensor name -> C++ variable
  std::vector<std::string> symbols_;
};

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

}  // namespace

StatusOr<std::string> TranslateExpr(std::string_view e, const std::vector<std::string>& symbols,
                                    const std::vector<std::pair<std::string, std::string>>& tensor_vars) {
  std::string out;
  bool tensor_next = false;
  bool operand_next = true;  // at the start, after an operator, '(' or ',': a sign is unary
  size_t i = 0;
  auto skip_space = [&] {
    while (i < e.size() && std::isspace(static_cast<unsigned char>(e[i]))) ++i;
  };
  while (skip_space(), i < e.size()) {
    char c = e[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = i;
      while (i < e.size() && std::isdigit(static_cast<unsigned char>(e[i]))) ++i;
      out += "int64_t(" + std::string(e.substr(start, i - start)) + ")";
      operand_next = false;
      continue;
    }
    if (IsIdentStart(c)) {
      size_t start = i;
      while (i < e.size() && IsIdentChar(e[i])) ++i;
      std::string name(e.substr(start, i - start));
      operand_next = false;
      if (tensor_next) {
        auto it = std::find_if(tensor_vars.begin(), tensor_vars.end(),
                               [&](const auto& v) { return v.first == name; });
        if (it == tensor_vars.end()) return Status::InvalidArgument("unknown tensor " + common::Quote(name));
        out += it->second;
        tensor_next = false;
        continue;
      }
      skip_space();
      if (i < e.size() && e[i] == '(') {
        if (name != "numel" && name != "size" && name != "cdiv" && name != "min" && name != "max")
          return Status::InvalidArgument("unknown function " + common::Quote(name));
        out += "kf_" + name + "(";
        tensor_next = name == "numel" || name == "size";
        operand_next = true;
        ++i;
        continue;
      }
      if (std::find(symbols.begin(), symbols.end(), name) == symbols.end())
        return Status::InvalidArgument("unknown symbol " + common::Quote(name));
      out += SymbolVar(name);
      continue;
    }
    if ((c == '+' || c == '-') && operand_next) {
      out += c;
    } else if (std::strchr("+-*/%", c)) {
      out += std::string(" ") + c + " ";
      operand_next = true;
    } else if (c == ',') {
      out += ", ";
      operand_next = true;
    } else if (c == '(') {
      out += c;
      operand_next = true;
    } else if (c == ')') {
      out += c;
      operand_next = false;
    } else {
      return Status::InvalidArgument("unexpected " + common::Quote(std::string(1, c)) + " in " +
                                     common::Quote(e, 60));
    }
    ++i;
  }
  if (out.empty()) return Status::InvalidArgument("empty expression");
  return out;
}

std::vector<std::string> FileScopeNamespaces(std::string_view source) {
  std::vector<std::string_view> tokens = Tokenize(source, CommentStyle::kC);
  std::vector<std::string> found;
  int depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == "{") ++depth;
    if (tokens[i] == "}") depth = std::max(0, depth - 1);
    if (depth != 0 || tokens[i] != "namespace" || i + 1 >= tokens.size() || !IsIdentStart(tokens[i + 1][0]))
      continue;
    std::string name(tokens[i + 1]);
    size_t j = i + 2;
    while (j + 2 < tokens.size() && tokens[j] == ":" && tokens[j + 1] == ":" &&
           IsIdentStart(tokens[j + 2][0])) {
      name += "::" + std::string(tokens[j + 2]);
      j += 3;
    }
    if (j < tokens.size() && tokens[j] == "{" && std::find(found.begin(), found.end(), name) == found.end())
      found.push_back(name);
  }
  return found;
}

StatusOr<HostCode> RenderHostCode(const common::Solution& solution, const common::Task& task) {
  return Writer(solution, task).Run();
}

}  // namespace kforge::exporter::internal
