// tools/fuzz/FuzzTcParser.cpp — libFuzzer target on the tensor-core program parser and
// the emulator.
//
// Any input must either be rejected with a tsl::Error (a syntax error at a position) or
// parse into a program that prints and parses back to the same program; a parsed program
// then runs on the emulator (on zeroed GM tensors, when they are small) and either
// finishes or stops with a tsl::Error naming the instruction. A crash, a sanitizer
// report, an internal error or a round trip that changes the program is a bug.
#include "compiler/tc/Emulator.h"
#include "tsl/Error.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tsl::compiler::tc;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Program program;
  try {
    program = parseProgram(text, "<fuzz>");
  } catch (const tsl::Error& e) {
    if (e.kind() != tsl::ErrorKind::Syntax) std::abort();
    return 0;
  }
  try {
    if (!(parseProgram(printProgram(program)) == program)) std::abort(); // the round trip changed it
  } catch (const tsl::Error&) {
    std::abort(); // printed text that does not parse back
  }
  int64_t bytes = 0;
  for (const GmTensor& g : program.gm) bytes += g.elements * tySize(g.ty);
  if (bytes > (int64_t{1} << 22)) return 0;
  std::vector<std::vector<uint8_t>> memory;
  std::vector<GmView> views;
  for (const GmTensor& g : program.gm) memory.emplace_back(static_cast<size_t>(g.elements * tySize(g.ty)), 0);
  for (size_t i = 0; i < memory.size(); ++i) views.push_back({memory[i].data(), program.gm[i].elements});
  for (const char* device : {"a2", "910a"}) {
    try {
      Emulator(preset(device)).run(program, views, {});
    } catch (const tsl::Error& e) {
      if (e.kind() == tsl::ErrorKind::Internal) std::abort();
    }
  }
  return 0;
}
