// tools/tsl-reference.cpp — writes the reference of TSL's primitives (docs/primitives.md)
// from the operation table: each operation's call form, operands, dtypes, IR mnemonic,
// class and description. The build runs it; a test compares its output with the file in
// the repository, so the reference cannot drift from the code.
#include "runtime/CallForms.h"
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
  case tsl::FusionClass::Scan: return "scan";
  case tsl::FusionClass::Opaque: return "other";
  }
  return "?";
}

std::string escape(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

/// The row a name calls, and how many tensors it takes.
std::string operandsOf(const tsl::OpInfo& op) {
  return op.maxInputs < 0                ? std::to_string(op.minInputs) + " or more"
         : op.minInputs == op.maxInputs ? std::to_string(op.minInputs)
                                        : std::to_string(op.minInputs) + "–" + std::to_string(op.maxInputs);
}

std::string dtypesOf(const tsl::OpInfo& op) {
  std::string dtypes = op.has(tsl::kFloatOnly) ? "floats (integers promoted)" : "any";
  if (op.has(tsl::kBoolResult)) dtypes += "; :bool result";
  return dtypes;
}

} // namespace

int main() {
  using namespace tsl;
  std::cout << "# TSL primitives\n\n"
               "Generated from the operation table (`runtime/Ops.h`, `runtime/Elementwise.h`: each row's\n"
               "call form, sentence and example) by `tools/tsl-reference`; `ctest -R docs.primitives`\n"
               "fails when this file and the table disagree (regenerate with\n"
               "`build/release/tools/tsl-reference > docs/primitives.md`). `docs/language.md` describes\n"
               "the language around them; `:doc name` in the REPL prints one. Every example's result is\n"
               "checked by a test.\n\n"
               "| primitive | call | operands | dtypes | IR | class | what it computes | example |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const CallName& n : callNames()) {
    const OpInfo& op = opInfo(n.kind);
    std::cout << "| `" << escape(n.name) << "` | `" << escape(usageOf(n.name, *n.form)) << "` | " << operandsOf(op)
              << " | " << dtypesOf(op) << " | `" << op.mnemonic << "` | " << fusionName(op.fusion) << " | "
              << escape(n.doc) << " | `" << escape(n.example) << "` |\n";
  }
  std::cout << "\n## Operations only compiled programs use\n\n"
               "Derivative programs and compiler variants; they print in `(ir ...)` but TSL does not call them.\n\n"
               "| operation | IR | class | what it computes |\n"
               "| --- | --- | --- | --- |\n";
  for (const OpInfo& op : allOps())
    if (!callable(op))
      std::cout << "| `" << escape(op.name) << "` | `" << op.mnemonic << "` | " << fusionName(op.fusion) << " | "
                << escape(op.doc) << " |\n";
  return 0;
}
