// The shim headers. C library headers get their macros and typedefs (the CUDA math functions,
// printf, malloc, memcpy and assert are NVRTC builtins); C++ headers bring the same names into
// std. Everything here is cheap to compile except <limits>, <type_traits> and <utility>, which
// alias libcu++ (cuda::std) and cost what it costs.
#include "cuda/header_shims.h"

#include <algorithm>
#include <array>

namespace kforge::cuda::internal {
namespace {

constexpr std::string_view kHostCode = "not needed: host code is not part of a solution";
constexpr std::string_view kHostLibrary = "a host-only C++ library header; nothing in it runs on the GPU";

constexpr std::string_view kMathH = R"h(// kforge: <math.h> for NVRTC (the CUDA math functions are builtins)
#pragma once
#ifndef INFINITY
#define INFINITY __builtin_bit_cast(float, 0x7f800000u)
#endif
#ifndef NAN
#define NAN __builtin_bit_cast(float, 0x7fc00000u)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF INFINITY
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __builtin_bit_cast(double, 0x7ff0000000000000ull)
#endif
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
)h";

constexpr std::string_view kCmath = R"h(// kforge: <cmath> for NVRTC
#pragma once
#include <math.h>
namespace std {
using ::abs; using ::fabs; using ::fmod; using ::remainder; using ::remquo; using ::fma; using ::fmax;
using ::fmin; using ::fdim; using ::exp; using ::exp2; using ::expm1; using ::log; using ::log10;
using ::log2; using ::log1p; using ::pow; using ::sqrt; using ::cbrt; using ::hypot; using ::sin;
using ::cos; using ::tan; using ::asin; using ::acos; using ::atan; using ::atan2; using ::sinh;
using ::cosh; using ::tanh; using ::asinh; using ::acosh; using ::atanh; using ::erf; using ::erfc;
using ::tgamma; using ::lgamma; using ::ceil; using ::floor; using ::trunc; using ::round;
using ::lround; using ::llround; using ::nearbyint; using ::rint; using ::lrint; using ::llrint;
using ::frexp; using ::ldexp; using ::modf; using ::scalbn; using ::scalbln; using ::ilogb;
using ::logb; using ::nextafter; using ::copysign; using ::nan; using ::isfinite; using ::isinf;
using ::isnan; using ::signbit;
}
)h";

constexpr std::string_view kFloatH = R"h(// kforge: <float.h> for NVRTC
#pragma once
#define FLT_RADIX 2
#define FLT_MANT_DIG 24
#define DBL_MANT_DIG 53
#define FLT_DIG 6
#define DBL_DIG 15
#define FLT_DECIMAL_DIG 9
#define DBL_DECIMAL_DIG 17
#define DECIMAL_DIG 17
#define FLT_MIN_EXP (-125)
#define DBL_MIN_EXP (-1021)
#define FLT_MIN_10_EXP (-37)
#define DBL_MIN_10_EXP (-307)
#define FLT_MAX_EXP 128
#define DBL_MAX_EXP 1024
#define FLT_MAX_10_EXP 38
#define DBL_MAX_10_EXP 308
#define FLT_MAX 3.40282346638528859811704183484516925e+38F
#define DBL_MAX 1.79769313486231570814527423731704357e+308
#define FLT_EPSILON 1.19209289550781250000000000000000000e-7F
#define DBL_EPSILON 2.22044604925031308084726333618164062e-16
#define FLT_MIN 1.17549435082228750796873653722224568e-38F
#define DBL_MIN 2.22507385850720138309023271733240406e-308
#define FLT_TRUE_MIN 1.40129846432481707092372958328991613e-45F
#define DBL_TRUE_MIN 4.94065645841246544176568792868221372e-324
#define FLT_EVAL_METHOD 0
#define FLT_ROUNDS 1
)h";

constexpr std::string_view kCfloat = "// kforge: <cfloat> for NVRTC\n#pragma once\n#include <float.h>\n";

