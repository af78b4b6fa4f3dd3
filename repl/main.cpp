// repl/main.cpp — the `tsl` command.
//
//   tsl                          interactive REPL
//   tsl run FILE [ARGS...]       run a program, *args* bound to ARGS ("-" reads stdin)
//   tsl check FILE               read and expand a program, report every error found
//   tsl --help | --version
//
// Everything runs on a thread with a large stack so that the call-depth limit (10 000 by
// default, --max-depth N), not the native stack, is what deep recursion meets.
#include "eval/Interp.h"
#include "parser/Diagnostics.h"
#include "repl/Repl.h"
#include "tsl/tsl.h"

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
  check FILE              report every error that can be found without running FILE

options:
  --max-depth N           nested calls allowed before "stack depth exceeded" (10000)
  -h, --help              show this help
  --version               show the version
)";

struct Options {
  int maxDepth = 10000;
  std::vector<std::string> rest; ///< command and its arguments
};

bool readSource(const std::string& path, std::string& text, std::string& name) {
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    name = "<stdin>";
    return true;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::cerr << "io error: cannot read '" << path << "': it is a directory\n";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "io error: cannot open '" << path << "': " << std::strerror(errno) << "\n";
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    std::cerr << "io error: cannot read '" << path << "'\n";
    return false;
  }
  text = buffer.str();
  name = path;
  return true;
}

int runFile(const Options& options) {
  if (options.rest.size() < 2) {
    std::cerr << "usage: tsl run FILE [ARGS...]\n";
    return 2;
  }
  std::string text, name;
  if (!readSource(options.rest[1], text, name)) return 1;
  tsl::Engine engine(options.maxDepth);
  engine.setArgs(std::vector<std::string>(options.rest.begin() + 2, options.rest.end()));
  try {
    engine.eval(text, name);
  } catch (const tsl::Error& e) {
    std::cout << std::flush;
    std::cerr << engine.describe(e);
    return 1;
  } catch (const tsl::ExitRequest& request) {
    std::cout << std::flush;
    return request.code;
  }
  std::cout << std::flush;
  return 0;
}

int checkFile(const Options& options) {
  if (options.rest.size() != 2) {
    std::cerr << "usage: tsl check FILE\n";
    return 2;
  }
  std::string text, name;
  if (!readSource(options.rest[1], text, name)) return 1;
  tsl::Engine engine(options.maxDepth);
  const std::vector<tsl::Error> errors = engine.check(text, name);
  for (const tsl::Error& e : errors) std::cerr << engine.describe(e);
  if (!errors.empty()) {
    std::cerr << errors.size() << (errors.size() == 1 ? " error" : " errors") << " in " << name << "\n";
    return 1;
  }
  return 0;
}

int dispatch(const Options& options) {
  try {
    if (options.rest.empty()) {
      tsl::Engine engine(options.maxDepth);
      return tsl::runRepl(engine);
    }
    const std::string& command = options.rest[0];
    if (command == "run") return runFile(options);
    if (command == "check") return checkFile(options);
    std::cerr << "tsl: unknown command '" << command << "'\n" << kUsage;
    return 2;
  } catch (const tsl::Error& e) {
    std::cerr << tsl::renderHeadline(e);
    return 1;
  }
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
    if (arg.starts_with("-") && arg != "-") {
      std::cerr << "tsl: unknown option '" << arg << "'\n" << kUsage;
      return 2;
    }
    options.rest.push_back(arg);
    programArgs = options.rest.size() == 2 && options.rest[0] == "run";
  }
  return tsl::runOnLargeStack([&] { return dispatch(options); });
}
