// tools/fuzz/FuzzNpy.cpp — libFuzzer target on the .npy loader.
//
// Any bytes must either load as a tensor or be refused with an io error naming the file.
// A tensor that loads must save and load back to the same dtype, shape and bytes. A
// crash, a sanitizer report, another error kind or a changed round trip is a bug.
#include "ScratchFile.h"
#include "runtime/Io.h"
#include "runtime/Views.h"

#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = tsl::fuzz::scratchPath("input.npy"), again = tsl::fuzz::scratchPath("again.npy");
  tsl::fuzz::writeScratch(path, data, size);
  tsl::Tensor x;
  try {
    x = tsl::loadNpy(path);
  } catch (const tsl::Error& e) {
    if (e.kind() != tsl::ErrorKind::Io || e.message().find(path) == std::string::npos) std::abort();
    return 0;
  }
  tsl::saveNpy(again, x);
  const tsl::Tensor y = tsl::loadNpy(again);
  if (y.dtype() != x.dtype() || !(y.shape() == x.shape()) || y.numel() != x.numel()) std::abort();
  const size_t bytes = static_cast<size_t>(x.numel()) * x.elementSize();
  if (bytes && std::memcmp(tsl::contiguous(x).data(), tsl::contiguous(y).data(), bytes) != 0) std::abort();
  return 0;
}
