// tools/fuzz/FuzzGzip.cpp — libFuzzer target on reading gzip streams (a CSV named .gz).
//
// The input is the .gz file itself: whatever bytes it holds, loading must give a rank-2
// tensor or an io error naming the file ("not a gzip file", "truncated gzip data",
// "corrupt gzip data", or a CSV error in the decompressed text). The seeds are gzip files
// of CSV text, so the mutations reach the decompressor and the parser behind it. A crash,
// a sanitizer report or another error kind is a bug.
#include "ScratchFile.h"
#include "runtime/Io.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = tsl::fuzz::scratchPath("input.csv.gz");
  tsl::fuzz::writeScratch(path, data, size);
  try {
    if (tsl::loadCsv(path, {}).rank() != 2) std::abort();
  } catch (const tsl::Error& e) {
    if (e.kind() != tsl::ErrorKind::Io || e.message().find(path) == std::string::npos) std::abort();
  }
  return 0;
}
