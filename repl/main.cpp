// repl/main.cpp — the `tsl` command.
//
//   tsl                          interactive REPL
//   tsl run FILE [ARGS...]       run a program, *args* bound to ARGS ("-" reads stdin)
//       [--keep-going]           report a failing top-level form and run the next
//   tsl check FILE               read and expand a program, report every error found
//   tsl compile FILE --entry NAME --sig SIG [--emit=ir|graph|llvm|asm|obj|lib|header|tc]
//               [--stage=raw] [--target=T] [--target-cpu=CPU] [-O0..-O3] [-o OUT]
//   tsl tc-run FILE [--tc-device=D] [--in N=X.npy] [--out N=Y.npy] [--races=count]
//   tsl --help | --version
//
// Everything runs on a thread with a large stack so that the call-depth limit (10 000 by
// default, --max-depth N), not the native stack, is what deep recursion meets.
#include "repl/Repl.h"
#include "tsl/tsl.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <sstream>

namespace {

const char* kUsage = R"(usage: tsl [options] [command]

commands:
  (none)                  start the interactive REPL
  run FILE [ARGS...]      run a program; *args* holds ARGS; FILE - reads standard input
      --keep-going        a top-level form that fails is reported and the next one
                          runs (the exit status is still 1); for batches of tests
  check FILE              report every error that can be found without running FILE
  compile FILE --entry NAME --sig SIG
                          print function NAME of FILE compiled for the parameters SIG,
                          e.g. --sig "x:f32[128,64],y:i64[128]" (sizes may be names: f32[n,64]);
                          FILE's definitions are loaded, nothing else of it runs
      --emit=KIND         ir: the IR after the target's passes (default); graph: Graphviz
                          DOT; native code for :cpu, ahead of time: llvm (LLVM IR), asm,
                          obj (an object file), lib (a shared library: a C function per
                          entry, needing only libc and libm), header (its C header),
                          tc (the tensor-core programs of its contractions, on :tc)
      --stage=raw         the IR as lowered, before the optimisation passes
      --target=T          the IR for target T's pipeline: cpu (default), interp or tc
      --pass=NAME         run pass NAME instead of the target's pipeline (repeatable,
                          in order; an unknown name lists them)
      --target-cpu=CPU    native code for CPU (default x86-64-v3; native: this machine)
      -O0 .. -O3          LLVM's optimisation level (default -O2)
      --no-locations      leave the loc(...) source positions out of the IR
      -o OUT              write to OUT (atomically) instead of standard output
  tc-run FILE             run a tensor-core program (the text of tc-asm or --emit=tc) on
                          the emulator; print its statistics as JSON
      --in N=X.npy        GM tensor %N's contents (default: a fixed pattern in [-1, 1))
      --out N=Y.npy       write GM tensor %N after the run
      --races=count       count races in the statistics instead of failing on the first

options:
  --max-depth N           nested calls allowed before "stack depth exceeded" (10000)
  --print-ir-after=PASS   print the IR after each run of PASS (repeatable)
  --print-ir-after-all    print the IR after every pass
  --verify-each           verify the IR after every pass
  --time-passes           report the time each pass takes
  --explain-recompile     say why a jit function compiles another version
  --print-memory-plan     print each compiled function's buffers: offsets, lifetimes, peak
  --print-fallbacks       list the operations :cpu code runs on eager kernels
  --tc-device=D           the tensor core :tc emulates: a2 (default), 910a, or a device
                          file (docs/tensor-core.md)
  --tc-stats[=FILE]       after the run, the tensor core's counters over every :tc call,
                          as JSON on standard error (or into FILE)
  --tc-trace=FILE         write every instruction :tc ran as Chrome trace-event JSON
  -h, --help              show this help
  --version               show the version
)";

struct Options {
  int maxDepth = 10000;
  tsl::CompileDebug debug;
  std::vector<std::string> rest; ///< command and its arguments
  // tsl compile
  std::string entry, signature, output;
  std::string emit = "ir";
  bool raw = false;
  // tsl run / tc-run
  bool tcStats = false;
  std::string tcStatsFile, tcTraceFile;
  bool countRaces = false;
  bool keepGoing = false;
  std::vector<std::pair<int, std::string>> tcInputs, tcOutputs;
  tsl::Engine::EmitOptions emitOptions;
};

/// The engine a signal should stop (the one running a file), or nullptr.
std::atomic<tsl::Engine*> signalEngine{nullptr};
std::atomic<int> interruptsSeen{0};

