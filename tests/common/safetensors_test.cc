#include "kforge/common/safetensors.h"

#include <gtest/gtest.h>
#include <cstdint>

#include <cstring>
#include <filesystem>

namespace kforge::common {
namespace {

// Builds a file image from a header text and a data section.
std::string Image(const std::string& header, const std::string& data) {
  std::string out;
  uint64_t len = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  return out + header + data;
}

TEST(SafetensorsTest, RoundTrip) {
  std::map<std::string, SafeTensor> tensors;
  float values[] = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  tensors["a.weight"] = {
      DType::kFloat32, {2, 3}, std::string(reinterpret_cast<char*>(values), sizeof(values))};
  tensors["flag"] = {DType::kBool, {3}, std::string("\x01\x00\x01", 3)};
  tensors["empty"] = {DType::kBFloat16, {0, 4}, ""};
  auto bytes = SerializeSafetensors(tensors, {{"format", "pt"}});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ((bytes->size() - sizeof(values) - 3) % 8, 0u);  // header padded to 8

  std::map<std::string, std::string> metadata;
  auto back = ParseSafetensors(*bytes, &metadata);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(metadata.at("format"), "pt");
  ASSERT_EQ(back->size(), 3u);
  const SafeTensor& a = back->at("a.weight");
  EXPECT_EQ(a.dtype, DType::kFloat32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.numel(), 6);
  float got[6];
  std::memcpy(got, a.data.data(), sizeof(got));
  EXPECT_EQ(got[2], 3.25f);
  EXPECT_EQ(back->at("flag").data, std::string("\x01\x00\x01", 3));
  EXPECT_EQ(back->at("empty").shape, (std::vector<int64_t>{0, 4}));

  auto path =
      std::filesystem::temp_directory_path() / ("kforge_st_" + std::to_string(::getpid()) + ".safetensors");
  ASSERT_TRUE(WriteSafetensors(path, tensors).ok());
  auto read = ReadSafetensors(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->at("a.weight").data, tensors["a.weight"].data);
}

TEST(SafetensorsTest, ReadsTheReferenceLayout) {
  // As written by the Python safetensors package: one F16 tensor of 2 elements.
  std::string img =
      Image(R"({"x":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", std::string("\x00\x3c\x00\x40", 4));
  auto t = ParseSafetensors(img);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->at("x").dtype, DType::kFloat16);
  EXPECT_EQ(t->at("x").data, std::string("\x00\x3c\x00\x40", 4));
}

TEST(SafetensorsTest, RejectsCorruptFiles) {
  struct Case {
    const char* label;
    std::string bytes;
    const char* error;
  };
  std::string huge_len("\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
  const Case cases[] = {
      {"short", "abc", "shorter than"},
      {"huge header length", huge_len + "{}", "exceeds the file"},
      {"header past end", Image("{}", "").substr(0, 9), "exceeds the file"},
      {"not json", Image("{nope", ""), "not JSON"},
      {"not object", Image("[1]", ""), "not a JSON object"},
      {"bad dtype", Image(R"({"x":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}})", "a"),
       "unsupported dtype"},
      {"missing field", Image(R"({"x":{"dtype":"U8","shape":[1]}})", "a"), "expected {dtype"},
      {"extra field", Image(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"z":1}})", "a"),
       "expected {dtype"},
      {"negative dim", Image(R"({"x":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", "a"),
       "non-negative"},
      {"offsets past end", Image(R"({"x":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", "ab"),
       "outside"},
      {"reversed offsets", Image(R"({"x":{"dtype":"U8","shape":[0],"data_offsets":[2,1]}})", "ab"),
       "outside"},
      {"size mismatch", Image(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,2]}})", "ab"), "need 4"},
      {"overflowing shape",
       Image(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,1]}})", "a"),
       "more than"},
      {"overlap",
       Image(
           R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"y":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
           "abc"),
       "overlap or hole"},
      {"hole", Image(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})", "ab"), "overlap or hole"},
      {"trailing", Image(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "ab"), "trailing"},
      {"metadata type", Image(R"({"__metadata__":{"a":1}})", ""), "not a string"},
  };
  for (const Case& c : cases) {
    auto t = ParseSafetensors(c.bytes);
    ASSERT_FALSE(t.ok()) << c.label;
    EXPECT_NE(t.status().message().find(c.error), std::string::npos)
        << c.label << ": " << t.status().message();
  }
}

TEST(SafetensorsTest, WriterRejectsInconsistentTensors) {
  std::map<std::string, SafeTensor> tensors;
  tensors["x"] = {DType::kFloat32, {3}, "abc"};
  EXPECT_FALSE(SerializeSafetensors(tensors).ok());
  EXPECT_EQ(ReadSafetensors("/nonexistent/file.safetensors").status().code(), Status::Code::kNotFound);
}

TEST(SafetensorsTest, DTypeNames) {
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt64,
                  DType::kInt32, DType::kInt8, DType::kUInt8, DType::kBool}) {
    EXPECT_EQ(ParseSafetensorsDType(SafetensorsDTypeName(d)), d);
    EXPECT_EQ(ParseDType(DTypeName(d)), d);
  }
  EXPECT_EQ(ParseSafetensorsDType("float32"), std::nullopt);
}

}  // namespace
}  // namespace kforge::common
