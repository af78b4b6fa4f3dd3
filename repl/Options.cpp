// repl/Options.cpp — the `tsl` command line as one table of options. The targets' flags,
// commands and output kinds come from the engine (Engine::targetFlags, targetCommands,
// emitKinds): this file names no target.
#include "repl/Options.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>

namespace tsl::cli {

namespace {

/// Stops reading the command line: `message` (if any) goes to standard error after "tsl: ".
struct Stop {
  int status;
  std::string message;
};

struct Flag {
  enum class Takes : uint8_t {
    Nothing,       ///< --name
    Value,         ///< --name=value or --name value
    OptionalValue, ///< --name or --name=value
    NextArgument,  ///< --name value
  };
  std::string name;
  Takes takes = Takes::Nothing;
  std::function<void(Options&, const std::string& value)> apply;
  std::string missing; ///< the message when the value is missing (default: "NAME needs a value")
};

/// "a, b or c".
std::string alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

std::vector<std::string> emitNames() {
  std::vector<std::string> names = {"ir", "graph"};
  for (const Engine::EmitKind& kind : Engine::emitKinds())
    if (std::find(names.begin(), names.end(), kind.name) == names.end()) names.push_back(kind.name);
  return names;
}

/// Whether `name` is a registered pass; if not, the message lists them.
void checkPass(const std::string& name) {
  const std::vector<std::string> names = Engine::passNames();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string message = "unknown pass '" + name + "' (passes:";
  for (const std::string& n : names) message += " " + n;
  throw Stop{2, message + ")"};
}

std::vector<Flag> flagTable() {
  using Takes = Flag::Takes;
  auto on = [](bool CompileDebug::*field) {
    return [field](Options& o, const std::string&) { o.debug.*field = true; };
  };
  std::vector<Flag> flags = {
      {"-h", Takes::Nothing, [](Options&, const std::string&) { std::cout << usage(); throw Stop{0, ""}; }, ""},
      {"--help", Takes::Nothing, [](Options&, const std::string&) { std::cout << usage(); throw Stop{0, ""}; }, ""},
      {"--version", Takes::Nothing,
       [](Options&, const std::string&) {
         std::cout << "tsl " << TSL_VERSION << "\n";
         throw Stop{0, ""};
       },
       ""},
      {"--max-depth", Takes::NextArgument,
       [](Options& o, const std::string& value) {
         char* end = nullptr;
         const long depth = std::strtol(value.c_str(), &end, 10);
         if (value.empty() || *end != '\0' || depth < 1 || depth > 1000000)
           throw Stop{2, "--max-depth must be a number from 1 to 1000000"};
         o.maxDepth = static_cast<int>(depth);
       },
       "--max-depth needs a number"},
      {"--print-ir-after", Takes::Value,
       [](Options& o, const std::string& pass) {
         checkPass(pass);
         o.debug.printAfter.insert(pass);
       },
       ""},
      {"--print-ir-after-all", Takes::Nothing, on(&CompileDebug::printAfterAll), ""},
      {"--verify-each", Takes::Nothing, on(&CompileDebug::verifyEach), ""},
      {"--time-passes", Takes::Nothing, on(&CompileDebug::timePasses), ""},
      {"--explain-recompile", Takes::Nothing, on(&CompileDebug::explainRecompile), ""},
      {"--print-memory-plan", Takes::Nothing, on(&CompileDebug::printMemoryPlan), ""},
      {"--print-fallbacks", Takes::Nothing, on(&CompileDebug::printFallbacks), ""},
      {"--target-cpu", Takes::Value, [](Options& o, const std::string& cpu) { o.emitOptions.cpu = cpu; }, ""},
      {"--pass", Takes::Value,
       [](Options& o, const std::string& pass) {
         checkPass(pass);
         o.emitOptions.passes.push_back(pass);
       },
       ""},
      {"--target", Takes::Value,
       [](Options& o, const std::string& target) {
         const std::vector<std::string> targets = Engine::targets();
         if (std::find(targets.begin(), targets.end(), target) == targets.end())
           throw Stop{2, "--target must be " + alternatives(targets)};
         o.emitOptions.target = target; // whose pipeline `compile` shows
         o.debug.target = target;       // what jit compiles for when no :target is named
       },
       ""},
      {"--entry", Takes::Value, [](Options& o, const std::string& v) { o.entry = v; }, ""},
      {"--sig", Takes::Value, [](Options& o, const std::string& v) { o.signature = v; }, ""},
      {"-o", Takes::Value, [](Options& o, const std::string& v) { o.output = v; }, ""},
      {"--emit", Takes::Value,
       [](Options& o, const std::string& kind) {
         const std::vector<std::string> names = emitNames();
         if (std::find(names.begin(), names.end(), kind) == names.end())
           throw Stop{2, "--emit must be " + alternatives(names)};
         o.emit = kind;
       },
       ""},
      {"--stage", Takes::Value,
       [](Options& o, const std::string& stage) {
         if (stage != "raw" && stage != "optimized") throw Stop{2, "--stage must be raw or optimized"};
         o.emitOptions.raw = stage == "raw";
       },
       ""},
      {"--pictures", Takes::Value,
       [](Options& o, const std::string& dir) {
         if (dir.empty()) throw Stop{2, "--pictures needs a folder"};
         o.pictures = dir;
       },
       "--pictures needs a folder"},
      {"--open", Takes::Nothing, [](Options& o, const std::string&) { o.open = true; }, ""},
      {"--keep-going", Takes::Nothing, [](Options& o, const std::string&) { o.keepGoing = true; }, ""},
      {"--ranks", Takes::Value,
       [](Options& o, const std::string& value) {
         char* end = nullptr;
         const long ranks = std::strtol(value.c_str(), &end, 10);
         if (value.empty() || *end != '\0' || ranks < 1 || ranks > 4096)
           throw Stop{2, "--ranks must be a number from 1 to 4096"};
         o.ranks = static_cast<int>(ranks);
       },
       "--ranks needs a number"},
      {"--bucket-bytes", Takes::Value,
       [](Options& o, const std::string& value) {
         char* end = nullptr;
         const long long bytes = std::strtoll(value.c_str(), &end, 10);
         if (value.empty() || *end != '\0' || bytes < 0 || bytes > (1ll << 40))
           throw Stop{2, "--bucket-bytes must be a number of bytes from 0 (no buckets) to 2^40"};
         o.debug.bucketBytes = bytes;
       },
       ""},
      {"--no-locations", Takes::Nothing, [](Options& o, const std::string&) { o.emitOptions.locations = false; }, ""},
  };
  for (int level = 0; level <= 3; ++level)
    flags.push_back({"-O" + std::to_string(level), Takes::Nothing,
                     [level](Options& o, const std::string&) { o.debug.optLevel = level; }, ""});
  // The targets' flags, checked in the target's words.
  for (const Engine::TargetFlag& target : Engine::targetFlags()) {
    const std::string name = "--" + target.name;
    if (std::any_of(flags.begin(), flags.end(), [&](const Flag& f) { return f.name == name; })) continue;
    flags.push_back({name, target.valueOptional ? Takes::OptionalValue : Takes::Value,
                     [flag = target.name](Options& o, const std::string& value) {
                       try {
                         o.debug.flags.emplace_back(flag, Engine::checkTargetFlag(flag, value));
                       } catch (const Error& e) {
                         throw Stop{2, e.message()};
                       }
                     },
                     ""});
  }
  return flags;
}

/// Applies the flag `arg` (taking its value from `argv[i + 1]` if it needs one); false if
/// no flag of the table is `arg`.
bool applyFlag(const std::vector<Flag>& flags, const std::string& arg, int argc, char** argv, int& i,
               Options& options) {
  using Takes = Flag::Takes;
  for (const Flag& flag : flags) {
    const bool inline_ = flag.takes == Takes::Value || flag.takes == Takes::OptionalValue;
    if (inline_ && arg.starts_with(flag.name + "=")) {
      flag.apply(options, arg.substr(flag.name.size() + 1));
      return true;
    }
    if (arg != flag.name) continue;
    if (flag.takes == Takes::Nothing || flag.takes == Takes::OptionalValue) {
      flag.apply(options, "");
      return true;
    }
    if (i + 1 >= argc) throw Stop{2, flag.missing.empty() ? flag.name + " needs a value" : flag.missing};
    flag.apply(options, argv[++i]);
    return true;
  }
  return false;
}

/// A line of the help: `left` in a column of 24 after `indent`, then `help` (lines after
/// the first under it).
std::string row(size_t indent, const std::string& left, const std::string& help) {
  constexpr size_t kColumn = 26;
  std::string out(indent, ' ');
  out += left;
  out += out.size() + 2 > kColumn ? "\n" + std::string(kColumn, ' ') : std::string(kColumn - out.size(), ' ');
  for (char c : help) out += c == '\n' ? "\n" + std::string(kColumn, ' ') : std::string(1, c);
  return out + "\n";
}

} // namespace

std::optional<int> parseArguments(int argc, char** argv, Options& options) {
  const std::vector<Flag> flags = flagTable();
  bool programArgs = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (programArgs) {
        options.rest.push_back(arg);
        options.forwarded.push_back(arg);
        continue;
      }
      const int first = i;
      if (applyFlag(flags, arg, argc, argv, i, options)) {
        if (arg != "--ranks" && !arg.starts_with("--ranks="))
          for (int j = first; j <= i; ++j) options.forwarded.push_back(argv[j]);
        continue;
      }
      options.forwarded.push_back(arg);
      if (arg.starts_with("-") && arg != "-") {
        std::cerr << "tsl: unknown option '" << arg << "'\n" << usage();
        return 2;
      }
      options.rest.push_back(arg);
      programArgs = (options.rest.size() == 2 && options.rest[0] == "run") ||
                    (options.rest.size() == 1 && options.rest[0] == "kernel");
    }
  } catch (const Stop& stop) {
    if (!stop.message.empty()) std::cerr << "tsl: " << stop.message << "\n";
    return stop.status;
  }
  if (options.open && options.pictures.empty()) {
    std::cerr << "tsl: --open opens the pictures --pictures DIR writes: give --pictures too\n";
    return 2;
  }
  return std::nullopt;
}

