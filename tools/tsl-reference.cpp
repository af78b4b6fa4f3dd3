// tools/tsl-reference.cpp — writes the reference of TSL's primitives (docs/primitives.md)
// from the operation table: each operation's call form, operands, dtypes, IR mnemonic,
// class and description. The build runs it; a test compares its output with the file in
// the repository, so the reference cannot drift from the code. `tsl-reference --stdlib DIR`
// writes the reference of the standard library (docs/stdlib.md) from the docstrings of
// DIR's modules, as :doc prints them. `tsl-reference --json`
// writes the same table as data (each name's call form, its arguments with their kinds,
// uses and defaults, how many results it gives, traits, classes, sentence and example): what tools/progen generates
// programs from, so a new operation is generated without touching the generator.
#include "runtime/CallForms.h"
#include "runtime/Ops.h"
#include "tsl/tsl.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
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

std::string json(const char* text) {
  if (!text) return "null";
  std::string out = "\"";
  for (const char* p = text; *p; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}
std::string json(const std::string& text) { return json(text.c_str()); }

/// The call forms by name: the form a row names is data for the generator.
const char* formName(const tsl::CallForm* form) {
  using namespace tsl;
  static const std::pair<const CallForm*, const char*> forms[] = {
      {&kUnaryCall, "unary"},       {&kBinaryCall, "binary"},         {&kWhereCall, "where"},
      {&kClipCall, "clip"},         {&kCrossEntropyCall, "cross-entropy"}, {&kAddCall, "add"},
      {&kMulCall, "mul"},           {&kSubCall, "sub"},               {&kDivCall, "div"},
      {&kChainCall, "chain"},       {&kGeluCall, "gelu"},             {&kCastCall, "cast"},
      {&kLayoutCall, "layout"},     {&kReduceCall, "reduce"},         {&kReshapeCall, "reshape"},
      {&kFlattenCall, "flatten"},   {&kTransposeCall, "transpose"},   {&kBroadcastCall, "broadcast"},
      {&kExpandDimsCall, "expand-dims"}, {&kSqueezeCall, "squeeze"}, {&kSliceCall, "slice"},
      {&kIndexCall, "index"},       {&kJoinCall, "join"},             {&kPadCall, "pad"},
      {&kTakeCall, "take"},         {&kOneHotCall, "one-hot"},        {&kEinsumCall, "einsum"},
      {&kConv2dCall, "conv2d"},     {&kPoolCall, "pool"},             {&kAlongAxisCall, "along-axis"},
      {&kLayerNormCall, "layer-norm"}, {&kFullCall, "full"},          {&kZerosCall, "zeros"},
      {&kOnesCall, "ones"},         {&kZerosLikeCall, "zeros-like"},  {&kOnesLikeCall, "ones-like"},
      {&kArangeCall, "arange"},     {&kLinspaceCall, "linspace"},     {&kEyeCall, "eye"},
      {&kRngKeyCall, "rng-key"},    {&kRngSplitCall, "rng-split"},    {&kRandomCall, "random"},
      {&kDropoutCall, "dropout"},   {&kMomentCall, "moment"},         {&kDiagonalCall, "diagonal"},
      {&kRandIntCall, "randint"},   {&kCategoricalCall, "categorical"}, {&kPermutationCall, "permutation"},
      {&kShuffleCall, "shuffle"},   {&kBernoulliCall, "bernoulli"},   {&kSortCall, "sort"},
      {&kArgsortCall, "argsort"},   {&kTopKCall, "top-k"},            {&kGatherCall, "gather"},
      {&kScatterAddCall, "scatter-add"}, {&kAllReduceCall, "all-reduce"},
      {&kBroadcastRootCall, "collective-root"}, {&kCollectiveAxisCall, "collective-axis"},
      {&kBarrierCall, "barrier"},   {&kAttentionCall, "attention"},
      {&kInternal, "internal"}};
  for (const auto& [f, name] : forms)
    if (f == form) return name;
  return nullptr; // a form not named here: the generator reads its arguments
}

const char* argKindName(tsl::ArgKind kind) {
  using tsl::ArgKind;
  switch (kind) {
  case ArgKind::Tensor: return "tensor";
  case ArgKind::Tensors: return "tensors";
  case ArgKind::MoreTensors: return "more-tensors";
  case ArgKind::ShapeOf: return "shape-of";
  case ArgKind::Int: return "int";
  case ArgKind::Ints: return "ints";
  case ArgKind::Pair: return "pair";
  case ArgKind::Number: return "number";
  case ArgKind::Bool: return "bool";
  case ArgKind::DType: return "dtype";
  case ArgKind::Layout: return "layout";
  case ArgKind::Choice: return "choice";
  case ArgKind::String: return "string";
  case ArgKind::Ranges: return "ranges";
  case ArgKind::Indices: return "indices";
  case ArgKind::Widths: return "widths";
  }
  return "?";
}

const char* argUseName(tsl::ArgUse use) {
  using tsl::ArgUse;
  switch (use) {
  case ArgUse::Required: return "required";
  case ArgUse::Optional: return "optional";
  case ArgUse::Keyword: return "keyword";
  case ArgUse::RequiredKeyword: return "required-keyword";
  }
  return "?";
}

const char* variadicName(tsl::Variadic v) {
  switch (v) {
  case tsl::Variadic::None: return "none";
  case tsl::Variadic::Fold: return "fold";
  case tsl::Variadic::FoldInverse: return "fold-inverse";
  case tsl::Variadic::Chain: return "chain";
  }
  return "?";
}

std::string traitsOf(const tsl::OpInfo& op) {
  using namespace tsl;
  static const std::pair<OpTrait, const char*> traits[] = {
      {kCommutative, "commutative"},   {kFloatOnly, "float-only"},     {kBoolResult, "bool-result"},
      {kCreation, "creation"},         {kRandom, "random"},            {kSideEffecting, "side-effecting"},
      {kView, "view"},                 {kSameOrder, "same-order"},     {kLoopReduction, "loop-reduction"},
      {kZeroAtZero, "zero-at-zero"},   {kFiniteAtZero, "finite-at-zero"}, {kLayoutFromData, "layout-from-data"},
      {kReadsViews, "reads-views"},    {kBitExact, "bit-exact"},       {kMayFail, "may-fail"}};
  std::string out = "[";
  for (const auto& [trait, name] : traits)
    if (op.has(trait)) out += (out.size() > 1 ? ", " : "") + json(name);
  return out + "]";
}

/// The table as JSON: one object per name TSL calls, then the internal operations.
void writeJson() {
  using namespace tsl;
  std::cout << "{\"names\": [\n";
  bool first = true;
  for (const CallName& n : callNames()) {
    const OpInfo& op = opInfo(n.kind);
    std::cout << (first ? "" : ",\n") << "  {\"name\": " << json(n.name) << ", \"op\": " << json(op.name)
              << ", \"mnemonic\": " << json(op.mnemonic) << ", \"form\": " << json(formName(n.form))
              << ", \"usage\": " << json(usageOf(n.name, *n.form)) << ", \"variadic\": "
              << json(variadicName(n.form->variadic)) << ", \"parts\": " << n.form->parts
              << ", \"min_inputs\": " << op.minInputs
              << ", \"max_inputs\": " << op.maxInputs << ", \"fusion\": " << json(fusionName(op.fusion))
              << ", \"layout\": " << json(layoutClassName(op.layout)) << ", \"traits\": " << traitsOf(op)
              << ",\n   \"args\": [";
    first = false;
    bool firstArg = true;
    for (const ArgSpec& a : n.form->args) {
      std::cout << (firstArg ? "" : ", ") << "{\"name\": " << json(a.name) << ", \"kind\": " << json(argKindName(a.kind))
                << ", \"use\": " << json(argUseName(a.use)) << ", \"default\": " << json(a.fallback)
                << ", \"choices\": " << json(a.choices) << ", \"traced\": " << (a.traced ? "true" : "false") << "}";
      firstArg = false;
    }
    std::cout << "],\n   \"doc\": " << json(n.doc) << ", \"example\": " << json(n.example) << "}";
  }
  std::cout << "\n], \"internal\": [";
  first = true;
  for (const OpInfo& op : allOps())
    if (!callable(op)) {
      std::cout << (first ? "\n" : ",\n") << "  {\"op\": " << json(op.name) << ", \"mnemonic\": " << json(op.mnemonic)
                << ", \"fusion\": " << json(fusionName(op.fusion)) << ", \"traits\": " << traitsOf(op)
                << ", \"doc\": " << json(op.doc) << "}";
      first = false;
    }
  std::cout << "\n]}\n";
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
  if (argc == 2 && std::strcmp(argv[1], "--json") == 0) {
    writeJson();
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--stdlib") == 0) return writeStdlibReference(argv[2]);
  if (argc != 1) {
    std::cerr << "usage: tsl-reference [--json | --stdlib DIR]\n";
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