/// Ends the process as `signal` would, after deleting the temporaries of writes in
/// progress (a target file is never left half-written, and now no temporary either).
[[noreturn]] void dieOf(int signal) {
  tsl::removePendingTemporaries();
  std::signal(signal, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  pthread_sigmask(SIG_UNBLOCK, &only, nullptr); // blocked while its handler runs
  std::raise(signal);
  std::_Exit(128 + signal);
}

extern "C" void onTerminateSignal(int signal) { dieOf(signal); }

/// `tsl run` and friends: the first Ctrl-C stops the program as an error (writes clean up
/// as it unwinds); a second one, or one while nothing runs, ends the process.
extern "C" void onProgramInterrupt(int signal) {
  tsl::Engine* engine = signalEngine.load();
  if (engine && interruptsSeen.fetch_add(1) == 0) {
    engine->interrupt();
    return;
  }
  dieOf(signal);
}

void installSignalHandlers(bool repl) {
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  action.sa_handler = onTerminateSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
  if (repl) return; // the REPL handles Ctrl-C itself
  action.sa_handler = onProgramInterrupt;
  sigaction(SIGINT, &action, nullptr);
}

/// A configured engine: the depth limit and the compilation switches.
std::unique_ptr<tsl::Engine> makeEngine(const Options& options) {
  auto engine = std::make_unique<tsl::Engine>(options.maxDepth);
  engine->compileDebug() = options.debug;
  return engine;
}

/// Makes `engine` the one signals stop while it is alive.
struct SignalTarget {
  explicit SignalTarget(tsl::Engine& engine) { signalEngine.store(&engine); }
  ~SignalTarget() { signalEngine.store(nullptr); }
};

bool readSource(const std::string& path, std::string& text, std::string& name) {
  try {
    text = tsl::readSource(path);
  } catch (const tsl::Error& e) {
    std::cerr << tsl::renderHeadline(e);
    return false;
  }
  name = path == "-" ? "<stdin>" : path;
  return true;
}

int runFile(const Options& options) {
  if (options.rest.size() < 2) {
    std::cerr << "usage: tsl run FILE [ARGS...]\n";
    return 2;
  }
  std::string text, name;
  if (!readSource(options.rest[1], text, name)) return 1;
  auto owned = makeEngine(options);
  tsl::Engine& engine = *owned;
  SignalTarget target(engine);
  engine.setArgs(std::vector<std::string>(options.rest.begin() + 2, options.rest.end()));
  if (!options.tcTraceFile.empty()) engine.traceTc(true);
  int status = 0;
  try {
    if (options.keepGoing) {
      const size_t failed = engine.evalKeepGoing(text, name, [&](const tsl::Error& e) {
        if (interruptsSeen.load() > 0) throw e; // Ctrl-C stops the whole run
        std::cout << std::flush;
        std::cerr << engine.describe(e) << std::flush;
      });
      if (failed > 0) status = 1;
    } else {
      engine.eval(text, name);
    }
  } catch (const tsl::Error& e) {
    std::cout << std::flush;
    std::cerr << engine.describe(e);
    status = 1;
  } catch (const tsl::ExitRequest& request) {
    status = request.code;
  }
  std::cout << std::flush;
  // What the tensor core did, also when the program failed: the trace shows where.
  try {
    if (options.tcStats) {
      if (options.tcStatsFile.empty()) std::cerr << engine.tcStats() << "\n";
      else tsl::writeFileAtomically(options.tcStatsFile, engine.tcStats() + "\n");
    }
    if (!options.tcTraceFile.empty()) tsl::writeFileAtomically(options.tcTraceFile, engine.tcTrace());
  } catch (const tsl::Error& e) {
    std::cerr << tsl::renderHeadline(e);
    return 1;
  }
  return status;
}

/// `tsl tc-run FILE`: a tensor-core program run on the emulator.
int tcRunFile(const Options& options) {
  if (options.rest.size() != 2) {
    std::cerr << "usage: tsl tc-run FILE [--tc-device=D] [--in N=X.npy] [--out N=Y.npy] [--races=count]\n";
    return 2;
  }
  std::string text, name;
  if (!readSource(options.rest[1], text, name)) return 1;
  auto owned = makeEngine(options);
  tsl::Engine& engine = *owned;
  SignalTarget target(engine);
  try {
    tsl::Engine::TcRunOptions run;
    run.device = options.debug.tcDevice;
    run.countRaces = options.countRaces;
    run.inputs = options.tcInputs;
    run.outputs = options.tcOutputs;
    const tsl::Engine::TcRunResult result = engine.runTcProgram(text, name, run);
    std::cout << result.stats << "\n";
    if (options.tcStats && !options.tcStatsFile.empty()) tsl::writeFileAtomically(options.tcStatsFile, result.stats + "\n");
    if (!options.tcTraceFile.empty()) tsl::writeFileAtomically(options.tcTraceFile, result.trace);
  } catch (const tsl::Error& e) {
    std::cout << std::flush;
    std::cerr << engine.describe(e);
    return 1;
  }
  return 0;
}

int checkFile(const Options& options) {
  if (options.rest.size() != 2) {
    std::cerr << "usage: tsl check FILE\n";
    return 2;
  }
  std::string text, name;
  if (!readSource(options.rest[1], text, name)) return 1;
  auto owned = makeEngine(options);
  tsl::Engine& engine = *owned;
  SignalTarget target(engine);
  const std::vector<tsl::Error> errors = engine.check(text, name);
  for (const tsl::Error& e : errors) std::cerr << engine.describe(e);
  if (!errors.empty()) {
    std::cerr << errors.size() << (errors.size() == 1 ? " error" : " errors") << " in " << name << "\n";
    return 1;
  }
  return 0;
}

int compileFile(const Options& options) {
  if (options.rest.size() != 2 || options.entry.empty() || options.signature.empty()) {
    std::cerr << "usage: tsl compile FILE --entry NAME --sig \"x:f32[128,64],...\" "
                 "[--emit=ir|graph|llvm|asm|obj|lib|header] [-o OUT]\n";
    return 2;
  }
  std::string text, name;
  if (!readSource(options.rest[1], text, name)) return 1;
  auto owned = makeEngine(options);
  tsl::Engine& engine = *owned;
  SignalTarget target(engine);
  try {
    engine.loadDefinitions(text, name);
    using Emit = tsl::Engine::Emit;
    const std::pair<const char*, Emit> kinds[] = {{"graph", Emit::Graph},   {"llvm", Emit::Llvm},
                                                  {"asm", Emit::Asm},       {"obj", Emit::Object},
                                                  {"lib", Emit::Library},   {"header", Emit::Header},
                                                  {"tc", Emit::Tc}};
    Emit what = options.raw ? Emit::RawIr : Emit::Ir;
    for (const auto& [kind, emit] : kinds)
      if (options.emit == kind) what = emit;
    if ((what == Emit::Object || what == Emit::Library) && options.output.empty()) {
      std::cerr << "tsl: --emit=" << options.emit << " writes a binary file: name it with -o\n";
      return 2;
    }
    const std::string result = engine.emit(options.entry, options.signature, what, options.emitOptions);
    if (options.output.empty()) std::cout << result << std::flush;
    else tsl::writeFileAtomically(options.output, result);
  } catch (const tsl::Error& e) {
    std::cout << std::flush;
    std::cerr << engine.describe(e);
    return 1;
  } catch (const tsl::ExitRequest& request) {
    return request.code;
  }
  return 0;
}

int dispatch(const Options& options) {
  try {
    if (options.rest.empty()) {
      auto engine = makeEngine(options);
      return tsl::runRepl(*engine);
    }
    const std::string& command = options.rest[0];
    if (command == "run") return runFile(options);
    if (command == "check") return checkFile(options);
    if (command == "compile") return compileFile(options);
    if (command == "tc-run") return tcRunFile(options);
    std::cerr << "tsl: unknown command '" << command << "'\n" << kUsage;
    return 2;
  } catch (const tsl::Error& e) {
    std::cerr << tsl::renderHeadline(e);
    return 1;
  } catch (const std::bad_alloc&) {
    std::cout << std::flush;
    std::cerr << "runtime error: out of memory\n";
    return 1;
  }
}

/// Whether `name` is a registered pass; if not, says so on stderr with the list.
bool knownPass(const std::string& name) {
  const std::vector<std::string> names = tsl::Engine::passNames();
  if (std::find(names.begin(), names.end(), name) != names.end()) return true;
  std::cerr << "tsl: unknown pass '" << name << "' (passes:";
  for (const std::string& n : names) std::cerr << " " << n;
  std::cerr << ")\n";
  return false;
}

} // namespace

