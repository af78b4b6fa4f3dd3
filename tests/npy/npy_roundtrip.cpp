// tests/npy/npy_roundtrip.cpp — loadNpy/saveNpy as a command, for test_npy_numpy.py.
//
// The Python test has NumPy write .npy files, passes them through this program and checks
// what comes back with NumPy, so TSL's reader and writer are judged by the reference
// implementation rather than by each other.
//
//   npy-roundtrip IN OUT              load IN, save it to OUT
//   npy-roundtrip --info IN           print IN's TSL type, e.g. "f32[2,3]" (or "f32" for 0-d)
//   npy-roundtrip --bf16 IN OUT       load IN, convert it to bf16, save it to OUT
//   npy-roundtrip --transpose IN OUT  load IN, save a transposed (non-contiguous) view of it
//
// A TSL error prints its message on stderr and exits with status 1; misuse exits with 2.
#include "runtime/Elementwise.h"
#include "runtime/Format.h"
#include "runtime/Io.h"
#include "runtime/Views.h"

#include <cstdio>
#include <string>

using namespace tsl;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (argc == 3 && mode == "--info") {
      std::printf("%s\n", formatType(loadNpy(argv[2])).c_str());
    } else if (argc == 4 && mode == "--bf16") {
      saveNpy(argv[3], astype(loadNpy(argv[2]), DType::BF16));
    } else if (argc == 4 && mode == "--transpose") {
      saveNpy(argv[3], transpose(loadNpy(argv[2]), {}));
    } else if (argc == 3 && mode.rfind("--", 0) != 0) {
      saveNpy(argv[2], loadNpy(argv[1]));
    } else {
      std::fprintf(
          stderr,
          "usage: npy-roundtrip [--info IN | --bf16 IN OUT | --transpose IN OUT | IN OUT]\n");
      return 2;
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
