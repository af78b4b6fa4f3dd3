// repl/main.cpp — the `tsl` command.
//
//   tsl                          interactive REPL
//   tsl run FILE [ARGS...]       run a program, *args* bound to ARGS ("-" reads stdin)
//       [--keep-going]           report a failing top-level form and run the next
//       [--ranks N]              run it as N ranks under mpirun on this machine
//   --pictures DIR [--open]      (REPL and run) pictures shown written as SVG files in DIR
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
#include <cstring>
#include <iostream>
#include <optional>
#include <thread>
#include <unistd.h>

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

/// A configured engine: the depth limit, the compilation switches, and with --pictures
/// the sink that writes pictures (also given back through `pictures`, for the REPL).
std::unique_ptr<tsl::Engine> makeEngine(const Options& options, std::shared_ptr<tsl::cli::Pictures>* pictures = nullptr) {
  auto engine = std::make_unique<tsl::Engine>(options.maxDepth);
  engine->compileDebug() = options.debug;
  if (!options.pictures.empty()) {
    auto sink = std::make_shared<tsl::cli::Pictures>(options.pictures, options.open);
    engine->setDisplaySink(sink);
    if (pictures) *pictures = sink;
  }
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

/// `tsl run --ranks N ...`: the same command line, without --ranks, as N ranks under
/// mpirun on this machine (mpirun's own options for what this machine needs: as root,
/// --allow-run-as-root; more ranks than cores, --oversubscribe). Returns only on failure.
int launchRanks(const Options& options) {
  if (!tsl::worldHasMpi()) {
    std::cerr << "tsl: --ranks needs a build with MPI (this one has none: install Debian's libopenmpi-dev and "
                 "rebuild)\n";
    return 2;
  }
  if (tsl::worldLaunched()) {
    std::cerr << "tsl: --ranks: this process is already a rank of a world (started by mpirun or srun)\n";
    return 2;
  }
  char self[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) {
    std::cerr << "tsl: --ranks: cannot find this program's path\n";
    return 1;
  }
  // Open MPI's aggregation of help messages garbles the MPI_Abort notice under
  // --oversubscribe; shown whole, it follows the failing rank's own message.
  std::vector<std::string> command = {"mpirun", "--mca", "orte_base_help_aggregate", "0"};
  if (geteuid() == 0) command.push_back("--allow-run-as-root");
  if (static_cast<unsigned>(options.ranks) > std::max(1u, std::thread::hardware_concurrency()))
    command.push_back("--oversubscribe");
  command.insert(command.end(), {"-n", std::to_string(options.ranks), std::string(self, static_cast<size_t>(length))});
  command.insert(command.end(), options.forwarded.begin(), options.forwarded.end());
  std::vector<char*> argv;
  for (std::string& word : command) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::cout << std::flush;
  execvp("mpirun", argv.data());
  std::cerr << "tsl: --ranks starts mpirun (Debian's openmpi-bin), which could not be run: " << std::strerror(errno)
            << "\n";
  return 1;
}

/// `text` with "rank R: " before each line in a world of several ranks (their messages
/// share one terminal), as it is in a world of one.
std::string ranked(const tsl::World& world, const std::string& text) {
  if (world.size == 1) return text;
  const std::string prefix = "rank " + std::to_string(world.rank) + ": ";
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const size_t stop = end == std::string::npos ? text.size() : end + 1;
    out += prefix + text.substr(start, stop - start);
    start = stop;
  }
  return out;
}

int runFile(const Options& options) {
  if (options.rest.size() < 2) {
    std::cerr << "usage: tsl run FILE [ARGS...]\n";
    return 2;
  }
  if (options.ranks > 0) return launchRanks(options);
  // Under a launcher, join the other ranks before anything runs, so that an error on any
  // rank, from the first form on, can end them all.
  tsl::World world;
  try {
    world = tsl::joinedWorld();
  } catch (const tsl::Error& e) {
    std::cerr << tsl::renderHeadline(e);
    return 1;
  }
  // An error ends every rank: the others may wait for this one in a collective. The
  // failing rank's message comes first, prefixed by its rank.
  auto fail = [&](const std::string& message, int status) {
    std::cout << std::flush;
    std::cerr << ranked(world, message) << std::flush;
    if (world.size > 1) tsl::abortWorld(status);
    return status;
  };
  std::string text, name;
  try {
    text = tsl::readSource(options.rest[1]);
  } catch (const tsl::Error& e) {
    return fail(tsl::renderHeadline(e), 1);
  }
  name = options.rest[1] == "-" ? "<stdin>" : options.rest[1];
  auto owned = makeEngine(options);
  tsl::Engine& engine = *owned;
  SignalTarget target(engine);
  engine.setArgs(std::vector<std::string>(options.rest.begin() + 2, options.rest.end()));
  int status = 0;
  try {
    engine.startRun(); // targets prepare what their flags ask for (a trace)
  } catch (const tsl::Error& e) {
    return fail(tsl::renderHeadline(e), 1);
  }
  try {
    if (options.keepGoing) {
      const size_t failed = engine.evalKeepGoing(text, name, [&](const tsl::Error& e) {
        if (interruptsSeen.load() > 0) throw e; // Ctrl-C stops the whole run
        fail(engine.describe(e), 1);
      });
      if (failed > 0) status = 1;
    } else {
      engine.eval(text, name);
    }
  } catch (const tsl::Error& e) {
    status = fail(engine.describe(e), 1);
  } catch (const tsl::ExitRequest& request) {
    status = request.code;
    if (status != 0 && world.size > 1) fail("", status); // (exit 3) on one rank ends them all with 3
  }
  std::cout << std::flush;
  // What the targets' flags ask for (statistics, traces), also when the program failed:
  // a trace shows where.
  try {
    engine.finishRun();
  } catch (const tsl::Error& e) {
    return fail(tsl::renderHeadline(e), 1);
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
    if (options.ranks > 0 && (options.rest.empty() || options.rest[0] != "run")) {
      std::cerr << "tsl: --ranks is an option of tsl run\n";
      return 2;
    }
    if (options.rest.empty()) {
      std::shared_ptr<tsl::cli::Pictures> pictures;
      auto engine = makeEngine(options, &pictures);
      return tsl::runRepl(*engine, pictures.get());
    }
    const std::string& command = options.rest[0];
    if (command == "run") return runFile(options);
    if (command == "check") return checkFile(options);
    if (command == "compile") return compileFile(options);
    if (command == "kernel") return tsl::cli::kernelCommand({options.rest.begin() + 1, options.rest.end()});
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
  // The process ends on the thread that ran TSL, once dispatch has returned (its engine
  // and everything the program made are freed, and exit's handlers run as ever): glibc
  // would otherwise tidy that thread's malloc arena as the thread ends, which after a
  // large program (a compile of 300,000 operations stopped by Ctrl-C) takes most of a
  // second for memory the process returns at once anyway.
  return tsl::runOnLargeStack([&]() -> int { std::exit(dispatch(options)); });
}
