// tools/fuzz/FuzzEval.cpp — libFuzzer target on the evaluator (source text, run).
//
// The input runs as a program in a fresh engine under limits that keep any input short:
// 100,000 steps (Engine::setStepLimit), 64 nested calls, tensors of at most 16 MiB
// (setStorageByteLimit). It must finish or stop with a tsl::Error of a user-facing kind;
// a crash, a sanitizer report, an internal error or another exception is a bug. The
// builtins that reach outside the process (files, exit) are replaced by functions that
// refuse, so an input cannot write into the folder the fuzzer runs in.
#include "runtime/StorageLimit.h"
#include "tsl/tsl.h"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string_view>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tsl::setStorageByteLimit(size_t(16) << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::ostringstream out;
  tsl::Engine engine(64, &out);
  engine.setStepLimit(100000);
  for (const char* name : {"exit", "spit", "save-npy", "layout-svg", "slurp", "slurp-lines", "load-csv", "load-npy",
                           "save-plot", "plot-text"})
    engine.defineNative(name, [](tsl::Args) -> tsl::Value {
      throw tsl::Error(tsl::ErrorKind::Value, "files and exit are disabled in the fuzz target");
    });
  try {
    engine.eval(text, "<fuzz>");
  } catch (const tsl::Error& e) {
    if (e.kind() == tsl::ErrorKind::Internal) std::abort();
    (void)engine.describe(e); // rendering the error must work for any position
  }
  return 0;
}
