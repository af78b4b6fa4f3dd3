// tools/tsl-opt.cpp — IR text in, passes run, IR text out (the golden tests' driver).
//
//   tsl-opt FILE.ir [--pass=NAME ...] [--pipeline=TARGET] [--layout-target=NAME] [--verify-each]
//           [--print-ir-after=NAME] [--print-ir-after-all] [--no-locations] [--emit=graph]
//
// Reads a module (FILE - reads standard input), verifies it, runs the passes in the order
// given (or a target's pipeline), verifies again and prints the result. Errors — in the
// text, from the verifier, an unknown pass — go to stderr as file:line:col: kind error:
// message with exit status 1.
#include "compiler/Backend.h"
#include "ir/Graphviz.h"
#include "ir/MemoryPlan.h"
#include "ir/Parser.h"
#include "ir/Pass.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <fstream>
#include <iostream>
#include <cstdlib>
#include <iterator>
#include <sstream>

namespace {

const char* kUsage = R"(usage: tsl-opt FILE.ir [options]
  --pass=NAME             run pass NAME (repeatable, in order)
  --pipeline=TARGET       run the pipeline of jit :TARGET (interp, cpu), with its layout
                          preferences
  --layout-target=NAME    the layout preferences of the layout passes (none, cpu, tc)
  --bucket-bytes=N        bucket-all-reduce's bucket size in bytes (0: off; 25 MiB)
  --print-memory-plan     print each function's memory plan after the passes (to stdout)
  --verify-each           verify after every pass
  --print-ir-after=NAME   print the IR after pass NAME (to stderr)
  --print-ir-after-all    print the IR after every pass (to stderr)
  --no-locations          print without loc(...)
  --emit=graph            print Graphviz DOT instead of IR
)";

std::string describe(const tsl::Error& e, const std::string& file) {
  std::ostringstream out;
  if (e.span().known()) out << e.span().fileName() << ":" << e.span().line << ":" << e.span().col << ": ";
  else out << file << ": ";
  out << e.what() << "\n";
  return out.str();
}

} // namespace

int main(int argc, char** argv) {
  std::string file;
  std::vector<std::string> pipeline;
  tsl::ir::PassContext context;
  bool locations = true, graph = false, memoryPlan = false;
  tsl::compiler::registerPasses();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (arg.starts_with("--pass=")) pipeline.push_back(arg.substr(7));
    else if (arg.starts_with("--pipeline=")) {
      const std::unique_ptr<tsl::compiler::Backend> backend = tsl::compiler::makeBackend(arg.substr(11));
      if (!backend) {
        std::cerr << "tsl-opt: no target '" << arg.substr(11) << "'\n";
        return 2;
      }
      pipeline.insert(pipeline.end(), backend->pipeline().begin(), backend->pipeline().end());
      if (context.layoutTarget.empty()) context.layoutTarget = backend->layoutTarget();
    } else if (arg.starts_with("--layout-target=")) context.layoutTarget = arg.substr(16);
    else if (arg.starts_with("--bucket-bytes=")) {
      const std::string n = arg.substr(15);
      char* end = nullptr;
      const long long bytes = std::strtoll(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || bytes < 0) {
        std::cerr << "tsl-opt: --bucket-bytes wants a number of bytes, not '" << n << "'\n";
        return 2;
      }
      context.bucketBytes = bytes;
    }
    else if (arg == "--print-memory-plan") memoryPlan = true;
    else if (arg == "--verify-each") context.verifyEach = true;
    else if (arg.starts_with("--print-ir-after=")) context.printAfter.insert(arg.substr(17));
    else if (arg == "--print-ir-after-all") context.printAfterAll = true;
    else if (arg == "--no-locations") locations = false;
    else if (arg == "--emit=graph") graph = true;
    else if (arg.starts_with("-") && arg != "-") {
      std::cerr << "tsl-opt: unknown option '" << arg << "'\n" << kUsage;
      return 2;
    } else if (file.empty()) file = arg;
    else {
      std::cerr << "tsl-opt: one input file only\n";
      return 2;
    }
  }
  if (file.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  std::string text;
  if (file == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << file << ": io error: cannot open the file\n";
      return 1;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  try {
    std::unique_ptr<tsl::ir::Module> module = tsl::ir::parseModule(text, file);
    tsl::ir::verify(*module, tsl::ErrorKind::Syntax);
    tsl::ir::PassManager(pipeline).run(*module, context);
    tsl::ir::verify(*module);
    if (graph) {
      for (const auto& f : module->functions()) std::cout << tsl::ir::printDot(*f);
    } else {
      std::cout << tsl::ir::printModule(*module, {locations});
    }
    if (memoryPlan)
      for (const auto& f : module->functions())
        if (f->plan()) std::cout << f->plan()->str(*f);
  } catch (const tsl::Error& e) {
    std::cerr << describe(e, file);
    return 1;
  }
  return 0;
}
