#include "kforge/common/hash.h"

#include <gtest/gtest.h>

#include <string>

namespace kforge::common {
namespace {

TEST(Sha256Test, KnownVectors) {
  struct Case {
    std::string input, hex;
  };
  const Case cases[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1000, 'a'), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"},
  };
  for (const Case& c : cases) EXPECT_EQ(Sha256Hex(c.input), c.hex) << c.input.size();
}

TEST(Sha256Test, PiecesHashLikeTheWhole) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>(i * 7 + 3);
  for (size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 128u, 999u}) {
    Sha256 hash;
    for (size_t at = 0; at < data.size(); at += piece) hash.Update(std::string_view(data).substr(at, piece));
    EXPECT_EQ(hash.HexDigest(), Sha256Hex(data)) << "pieces of " << piece;
  }
  Sha256 empty;
  EXPECT_EQ(empty.HexDigest(), Sha256Hex(""));
}

}  // namespace
}  // namespace kforge::common
