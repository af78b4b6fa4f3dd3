// repl/main.cpp — the `tsl` command.
//
//   tsl                          interactive REPL
//   tsl run FILE [ARGS...]       run a program, *args* bound to ARGS ("-" reads stdin)
//       [--keep-going]           report a failing top-level form and run the next
//   tsl check FILE               read and expand a program, report every error found
//   tsl compile FILE --entry NAME --sig SIG [--emit=KIND] [--stage=raw] [--target=T] [-o OUT]
//   tsl COMMAND ...              a command a target adds (Engine::targetCommands)
//   tsl --help | --version
//
// The options are repl/Options.cpp's table. Everything runs on a thread with a large
// stack so that the call-depth limit (10 000 by default, --max-depth N), not the native
// stack, is what deep recursion meets.
#include "repl/Options.h"
#include "repl/Repl.h"
#include "tsl/tsl.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace {

using tsl::cli::Options;

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
  int status = 0;
  try {
    engine.startRun(); // targets prepare what their flags ask for (a trace)
  } catch (const tsl::Error& e) {
    std::cerr << tsl::renderHeadline(e);
    return 1;
  }
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
  // What the targets' flags ask for (statistics, traces), also when the program failed:
  // a trace shows where.
  try {
    engine.finishRun();
  } catch (const tsl::Error& e) {
    std::cerr << tsl::renderHeadline(e);
    return 1;
  }
  return status;
}

/// A command a target adds: it reads its own arguments and flags.
int targetCommand(const Options& options) {
  auto owned = makeEngine(options);
  tsl::Engine& engine = *owned;
  SignalTarget target(engine);
  try {
    return engine.runTargetCommand(options.rest[0], std::vector<std::string>(options.rest.begin() + 1, options.rest.end()));
  } catch (const tsl::Error& e) {
    std::cout << std::flush;
    std::cerr << engine.describe(e);
    return 1;
  }
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
                 "[--emit=KIND] [-o OUT]\n";
    return 2;
  }
  std::string text, name;
  if (!readSource(options.rest[1], text, name)) return 1;
  auto owned = makeEngine(options);
  tsl::Engine& engine = *owned;
  SignalTarget target(engine);
  try {
    engine.loadDefinitions(text, name);
    bool binary = false;
    for (const tsl::Engine::EmitKind& kind : tsl::Engine::emitKinds())
      if (kind.name == options.emit) binary = kind.binary;
    if (binary && options.output.empty()) {
      std::cerr << "tsl: --emit=" << options.emit << " writes a binary file: name it with -o\n";
      return 2;
    }
    const std::string result = engine.emit(options.entry, options.signature, options.emit, options.emitOptions);
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
    for (const tsl::Engine::TargetCommand& c : tsl::Engine::targetCommands())
      if (command == c.name) return targetCommand(options);
    std::cerr << "tsl: unknown command '" << command << "'\n" << tsl::cli::usage();
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

} // namespace

int main(int argc, char** argv) {
  Options options;
  if (const std::optional<int> status = tsl::cli::parseArguments(argc, argv, options)) return *status;
  installSignalHandlers(options.rest.empty());
  return tsl::runOnLargeStack([&] { return dispatch(options); });
}
