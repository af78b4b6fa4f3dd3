// tools/fuzz/FuzzReader.cpp — libFuzzer target on the reader (source text to syntax).
//
// Any input must either read into forms or be rejected with a syntax error at a position
// inside the input; isIncomplete (the REPL's "is this form unfinished?") must answer for
// every input. A crash, a sanitizer report, another exception or another error kind is a
// bug.
#include "parser/Reader.h"
#include "tsl/Error.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tsl::isIncomplete(text);
  try {
    (void)tsl::readAll(text, "<fuzz>");
  } catch (const tsl::Error& e) {
    if (e.kind() != tsl::ErrorKind::Syntax) std::abort();
  }
  return 0;
}