// libcu++ defines the C typedefs and macros in the global namespace under NVRTC.
constexpr std::string_view kStdintH =
    "// kforge: <stdint.h> for NVRTC\n#pragma once\n#include <cuda/std/cstdint>\n";

constexpr std::string_view kCstdint = R"h(// kforge: <cstdint> for NVRTC
#pragma once
#include <stdint.h>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::int_least8_t; using ::int_least16_t; using ::int_least32_t; using ::int_least64_t;
using ::uint_least8_t; using ::uint_least16_t; using ::uint_least32_t; using ::uint_least64_t;
using ::int_fast8_t; using ::int_fast16_t; using ::int_fast32_t; using ::int_fast64_t;
using ::uint_fast8_t; using ::uint_fast16_t; using ::uint_fast32_t; using ::uint_fast64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t;
}
)h";

constexpr std::string_view kLimitsH =
    "// kforge: <limits.h> for NVRTC\n#pragma once\n#include <cuda/std/climits>\n";
constexpr std::string_view kClimits = "// kforge: <climits> for NVRTC\n#pragma once\n#include <limits.h>\n";

// size_t, ptrdiff_t and NULL are NVRTC builtins; __INTADDR__ is the front end's constant address.
constexpr std::string_view kStddefH = R"h(// kforge: <stddef.h> for NVRTC
#pragma once
#ifndef offsetof
#define offsetof(type, member) ((::size_t)__INTADDR__(&(((type*)0)->member)))
#endif
)h";

constexpr std::string_view kCstddef = R"h(// kforge: <cstddef> for NVRTC
#pragma once
#include <stddef.h>
namespace std {
using ::size_t;
using ::ptrdiff_t;
using nullptr_t = decltype(nullptr);
}
)h";

constexpr std::string_view kStdioH = "// kforge: <stdio.h> for NVRTC (printf is a builtin)\n#pragma once\n";
constexpr std::string_view kCstdio =
    "// kforge: <cstdio> for NVRTC\n#pragma once\n#include <stdio.h>\nnamespace std {\nusing ::printf;\n}\n";
constexpr std::string_view kStdlibH =
    "// kforge: <stdlib.h> for NVRTC (malloc, free and abs are builtins)\n#pragma once\n";
constexpr std::string_view kCstdlib = R"h(// kforge: <cstdlib> for NVRTC
#pragma once
#include <stdlib.h>
namespace std {
using ::abs; using ::labs; using ::llabs; using ::malloc; using ::free;
}
)h";
constexpr std::string_view kStringH =
    "// kforge: <string.h> for NVRTC (memcpy and memset are builtins)\n#pragma once\n";
constexpr std::string_view kCstring = R"h(// kforge: <cstring> for NVRTC
#pragma once
#include <string.h>
namespace std {
using ::memcpy; using ::memset;
}
)h";
constexpr std::string_view kAssertH = "// kforge: <assert.h> for NVRTC (assert is a builtin)\n#pragma once\n";
constexpr std::string_view kCassert = "// kforge: <cassert> for NVRTC\n#pragma once\n#include <assert.h>\n";

// What kernels take from <algorithm>; libcu++'s own versions cost seconds of compile time.
constexpr std::string_view kAlgorithm = R"h(// kforge: <algorithm> for NVRTC: min, max, clamp
#pragma once
namespace std {
template <class T>
__host__ __device__ constexpr const T& min(const T& a, const T& b) { return b < a ? b : a; }
template <class T, class Compare>
__host__ __device__ constexpr const T& min(const T& a, const T& b, Compare comp) { return comp(b, a) ? b : a; }
template <class T>
__host__ __device__ constexpr const T& max(const T& a, const T& b) { return a < b ? b : a; }
template <class T, class Compare>
__host__ __device__ constexpr const T& max(const T& a, const T& b, Compare comp) { return comp(a, b) ? b : a; }
template <class T>
__host__ __device__ constexpr const T& clamp(const T& v, const T& lo, const T& hi) {
  return v < lo ? lo : hi < v ? hi : v;
}
}
)h";

