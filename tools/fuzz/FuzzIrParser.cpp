// tools/fuzz/FuzzIrParser.cpp — libFuzzer target on the IR text parser.
//
// Any input must either be rejected with a tsl::Error (a syntax error at a position) or
// parse into a module; a module that verifies must print, parse back and print the same
// text, and survive the :interp pass pipeline. Anything else — a crash, a sanitizer
// report, an exception of another type, a round trip that changes the text — is a bug.
#include "ir/Parser.h"
#include "ir/Pass.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<tsl::ir::Module> module;
  try {
    module = tsl::ir::parseModule(text, "<fuzz>");
    tsl::ir::verify(*module, tsl::ErrorKind::Syntax);
  } catch (const tsl::Error&) {
    return 0; // rejected, with a message: fine
  }
  const std::string printed = tsl::ir::printModule(*module);
  try {
    auto again = tsl::ir::parseModule(printed, "<fuzz>");
    tsl::ir::verify(*again, tsl::ErrorKind::Syntax);
    if (tsl::ir::printModule(*again) != printed) std::abort(); // the round trip changed the text
  } catch (const tsl::Error&) {
    std::abort(); // printed text that does not parse back
  }
  try {
    tsl::ir::PassContext context;
    context.verifyEach = true;
    tsl::ir::PassManager(tsl::ir::optimizationPasses()).run(*module, context);
  } catch (const tsl::Error& e) {
    // Passes may meet an op they cannot fold (a value error); broken IR is a bug.
    if (e.kind() == tsl::ErrorKind::Internal) std::abort();
  }
  return 0;
}
