// tools/tsl-reference.cpp — writes the reference of TSL's primitives (docs/primitives.md)
// from the operation table: each operation's call form, operands, dtypes, IR mnemonic,
// class and description; with `--stdlib DIR`, the reference of the standard library
// (docs/stdlib.md) from the docstrings of DIR's modules, as :doc prints them. The build
// runs it; tests compare its output with the files in the repository, so the references
// cannot drift from the code.
#include "runtime/CallForms.h"
#include "runtime/Ops.h"
#include "tsl/tsl.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

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

/// The names a module defines at top level, in its order.
std::vector<std::string> definedNames(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    for (const std::string head : {"(defn ", "(defmacro ", "(def "})
      if (line.starts_with(head)) {
        const std::string rest = line.substr(head.size());
        names.push_back(rest.substr(0, rest.find_first_of(" \t()[]\"")));
        break;
      }
  return names;
}

/// What the module's first comment line says after its name: "layers, initialisers ...".
std::string summaryOf(const std::string& text) {
  const std::string first = text.substr(0, text.find('\n'));
  const size_t dash = first.find("— ");
  return dash == std::string::npos ? "" : first.substr(dash + std::string("— ").size());
}

/// docs/stdlib.md: per module, each definition's docstring (call form and sentence) and
/// its example, from `:doc` of an engine that imported every module.
int writeStdlibReference(const std::filesystem::path& dir) {
  std::vector<std::string> modules;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".tsl") modules.push_back(entry.path().stem().string());
  std::sort(modules.begin(), modules.end(), [](const std::string& a, const std::string& b) {
    return std::pair(a != "core", a) < std::pair(b != "core", b); // core first
  });
  tsl::Engine engine;
  std::cout << "# TSL standard library\n\n"
               "Generated from the docstrings of `stdlib/*.tsl` by `tools/tsl-reference --stdlib stdlib`;\n"
               "`ctest -R docs.stdlib` fails when this file and the docstrings disagree (regenerate with\n"
               "`build/release/tools/tsl-reference --stdlib stdlib > docs/stdlib.md`). `stdlib/core` is\n"
               "loaded before any program runs, so its names need no import; every other module is\n"
               "imported by its path, `(import \"stdlib/nn\")`, and its names are then written with the\n"
               "last segment of the path, `nn/linear`. `:doc name` in the REPL prints one entry; the\n"
               "builtins written in C++ are in `docs/language.md`, the primitives in `docs/primitives.md`.\n"
               "A test runs every example and checks the value it names after `;`.\n";
  for (const std::string& module : modules) {
    std::ifstream in(dir / (module + ".tsl"));
    std::stringstream text;
    text << in.rdbuf();
    const std::string path = "stdlib/" + module;
    const std::string alias = module == "core" ? "" : module + "/";
    if (!alias.empty()) engine.eval("(import \"" + path + "\")");
    std::cout << "\n## " << path << "\n\n";
    if (const std::string summary = summaryOf(text.str()); !summary.empty())
      std::cout << (char)std::toupper(summary[0]) << summary.substr(1) << (alias.empty() ? " Preloaded." : "") << "\n\n";
    std::cout << "| name | call and meaning | example |\n| --- | --- | --- |\n";
    for (const std::string& name : definedNames(text.str())) {
      // "name\n  docstring lines...\n": the lines, unindented; the one starting "e.g. " apart.
      std::istringstream doc(engine.doc(alias + name));
      std::string line, meaning, example;
      std::getline(doc, line);
      while (std::getline(doc, line)) {
        line = line.substr(std::min(line.find_first_not_of(' '), line.size()));
        if (line.starts_with("e.g. ")) example = line.substr(5);
        else if (!line.empty()) meaning += (meaning.empty() ? "" : " ") + line;
      }
      if (const size_t eg = meaning.find(" e.g. "); example.empty() && eg != std::string::npos) {
        example = meaning.substr(eg + 6);
        meaning.resize(eg);
      }
      std::cout << "| `" << escape(alias + name) << "` | " << escape(meaning) << " | "
                << (example.empty() ? "" : "`" + escape(example) + "`") << " |\n";
    }
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  using namespace tsl;
  if (argc == 3 && std::string(argv[1]) == "--stdlib") return writeStdlibReference(argv[2]);
  if (argc != 1) {
    std::cerr << "usage: tsl-reference            (docs/primitives.md)\n"
                 "       tsl-reference --stdlib DIR (docs/stdlib.md from DIR/*.tsl)\n";
    return 2;
  }
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