constexpr std::string_view kLimits = R"h(// kforge: <limits> for NVRTC (libcu++)
#pragma once
#include <cuda/std/limits>
namespace std {
using cuda::std::numeric_limits;
}
)h";

constexpr std::string_view kTypeTraits = R"h(// kforge: <type_traits> for NVRTC (libcu++)
#pragma once
#include <cuda/std/type_traits>
namespace std {
using cuda::std::integral_constant; using cuda::std::bool_constant; using cuda::std::true_type;
using cuda::std::false_type; using cuda::std::enable_if; using cuda::std::enable_if_t;
using cuda::std::conditional; using cuda::std::conditional_t; using cuda::std::is_same;
using cuda::std::is_same_v; using cuda::std::is_void; using cuda::std::is_void_v;
using cuda::std::is_integral; using cuda::std::is_integral_v; using cuda::std::is_floating_point;
using cuda::std::is_floating_point_v; using cuda::std::is_arithmetic; using cuda::std::is_arithmetic_v;
using cuda::std::is_signed; using cuda::std::is_signed_v; using cuda::std::is_unsigned;
using cuda::std::is_unsigned_v; using cuda::std::is_pointer; using cuda::std::is_pointer_v;
using cuda::std::is_reference; using cuda::std::is_reference_v; using cuda::std::is_const;
using cuda::std::is_const_v; using cuda::std::is_trivially_copyable;
using cuda::std::is_trivially_copyable_v; using cuda::std::is_convertible; using cuda::std::is_convertible_v;
using cuda::std::is_base_of; using cuda::std::is_base_of_v; using cuda::std::remove_cv;
using cuda::std::remove_cv_t; using cuda::std::remove_const; using cuda::std::remove_const_t;
using cuda::std::remove_reference; using cuda::std::remove_reference_t; using cuda::std::remove_pointer;
using cuda::std::remove_pointer_t; using cuda::std::add_const; using cuda::std::add_const_t;
using cuda::std::add_pointer; using cuda::std::add_pointer_t; using cuda::std::decay; using cuda::std::decay_t;
using cuda::std::common_type; using cuda::std::common_type_t; using cuda::std::make_signed;
using cuda::std::make_signed_t; using cuda::std::make_unsigned; using cuda::std::make_unsigned_t;
using cuda::std::underlying_type; using cuda::std::underlying_type_t; using cuda::std::void_t;
using cuda::std::declval;
}
)h";

// std::move and std::forward are NVRTC builtins.
constexpr std::string_view kUtility = R"h(// kforge: <utility> for NVRTC (libcu++)
#pragma once
#include <cuda/std/utility>
namespace std {
using cuda::std::swap; using cuda::std::exchange; using cuda::std::declval; using cuda::std::pair;
using cuda::std::make_pair; using cuda::std::integer_sequence; using cuda::std::index_sequence;
using cuda::std::make_index_sequence;
}
)h";

// The driver API is host code (NVRTC refuses its declarations); kernels take only its types.
constexpr std::string_view kCudaH =
    R"h(// kforge: <cuda.h> for NVRTC: the runtime header and the driver API's device-side types
#pragma once
#include <cuda_runtime.h>
typedef unsigned long long CUdeviceptr;
typedef struct CUtensorMap_st {
  alignas(64) unsigned long long opaque[16];
} CUtensorMap;
)h";

