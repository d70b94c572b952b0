// CheckServeOptions: what a warm judge refuses before it listens, without the command line.
#include <gtest/gtest.h>

#include <string>

#include "kforge/verify/judge_server.h"

namespace kforge::verify {
namespace {

TEST(ServeOptionsTest, EachContradictionNamesItsFlag) {
  ServeOptions socket_only;
  socket_only.socket = "/tmp/judge.sock";
  EXPECT_TRUE(CheckServeOptions(socket_only).ok());
  ServeOptions tcp = socket_only;
  tcp.listen = "0";
  tcp.token = "0123456789abcdef";
  tcp.address_file = "/tmp/address";
  EXPECT_TRUE(CheckServeOptions(tcp).ok());

  struct Case {
    const char* name;
    ServeOptions options;
    std::string expect;
  };
  ServeOptions nothing;
  ServeOptions no_token;
  no_token.listen = "127.0.0.1:0";
  ServeOptions address_without_listen = socket_only;
  address_without_listen.address_file = "/tmp/address";
  const Case cases[] = {
      {"nothing to listen on", nothing, "give --socket PATH, --listen HOST:PORT or both"},
      {"listen without a token", no_token,
       "--listen needs --token-file: every TCP client must bring the token"},
      {"address file without listen", address_without_listen, "--address-file needs --listen"},
  };
  for (const Case& c : cases) {
    Status s = CheckServeOptions(c.options);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.name;
    EXPECT_EQ(s.message(), c.expect) << c.name;
  }
}

}  // namespace
}  // namespace kforge::verify
