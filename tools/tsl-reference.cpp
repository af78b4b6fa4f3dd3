// tools/tsl-reference.cpp — writes the reference of TSL's primitives (docs/primitives.md)
// from the operation table: each operation's call form, operands, dtypes, IR mnemonic,
// class and description. The build runs it; a test compares its output with the file in
// the repository, so the reference cannot drift from the code.
#include "runtime/OpDocs.h"
#include "runtime/Ops.h"

#include <iostream>
#include <string>

namespace {

const char* fusionName(tsl::FusionClass f) {
  switch (f) {
  case tsl::FusionClass::Elementwise: return "elementwise";
  case tsl::FusionClass::Injective: return "rearranging";
  case tsl::FusionClass::Reduction: return "reduction";
  case tsl::FusionClass::Contraction: return "contraction";
  case tsl::FusionClass::Opaque: return "other";
  }
  return "?";
}

std::string escape(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

} // namespace

int main() {
  using namespace tsl;
  std::cout << "# TSL primitives\n\n"
               "Generated from the operation table (`runtime/Ops.h`, `runtime/OpDocs.cpp`) by\n"
               "`tools/tsl-reference`; `ctest -R docs.primitives` fails when this file and the table\n"
               "disagree (regenerate with `build/release/tools/tsl-reference > docs/primitives.md`).\n"
               "`docs/language.md` §4 describes the language around them; `:doc name` in the REPL\n"
               "prints one.\n\n"
               "| primitive | call | operands | dtypes | IR | class | what it computes |\n"
               "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const OpInfo& op : allOps()) {
    const OpDoc* doc = opDoc(op.kind);
    const std::string operands = op.maxInputs < 0 ? std::to_string(op.minInputs) + " or more"
                                 : op.minInputs == op.maxInputs ? std::to_string(op.minInputs)
                                                                : std::to_string(op.minInputs) + "–" + std::to_string(op.maxInputs);
    std::string dtypes = op.has(kFloatOnly) ? "floats (integers promoted)" : "any";
    if (op.has(kBoolResult)) dtypes += "; :bool result";
    std::cout << "| `" << escape(op.name) << "` | `" << escape(doc ? doc->form : "?") << "` | " << operands << " | "
              << dtypes << " | `" << op.mnemonic << "` | " << fusionName(op.fusion) << " | "
              << escape(doc ? doc->text : "(undocumented)") << " |\n";
  }
  return 0;
}