int main(int argc, char** argv) {
  Options options;
  // Options may come before the command or between it and its FILE; everything after
  // the FILE of `run` belongs to the program.
  bool programArgs = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (programArgs) {
      options.rest.push_back(arg);
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--version") {
      std::cout << "tsl " << TSL_VERSION << "\n";
      return 0;
    }
    if (arg == "--max-depth") {
      if (i + 1 >= argc) {
        std::cerr << "tsl: --max-depth needs a number\n";
        return 2;
      }
      char* end = nullptr;
      const long depth = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || depth < 1 || depth > 1000000) {
        std::cerr << "tsl: --max-depth must be a number from 1 to 1000000\n";
        return 2;
      }
      options.maxDepth = static_cast<int>(depth);
      continue;
    }
    // --name=value or --name value
    auto value = [&](const char* option, std::string& out) {
      const std::string prefix = std::string(option) + "=";
      if (arg.starts_with(prefix)) {
        out = arg.substr(prefix.size());
        return true;
      }
      if (arg != option) return false;
      if (i + 1 >= argc) {
        std::cerr << "tsl: " << option << " needs a value\n";
        std::exit(2);
      }
      out = argv[++i];
      return true;
    };
    std::string text;
    if (value("--print-ir-after", text)) {
      if (!knownPass(text)) return 2;
      options.debug.printAfter.insert(text);
      continue;
    }
    if (arg == "--print-ir-after-all") {
      options.debug.printAfterAll = true;
      continue;
    }
    if (arg == "--keep-going") {
      options.keepGoing = true;
      continue;
    }
    if (arg == "--verify-each") {
      options.debug.verifyEach = true;
      continue;
    }
    if (arg == "--time-passes") {
      options.debug.timePasses = true;
      continue;
    }
    if (arg == "--explain-recompile") {
      options.debug.explainRecompile = true;
      continue;
    }
    if (arg == "--print-memory-plan") {
      options.debug.printMemoryPlan = true;
      continue;
    }
    if (arg == "--print-fallbacks") {
      options.debug.printFallbacks = true;
      continue;
    }
    if (arg.size() == 3 && arg.starts_with("-O") && arg[2] >= '0' && arg[2] <= '3') {
      options.debug.optLevel = arg[2] - '0';
      continue;
    }
    if (value("--target-cpu", options.emitOptions.cpu)) continue;
    if (value("--tc-device", options.debug.tcDevice) || value("--tc-trace", options.tcTraceFile)) continue;
    if (arg == "--tc-stats" || arg.starts_with("--tc-stats=")) {
      options.tcStats = true;
      if (arg.size() > 11) options.tcStatsFile = arg.substr(11);
      continue;
    }
    if (arg == "--races=count") {
      options.countRaces = true;
      continue;
    }
    if (value("--in", text) || value("--out", text)) {
      // N=FILE: a GM tensor of a tc-run program
      const size_t eq = text.find('=');
      char* end = nullptr;
      const long index = eq == std::string::npos ? -1 : std::strtol(text.c_str(), &end, 10);
      if (eq == std::string::npos || end != text.c_str() + eq || index < 0 || index > 1000000) {
        std::cerr << "tsl: " << (arg.starts_with("--in") ? "--in" : "--out") << " takes N=FILE.npy (N a GM tensor number)\n";
        return 2;
      }
      (arg.starts_with("--in") ? options.tcInputs : options.tcOutputs).emplace_back(static_cast<int>(index), text.substr(eq + 1));
      continue;
    }
    if (value("--pass", text)) {
      if (!knownPass(text)) return 2;
      options.emitOptions.passes.push_back(text);
      continue;
    }
    if (value("--target", text)) {
      if (text != "cpu" && text != "interp" && text != "tc") {
        std::cerr << "tsl: --target must be cpu, interp or tc\n";
        return 2;
      }
      options.emitOptions.target = text;
      continue;
    }
    if (value("--entry", options.entry) || value("--sig", options.signature) || value("-o", options.output))
      continue;
    if (value("--emit", text)) {
      static const char* const kinds[] = {"ir", "graph", "llvm", "asm", "obj", "lib", "header", "tc"};
      if (std::none_of(std::begin(kinds), std::end(kinds), [&](const char* k) { return text == k; })) {
        std::cerr << "tsl: --emit must be ir, graph, llvm, asm, obj, lib, header or tc\n";
        return 2;
      }
      options.emit = text;
      continue;
    }
    if (value("--stage", text)) {
      if (text != "raw" && text != "optimized") {
        std::cerr << "tsl: --stage must be raw or optimized\n";
        return 2;
      }
      options.raw = text == "raw";
      continue;
    }
    if (arg == "--no-locations") {
      options.emitOptions.locations = false;
      continue;
    }
    if (arg.starts_with("-") && arg != "-") {
      std::cerr << "tsl: unknown option '" << arg << "'\n" << kUsage;
      return 2;
    }
    options.rest.push_back(arg);
    programArgs = options.rest.size() == 2 && options.rest[0] == "run";
  }
  installSignalHandlers(options.rest.empty());
  return tsl::runOnLargeStack([&] { return dispatch(options); });
}
