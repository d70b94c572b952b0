// kforge-nvrtc: the process NVRTC compiles run in (see src/cuda/nvrtc_helper.h). Started by
// kforge with a socket on fd 3: kforge-nvrtc DIR MEMORY_LIMIT_BYTES.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda/nvrtc_helper.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: kforge-nvrtc DIR MEMORY_LIMIT_BYTES (started by kforge, not by hand)\n");
    return 2;
  }
  char* end = nullptr;
  const unsigned long long limit = std::strtoull(argv[2], &end, 10);
  if (end == argv[2] || *end != '\0') {
    std::fprintf(stderr, "kforge-nvrtc: bad memory limit \"%s\"\n", argv[2]);
    return 2;
  }
  return kforge::cuda::internal::ServeNvrtcJobs(3, argv[1], static_cast<size_t>(limit));
}