// One header a line.
// clang-format off
constexpr std::array<HeaderShim, 52> kHeaderShims = {{
    {"math.h", kMathH, "", ""},
    {"cmath", kCmath, "math.h", ""},
    {"float.h", kFloatH, "", ""},
    {"cfloat", kCfloat, "float.h", ""},
    {"stdint.h", kStdintH, "", ""},
    {"cstdint", kCstdint, "stdint.h", ""},
    {"limits.h", kLimitsH, "", ""},
    {"climits", kClimits, "limits.h", ""},
    {"stddef.h", kStddefH, "", ""},
    {"cstddef", kCstddef, "stddef.h", ""},
    {"stdio.h", kStdioH, "", ""},
    {"cstdio", kCstdio, "stdio.h", ""},
    {"stdlib.h", kStdlibH, "", ""},
    {"cstdlib", kCstdlib, "stdlib.h", ""},
    {"string.h", kStringH, "", ""},
    {"cstring", kCstring, "string.h", ""},
    {"assert.h", kAssertH, "", ""},
    {"cassert", kCassert, "assert.h", ""},
    {"algorithm", kAlgorithm, "", ""},
    {"limits", kLimits, "", ""},
    {"type_traits", kTypeTraits, "", ""},
    {"utility", kUtility, "", ""},
    {"cuda.h", kCudaH, "", ""},
    {"torch/", "", "", kHostCode},
    {"ATen/", "", "", kHostCode},
    {"c10/", "", "", kHostCode},
    {"pybind11/", "", "", kHostCode},
    {"Python.h", "", "", kHostCode},
    {"vector", "", "", kHostLibrary},
    {"string", "", "", kHostLibrary},
    {"iostream", "", "", kHostLibrary},
    {"sstream", "", "", kHostLibrary},
    {"fstream", "", "", kHostLibrary},
    {"iomanip", "", "", kHostLibrary},
    {"map", "", "", kHostLibrary},
    {"unordered_map", "", "", kHostLibrary},
    {"set", "", "", kHostLibrary},
    {"unordered_set", "", "", kHostLibrary},
    {"list", "", "", kHostLibrary},
    {"deque", "", "", kHostLibrary},
    {"queue", "", "", kHostLibrary},
    {"stack", "", "", kHostLibrary},
    {"memory", "", "", kHostLibrary},
    {"chrono", "", "", kHostLibrary},
    {"thread", "", "", kHostLibrary},
    {"mutex", "", "", kHostLibrary},
    {"random", "", "", kHostLibrary},
    {"stdexcept", "", "", kHostLibrary},
    {"exception", "", "", kHostLibrary},
    {"functional", "", "", kHostLibrary},
    {"numeric", "", "", kHostLibrary},
    {"iterator", "", "", kHostLibrary},
}};
// clang-format on

}  // namespace

const HeaderShim* FindHeaderShim(std::string_view header) {
  for (const HeaderShim& shim : kHeaderShims) {
    const bool match = shim.name.back() == '/' ? header.size() > shim.name.size() &&
                                                     header.substr(0, shim.name.size()) == shim.name
                                               : header == shim.name;
    if (match) return &shim;
  }
  return nullptr;
}

std::vector<InMemoryHeader> ShimsFor(const std::vector<std::string>& headers,
                                     std::vector<std::string>* warnings) {
  std::vector<InMemoryHeader> out;
  auto added = [&out](std::string_view name) {
    return std::any_of(out.begin(), out.end(), [&](const InMemoryHeader& h) { return h.name == name; });
  };
  for (const std::string& header : headers) {
    const HeaderShim* shim = FindHeaderShim(header);
    if (shim == nullptr || added(header)) continue;
    out.push_back({header, std::string(shim->text)});
    if (!shim->dropped_because.empty()) {
      warnings->push_back("#include <" + header + "> dropped: " + std::string(shim->dropped_because));
    }
    // A shim needs at most one other, which needs none.
    if (!shim->needs.empty() && !added(shim->needs)) {
      out.push_back({std::string(shim->needs), std::string(FindHeaderShim(shim->needs)->text)});
    }
  }
  return out;
}

}  // namespace kforge::cuda::internal
