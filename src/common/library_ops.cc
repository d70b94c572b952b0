// The allowlist of library ops.
#include "kforge/common/library_ops.h"

#include <cctype>

#include "kforge/common/json_fields.h"

namespace kforge::common {
namespace {

using K = OpAttrKind;

const std::vector<OpAttr> kConv = {
    {"stride", K::kInts}, {"padding", K::kInts}, {"dilation", K::kInts}, {"groups", K::kInt}};
const std::vector<OpAttr> kConvT = {{"stride", K::kInts},
                                    {"padding", K::kInts},
                                    {"output_padding", K::kInts},
                                    {"groups", K::kInt},
                                    {"dilation", K::kInts}};
const std::vector<OpAttr> kReduce = {{"dim", K::kInts}, {"keepdim", K::kBool}};

}  // namespace

const std::vector<LibraryOp>& LibraryOps() {
  static const std::vector<LibraryOp> ops = {
      {"matmul", 2, 2, {}, "torch.matmul(a, b)"},
      {"mm", 2, 2, {}, "torch.mm(a, b)"},
      {"bmm", 2, 2, {}, "torch.bmm(a, b)"},
      {"addmm", 3, 3, {{"beta", K::kNumber}, {"alpha", K::kNumber}}, "torch.addmm(bias, a, b, beta, alpha)"},
      {"linear", 2, 3, {}, "F.linear(x, weight[, bias])"},
      {"conv1d", 2, 3, kConv, "F.conv1d(x, weight[, bias], stride, padding, dilation, groups)"},
      {"conv2d", 2, 3, kConv, "F.conv2d(x, weight[, bias], stride, padding, dilation, groups)"},
      {"conv3d", 2, 3, kConv, "F.conv3d(x, weight[, bias], stride, padding, dilation, groups)"},
      {"conv_transpose1d", 2, 3, kConvT, "F.conv_transpose1d(x, weight[, bias], ...)"},
      {"conv_transpose2d", 2, 3, kConvT, "F.conv_transpose2d(x, weight[, bias], ...)"},
      {"conv_transpose3d", 2, 3, kConvT, "F.conv_transpose3d(x, weight[, bias], ...)"},
      {"sum", 1, 1, kReduce, "torch.sum(x, dim, keepdim)"},
      {"mean", 1, 1, kReduce, "torch.mean(x, dim, keepdim)"},
      {"amax", 1, 1, kReduce, "torch.amax(x, dim, keepdim)"},
      {"amin", 1, 1, kReduce, "torch.amin(x, dim, keepdim)"},
      {"softmax", 1, 1, {{"dim", K::kInt}}, "torch.softmax(x, dim)"},
      {"log_softmax", 1, 1, {{"dim", K::kInt}}, "torch.log_softmax(x, dim)"},
      {"layer_norm",
       1,
       3,
       {{"normalized_shape", K::kInts}, {"eps", K::kNumber}},
       "F.layer_norm(x, normalized_shape[, weight, bias], eps)"},
      {"group_norm",
       1,
       3,
       {{"num_groups", K::kInt}, {"eps", K::kNumber}},
       "F.group_norm(x, num_groups[, weight, bias], eps)"},
      {"batch_norm",
       5,
       5,
       {{"eps", K::kNumber}},
       "F.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps) (inference)"},
      {"add", 2, 2, {{"alpha", K::kNumber}}, "torch.add(a, b, alpha)"},
      {"sub", 2, 2, {{"alpha", K::kNumber}}, "torch.sub(a, b, alpha)"},
      {"mul", 2, 2, {}, "torch.mul(a, b)"},
      {"div", 2, 2, {}, "torch.div(a, b)"},
      {"relu", 1, 1, {}, "torch.relu(x)"},
      {"gelu", 1, 1, {}, "F.gelu(x) (exact)"},
      {"sigmoid", 1, 1, {}, "torch.sigmoid(x)"},
      {"tanh", 1, 1, {}, "torch.tanh(x)"},
      {"exp", 1, 1, {}, "torch.exp(x)"},
      {"cat", 1, -1, {{"dim", K::kInt}}, "torch.cat([tensors...], dim)"},
      {"stack", 1, -1, {{"dim", K::kInt}}, "torch.stack([tensors...], dim)"},
      {"copy", 1, 1, {}, "out.copy_(x) (dtype conversion included)"},
  };
  return ops;
}

bool IsAtenOpName(std::string_view name) {
  constexpr std::string_view kPrefix = "aten::";
  if (name.substr(0, kPrefix.size()) != kPrefix || name.size() > kPrefix.size() + 96) return false;
  std::string_view rest = name.substr(kPrefix.size());
  auto identifier = [](std::string_view part) {
    if (part.empty() || std::isdigit(static_cast<unsigned char>(part[0]))) return false;
    for (char c : part)
      if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
            c == '_'))
        return false;
    return true;
  };
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return identifier(rest);
  return identifier(rest.substr(0, dot)) && identifier(rest.substr(dot + 1));
}

Status CheckAtenOpAttrs(const nlohmann::json& attrs, const std::string& path) {
  if (!attrs.is_object()) return Status::InvalidArgument(path + ": expected an object");
  if (attrs.size() > 16) return Status::InvalidArgument(path + ": more than 16 attributes");
  for (const auto& [key, value] : attrs.items()) {
    bool name_ok = !key.empty() && key.size() <= 64 && !std::isdigit(static_cast<unsigned char>(key[0]));
    for (char c : key) name_ok = name_ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!name_ok) return Status::InvalidArgument(path + ": " + KeyText(key) + " is not an argument name");
    bool ok = value.is_number() || value.is_boolean();
    if (value.is_array() && !value.empty() && value.size() <= 8) {
      ok = true;
      for (const auto& v : value) ok = ok && v.is_number_integer();
    }
    if (!ok)
      return Status::InvalidArgument(
          path + "." + key + ": expected an integer, a list of up to 8 integers, a number or a boolean");
  }
  return Status::Ok();
}

const LibraryOp* FindLibraryOp(std::string_view name) {
  for (const LibraryOp& op : LibraryOps())
    if (op.name == name) return &op;
  return nullptr;
}

Status CheckOpAttrs(const LibraryOp& op, const nlohmann::json& attrs, const std::string& path) {
  if (!attrs.is_object()) return Status::InvalidArgument(path + ": expected an object");
  for (const auto& [key, value] : attrs.items()) {
    const OpAttr* attr = nullptr;
    for (const OpAttr& a : op.attrs)
      if (a.name == key) attr = &a;
    if (!attr) {
      std::string known;
      for (const OpAttr& a : op.attrs) known += (known.empty() ? "" : ", ") + std::string(a.name);
      return Status::InvalidArgument(path + "." + KeyText(key) + ": " + std::string(op.name) + " takes " +
                                     (known.empty() ? "no attributes" : known));
    }
    bool ok = false;
    switch (attr->kind) {
      case K::kInt:
        ok = value.is_number_integer();
        break;
      case K::kNumber:
        ok = value.is_number();
        break;
      case K::kBool:
        ok = value.is_boolean();
        break;
      case K::kInts:
        ok = value.is_number_integer();
        if (value.is_array() && !value.empty() && value.size() <= 8) {
          ok = true;
          for (const auto& v : value) ok = ok && v.is_number_integer();
        }
        break;
    }
    if (!ok) return Status::InvalidArgument(path + "." + std::string(key) + ": wrong kind of value");
  }
  return Status::Ok();
}

std::string_view LibraryOpsShare(double ops_fraction) {
  return ops_fraction > kMostlyLibraryOps ? "most_time" : "some_time";
}

}  // namespace kforge::common
