// Table-driven tests of the source policy and the option allowlist, including preprocessor tricks.
#include "cuda/source_policy.h"

#include <gtest/gtest.h>

#include <string>

namespace kforge::cuda {
namespace {

struct PolicyCase {
  const char* name;
  std::string source;
  bool ok;
  const char* message_part;  // must occur in the rejection message ("" for accepted sources)
};

const std::string kKernel = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n";

std::vector<PolicyCase> Cases() {
  return {
      // Accepted.
      {"plain_kernel", kKernel, true, ""},
      {"allowed_includes",
       "#include <cuda_fp16.h>\n#include \"cuda_bf16.h\"\n#include <cooperative_groups.h>\n"
       "#include <cooperative_groups/reduce.h>\n#include <cub/block/block_reduce.cuh>\n"
       "#include <cuda/std/cstdint>\n#include <cuda/barrier>\n#include <mma.h>\n" +
           kKernel,
       true, ""},
      {"pragma_unroll_define",
       "#define N 4\n#pragma once\n__global__ void f(float* x) {\n#pragma unroll\n"
       "for (int i = 0; i < N; ++i) x[i] = 0; }\n",
       true, ""},
      {"include_with_spaces_and_comment", "  #  include /* c */ <cuda_fp16.h> // trailing\n", true, ""},
      {"digraph_include_allowed", "%:include <cuda_fp16.h>\n", true, ""},
      {"spliced_directive_allowed", "#inc\\\nlude <cuda_fp16.h>\n", true, ""},
      {"has_include_allowed", "#if __has_include(<cuda_fp8.h>)\n#endif\n", true, ""},
      {"ifdef_chain", "#ifdef X\n#elif defined(Y)\n#else\n#endif\n#undef X\n", true, ""},
      {"string_with_hash", "const char* s = \"\\n#include </etc/passwd>\";\n", true, ""},
      {"raw_string_with_comment_end", "const char* s = R\"x(*/ #include </etc/passwd> )x\";\n", true, ""},
      {"raw_string_hides_nothing", "auto s = R\"(/*)\";\n#include <cuda_fp16.h>\n", true, ""},
      {"comment_hides_include", "// #include </etc/passwd>\n/* #include \"../x\" */\n", true, ""},
      {"digit_separator", "int x = 1'000'000; #define Y 'a'\n", true, ""},
      {"char_literals", "char a = '\"', b = '\\'';\n", true, ""},
      {"stringize", "#define S(x) #x\nconst char* s = S(hi);\n", true, ""},
      {"pragma_operator_unroll", "_Pragma(\"unroll\") for(;;){}\n", true, ""},
      {"utf8_comment", "// caf\xC3\xA9 \xE2\x88\x91\n", true, ""},
      {"crlf", "#include <cuda_fp16.h>\r\nint x;\r\n", true, ""},
      {"nv_diag", "#pragma nv_diag_suppress 177\n#pragma GCC diagnostic push\n", true, ""},

      // Header names.
      {"etc_passwd", "#include </etc/passwd>\n", false, "\"/etc/passwd\" is not allowed"},
      {"quoted_abs", "#include \"/etc/passwd\"\n", false, "is not allowed"},
      {"dotdot", "#include \"../x\"\n", false, "\"../x\" is not allowed"},
      {"dotdot_inside_prefix", "#include <cuda/../../../etc/passwd>\n", false, "is not allowed"},
      {"dot_component", "#include <cub/./x.cuh>\n", false, "is not allowed"},
      {"backslash_path", "#include <cub\\..\\x>\n", false, "not allowed"},
      {"c_and_cxx_library_headers",
       "#include <stdio.h>\n#include <math.h>\n#include <cfloat>\n#include <cstdint>\n#include <limits>\n"
       "#include <algorithm>\n#include <cuda.h>\n#include <vector>\n",
       true, ""},
      {"host_only_headers",
       "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n"
       "#include <c10/cuda/CUDAGuard.h>\n#include <pybind11/pybind11.h>\n",
       true, ""},
      {"host_header_dotdot", "#include <torch/../../etc/passwd>\n", false, "is not allowed"},
      {"torch_alone", "#include <torch/>\n", false, "is not allowed"},
      {"libstdcxx_internals", "#include <bits/stdc++.h>\n", false, "is not allowed"},
      {"thrust", "#include <thrust/complex.h>\n", false, "is not allowed"},
      {"cuda_prefix_alone", "#include <cuda/>\n", false, "is not allowed"},
      {"local_header", "#include \"kernel.cuh\"\n", false, "is not allowed"},
      {"computed_include", "#define H </etc/passwd>\n#include H\n", false, "must name a header directly"},
      {"computed_include_string", "#define H \"x\"\n#include H\n", false, "must name a header directly"},
      {"include_trailing_tokens", "#include <cuda_fp16.h> <x>\n", false, "unexpected tokens"},
      {"unterminated_header", "#include <cuda_fp16.h\n", false, "unterminated header name"},
      {"comment_in_header_name", "#include </*x*/etc/passwd>\n", false, "is not allowed"},
      {"long_name_truncated", "#include <" + std::string(300, 'a') + ">\n", false, "..."},

      // Directive spellings.
      {"splice_in_name", "#inc\\\nlude </etc/passwd>\n", false, "\"/etc/passwd\""},
      {"splice_after_hash", "#\\\ninclude </etc/passwd>\n", false, "\"/etc/passwd\""},
      {"splice_in_header", "#include </etc/pa\\\nsswd>\n", false, "\"/etc/passwd\""},
      {"crlf_splice", "#inc\\\r\nlude </etc/passwd>\r\n", false, "\"/etc/passwd\""},
      {"digraph", "%:include </etc/passwd>\n", false, "\"/etc/passwd\""},
      {"digraph_spliced", "%\\\n:include </etc/passwd>\n", false, "\"/etc/passwd\""},
      {"comment_between_hash_and_name", "#/* x */include </etc/passwd>\n", false, "\"/etc/passwd\""},
      {"multiline_comment_before_hash", "/* a\n b */ #include </etc/passwd>\n", false, "\"/etc/passwd\""},
      {"code_then_comment_newline", "int a; /*\n*/ #include </etc/passwd>\n", false, "\"/etc/passwd\""},
      {"line_comment_spliced", "// hidden \\\n#include </etc/passwd>\n", true, ""},
      {"include_after_spliced_comment", "// c \\\nx\n#include </etc/passwd>\n", false, "\"/etc/passwd\""},
      {"include_next", "#include_next <cuda_fp16.h>\n", false, "#include_next is not allowed"},
      {"import", "#import <cuda_fp16.h>\n", false, "#import is not allowed"},
      {"embed", "#embed </etc/passwd>\n", false, "#embed is not allowed"},
      {"line", "#line 1 \"/etc/passwd\"\n", false, "#line is not allowed"},
      {"line_marker", "# 1 \"/etc/passwd\"\n", false, "is not an allowed directive"},
      {"ident", "#ident \"x\"\n", false, "#ident is not allowed"},
      {"include_in_if0", "#if 0\n#include </etc/passwd>\n#endif\n", false, "\"/etc/passwd\""},

      // Operators and pragmas.
      {"has_include_passwd", "#if __has_include(</etc/passwd>)\n#endif\n", false, "__has_include of"},
      {"has_include_macro", "#define H </etc/passwd>\n#if __has_include(H)\n#endif\n", false,
       "__has_include must name"},
      {"has_include_alias", "#define HI __has_include\n", false, "__has_include must name"},
      {"has_include_next", "#if __has_include_next(<cuda_fp16.h>)\n#endif\n", false, "__has_include_next"},
      {"token_paste", "#define P(a, b) a##b\n", false, "token pasting"},
      {"token_paste_digraph", "#define P(a, b) a%:%:b\n", false, "token pasting"},
      {"pragma_gcc_dependency", "#pragma GCC dependency \"/etc/passwd\"\n", false, "#pragma GCC dependency"},
      {"pragma_include_alias", "#pragma include_alias(\"cuda_fp16.h\", \"/etc/passwd\")\n", false,
       "#pragma include_alias"},
      {"pragma_operator_alias", "_Pragma(\"include_alias(<a>, </etc/passwd>)\")\n", false,
       "#pragma include_alias"},
      {"pragma_operator_stringized", "#define P(x) _Pragma(#x)\n", false, "_Pragma must take"},
      {"pragma_operator_raw", "_Pragma(R\"(unroll)\")\n", false, "_Pragma must take"},
      {"ms_pragma", "__pragma(once)\n", false, "__pragma is not allowed"},

      // Lexical traps.
      {"splice_in_raw_string", "auto s = R\"x(a)x\\\n\";\n#include </etc/passwd>\n", false, "raw string"},
      {"bad_raw_delimiter", "auto s = R\"a b(x)a b\";\n", false, "raw string delimiter"},
      {"unterminated_raw", "auto s = R\"x(abc\n", false, "unterminated raw string"},
      {"unterminated_string", "const char* s = \"abc\n#include </etc/passwd>\n", false,
       "unterminated literal"},
      {"unterminated_comment", "/* never closed\n", false, "unterminated /* comment"},
      {"ucn_in_directive", "#incl\\u0075de </etc/passwd>\n", false, "backslash outside a literal"},
      {"backslash_space_newline", "// a \\ \n#include </etc/passwd>\n", false,
       "backslash followed by whitespace"},
      {"lone_cr", "int a;\r#include </etc/passwd>\n", false, "carriage return"},
      {"trigraph", "?\?=include </etc/passwd>\n", false, "trigraph"},
      {"backslash_eof", "int a; \\", false, "backslash at end of file"},

      // Bytes.
      {"nul", std::string("int a;\0int b;", 13), false, "NUL byte"},
      {"control", "int a;\x01\n", false, "control character"},
      {"del", "int a;\x7f\n", false, "control character"},
      {"bad_utf8", "// \xFF\xFE\n", false, "not valid UTF-8"},
      {"overlong_utf8", "// \xC0\xAF\n", false, "not valid UTF-8"},
      {"truncated_utf8", "// \xE2\x88", false, "not valid UTF-8"},
      {"surrogate", "// \xED\xA0\x80\n", false, "not valid UTF-8"},
      {"bidi_override", "// \xE2\x80\xAE\n", false, "bidirectional"},
      {"too_large", std::string(kMaxSourceBytes + 1, ' '), false, "the limit is 262144"},
  };
}

class SourcePolicyTest : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(SourcePolicyTest, Decides) {
  const PolicyCase& c = GetParam();
  const Status s = CheckSourcePolicy(c.source);
  EXPECT_EQ(s.ok(), c.ok) << s.ToString();
  if (!c.ok) {
    EXPECT_NE(s.message().find(c.message_part), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos);
    EXPECT_LE(s.message().size(), 200u);
  }
}

INSTANTIATE_TEST_SUITE_P(Table, SourcePolicyTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SourcePolicy, MessageNamesLine) {
  const Status s = CheckSourcePolicy("int a;\n\n#include <thrust/complex.h>\n");
  EXPECT_EQ(s.message().substr(0, 7), "line 3:");
}

TEST(SourcePolicy, MessageDoesNotEchoOtherContent) {
  const Status s = CheckSourcePolicy("// SECRET_TOKEN\n#include <thrust/complex.h>\n");
  EXPECT_EQ(s.message().find("SECRET"), std::string::npos);
}

TEST(SourcePolicy, ListsTheHeadersNamed) {
  std::vector<std::string> headers;
  const Status s = CheckSourcePolicy(
      "#include <math.h>\n#include \"cuda_fp16.h\"\n#if __has_include(<cstdint>)\n#endif\n#include <math.h>\n"
      "// #include <vector>\n",
      &headers);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(headers, (std::vector<std::string>{"math.h", "cuda_fp16.h", "cstdint"}));
}

TEST(HeaderAllowlist, Table) {
  for (const char* h : {"cuda_fp16.h", "cuda/std/cstdint", "cub/warp/warp_reduce.cuh", "nv/target",
                        "cooperative_groups/memcpy_async.h", "stdint.h", "cmath", "torch/extension.h",
                        "ATen/ATen.h", "vector"}) {
    EXPECT_TRUE(IsAllowedHeader(h)) << h;
  }
  for (const char* h : {"", "/cuda_fp16.h", "cuda_fp16.h/", "cuda//std", "cub/.hidden", "stdint.hpp",
                        "cooperative_groups/details/helpers.h", "cuda/std/../../x", "cuda_fp16.h ", "torch/",
                        "torch/../x", "bits/stdc++.h", "crt/mma.hpp", "mma.hpp"}) {
    EXPECT_FALSE(IsAllowedHeader(h)) << h;
  }
}

struct OptionsCase {
  std::vector<std::string> options;
  bool ok;
};

class CompileOptionsTest : public ::testing::TestWithParam<OptionsCase> {};

TEST_P(CompileOptionsTest, Decides) {
  const Status s = CheckCompileOptions(GetParam().options);
  EXPECT_EQ(s.ok(), GetParam().ok) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(
    Table, CompileOptionsTest,
    ::testing::Values(
        OptionsCase{{}, true},
        OptionsCase{{"--use_fast_math", "--ftz=true", "--prec-div=false", "--prec-sqrt=true", "--fmad=false",
                     "--extra-device-vectorization", "-default-device", "--maxrregcount=64", "--std=c++20",
                     "-lineinfo", "-DBLOCK=256", "-DUSE_X", "-DSCALE=1.5e-3", "-DEMPTY="},
                    true},
        OptionsCase{{"-use_fast_math", "-maxrregcount=128", "-std=c++17"}, true},
        OptionsCase{{"-I/etc"}, false}, OptionsCase{{"--include-path=/etc"}, false},
        OptionsCase{{"-include", "/etc/passwd"}, false}, OptionsCase{{"--pre-include=/etc/passwd"}, false},
        OptionsCase{{"--ftz=maybe"}, false}, OptionsCase{{"--maxrregcount=abc"}, false},
        OptionsCase{{"--maxrregcount=100000"}, false}, OptionsCase{{"--std=c++03"}, false},
        OptionsCase{{"-std", "c++17"}, false}, OptionsCase{{"-D__has_include=1"}, false},
        OptionsCase{{"-D_Pragma=x"}, false}, OptionsCase{{"-DX=</etc/passwd>"}, false},
        OptionsCase{{"-DX=\"a\""}, false}, OptionsCase{{"-D1X"}, false}, OptionsCase{{"-D"}, false},
        OptionsCase{{"--fdevice-time-trace=/tmp/x"}, false}, OptionsCase{{"--time=/tmp/x"}, false},
        OptionsCase{{"--create-pch=/tmp/x"}, false}, OptionsCase{{"-arch=sm_80"}, false},
        OptionsCase{{"--use_fast_math "}, false}, OptionsCase{{""}, false},
        OptionsCase{{"--ftz=true", "--ftz=false"}, false},
        OptionsCase{{"-use_fast_math", "--use_fast_math"}, false}, OptionsCase{{"-DX=1", "-DX=2"}, false},
        OptionsCase{{"-DX", "-DY"}, true}, OptionsCase{{"-std=c++17", "--std=c++20"}, false}));

TEST(CompileOptions, MessageNamesIndex) {
  const Status s = CheckCompileOptions({"--use_fast_math", "-I/etc"});
  EXPECT_EQ(s.message(), "options[1]: \"-I/etc\" is not an allowed NVRTC option");
}

}  // namespace
}  // namespace kforge::cuda