std::string usage() {
  std::string emits;
  for (const Engine::EmitKind& kind : Engine::emitKinds())
    emits += "\n" + kind.name + ": " + kind.help + " (:" + kind.target + ")";
  std::string targets;
  for (const std::string& target : Engine::targets()) targets += (targets.empty() ? "" : ", ") + target;
  std::string out = "usage: tsl [options] [command]\n\ncommands:\n";
  out += row(2, "(none)", "start the interactive REPL");
  out += row(2, "run FILE [ARGS...]", "run a program; *args* holds ARGS; FILE - reads standard input");
  out += row(6, "--keep-going", "a top-level form that fails is reported and the next one\nruns (the exit status is still 1); for batches of tests");
  out += row(6, "--ranks N",
             "run FILE as N ranks under mpirun on this machine (the world of\nworld-rank, all-reduce...; docs/distributed.md)");
  out += row(2, "kernel install [--user|--prefix DIR]",
             "install the Jupyter kernel's kernelspec (system-wide by default);\n"
             "`tsl kernel -f FILE` runs the kernel (Jupyter starts it)");
  out += row(2, "check FILE", "report every error that can be found without running FILE");
  out += row(2, "compile FILE --entry NAME --sig SIG",
             "print function NAME of FILE compiled for the parameters SIG,\n"
             "e.g. --sig \"x:f32[128,64],y:i64[128]\" (sizes may be names: f32[n,64]);\n"
             "FILE's definitions are loaded, nothing else of it runs");
  out += row(6, "--emit=KIND",
             "ir: the IR after the target's passes (default); graph: Graphviz\n"
             "DOT; or what a target makes (native code is ahead-of-time code):" + emits);
  out += row(6, "--stage=raw", "the IR as lowered, before the optimisation passes");
  out += row(6, "--pass=NAME",
             "run pass NAME instead of the target's pipeline (repeatable,\nin order; an unknown name lists them)");
  out += row(6, "--target-cpu=CPU", "native code for CPU (default x86-64-v3; native: this machine)");
  out += row(6, "--no-locations", "leave the loc(...) source positions out of the IR");
  out += row(6, "-o OUT", "write to OUT (atomically) instead of standard output");
  const std::vector<Engine::TargetFlag> flags = Engine::targetFlags();
  for (const Engine::TargetCommand& command : Engine::targetCommands()) {
    out += row(2, command.usage, command.help);
    for (const Engine::TargetFlag& flag : flags)
      if (flag.command == command.name) out += row(6, flag.usage, flag.help);
  }
  out += "\noptions:\n";
  out += row(2, "--max-depth N", "nested calls allowed before \"stack depth exceeded\" (10000)");
  out += row(2, "--target=T",
             "the target jit compiles for when no :target is named, and whose\npipeline `compile` shows: " +
                 targets + " (the first is the default)");
  out += row(2, "-O0 .. -O3", "the optimisation level of generated code (default -O2)");
  out += row(2, "--print-ir-after=PASS", "print the IR after each run of PASS (repeatable)");
  out += row(2, "--print-ir-after-all", "print the IR after every pass");
  out += row(2, "--verify-each", "verify the IR after every pass");
  out += row(2, "--time-passes", "report the time each pass takes");
  out += row(2, "--explain-recompile", "say why a jit function compiles another version");
  out += row(2, "--print-memory-plan", "print each compiled function's buffers: offsets, lifetimes, peak");
  out += row(2, "--print-fallbacks", "list the operations compiled code runs on eager kernels");
  out += row(2, "--pictures DIR",
             "the REPL and run write each picture shown — a plot displayed or\n"
             "printed at the REPL, (tc-trace), layout-svg, graph — as\n"
             "DIR/picture-N.svg and say so on stderr (docs/plots.md)");
  out += row(2, "--open", "with --pictures: open each picture with xdg-open");
  out += row(2, "--bucket-bytes=N", "bucket size of the compiled all-reduces overlapped with\ncomputation (default 26214400, 25 MiB; 0: none)");
  for (const Engine::TargetFlag& flag : flags)
    if (flag.command.empty() && !flag.usage.empty()) out += row(2, flag.usage, flag.help);
  out += row(2, "-h, --help", "show this help");
  out += row(2, "--version", "show the version");
  return out;
}

} // namespace tsl::cli
