// repl/Repl.cpp — read, evaluate, print, survive.
//
// Input is collected line by line until the forms balance (a continuation prompt shows
// more is expected). Each form's value is printed; an error is printed with its source
// line and caret and the session goes on. Ctrl-C abandons unfinished input, or stops the
// running evaluation with `runtime error: interrupted`.
#include "repl/Repl.h"

#include "tsl/tsl.h"
#include "repl/LineEditor.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <chrono>
#include <iostream>
#include <sstream>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

namespace tsl {

namespace {

Engine* activeEngine = nullptr;
cli::Pictures* activePictures = nullptr; ///< tsl --pictures DIR: where pictures printed go

extern "C" void onInterrupt(int) {
  // While typing, the line editor takes it; while evaluating, the engine stops.
  if (!LineEditor::takeInterrupt() && activeEngine) activeEngine->interrupt();
}

/// The REPL's help: its own commands, then those the targets add (Engine::replCommands).
std::string helpText() {
  std::string out = R"(TSL REPL commands:
  :help          this text
  :quit          leave (Ctrl-D does too)
  :load FILE     run a file in this session
  :ir (f x ...)  the IR of f compiled for the arguments x ... (after optimisation)
  :graph (f x ...)  the same as Graphviz DOT (render with: dot -Tsvg)
  :time expr        evaluate expr, then say how long it took
  :doc name         the documentation of a function, primitive or builtin
)";
  for (const Engine::ReplCommand& c : Engine::replCommands()) {
    std::string left = "  " + c.command + (c.takesCall ? " (f x ...)" : "");
    left += std::string(left.size() < 19 ? 20 - left.size() : 1, ' ');
    out += left + c.help + "\n";
  }
  return out + R"(Enter any TSL form to evaluate it; unfinished forms continue on the next line.
Ctrl-C abandons the current input or stops a running evaluation.
)";
}

std::string historyPath() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.tsl_history" : std::string();
}

/// While an evaluation runs, lines the user types ahead wait in the terminal; a Ctrl-C
/// would make the terminal driver discard them (it flushes its input queue on the
/// interrupt character unless NOFLSH is set), so NOFLSH is set for the evaluation.
class KeepTypeAhead {
public:
  KeepTypeAhead() {
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios keep = saved_;
    keep.c_lflag |= NOFLSH;
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &keep) == 0;
  }
  ~KeepTypeAhead() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  KeepTypeAhead(const KeepTypeAhead&) = delete;
  KeepTypeAhead& operator=(const KeepTypeAhead&) = delete;

private:
  termios saved_{};
  bool active_ = false;
};

/// How an evaluation ended.
enum class Outcome { Done, Failed, Exit };

/// Prints a value; a plot, at a terminal, is drawn below its summary in characters
/// (plot-text, docs/plots.md), as wide as the terminal. Without gnuplot only the summary
/// shows: the value was printed, and a drawing is not worth an error.
void printValue(Engine& engine, const Value& value) {
  const std::string text = engine.print(value);
  std::cout << text << std::endl;
  if (activePictures) writePicture(engine, *activePictures, value);
  if (!text.starts_with("#<plot ") || !isatty(STDOUT_FILENO)) return;
  winsize size{};
  const bool known = ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20 && size.ws_row >= 10;
  const int64_t width = known ? std::min<int64_t>(size.ws_col - 1, 160) : 80;
  const int64_t height = known ? std::min<int64_t>(size.ws_row - 2, 30) : 24;
  try {
    const Value drawing = engine.call("plot-text", {value, engine.eval(":width"), Value(Tensor::ofInt(width)),
                                                    engine.eval(":height"), Value(Tensor::ofInt(height))});
    engine.call("println", {drawing});
    std::cout << std::flush;
  } catch (const Error&) {
  }
}

/// Evaluates `text` form by form, printing each value, or the error that stopped it.
Outcome evaluate(Engine& engine, const std::string& text, int& exitCode) {
  KeepTypeAhead keep;
  try {
    engine.evalEach(text, "<repl>", [&](const Value& value) { printValue(engine, value); });
  } catch (const Error& e) {
    std::cout << std::flush;
    std::cerr << engine.describe(e) << std::flush;
    return Outcome::Failed;
  } catch (const std::bad_alloc&) { // printing a value too large for memory, say
    std::cout << std::flush;
    std::cerr << "runtime error: out of memory\n" << std::flush;
    return Outcome::Failed;
  } catch (const ExitRequest& request) {
    exitCode = request.code;
    return Outcome::Exit;
  }
  return Outcome::Done;
}

/// A printed map with each top-level entry on a line of its own:
///   {:cycles 36,
///    :serial-cycles 36, ...}
/// An entry starts at a keyword at the map's own level, outside strings; the values of
/// the maps this is for (a target's statistics) are never keywords.
std::string entryPerLine(const std::string& printed) {
  std::string out;
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < printed.size(); ++i) {
    const char c = printed[i];
    if (inString) {
      if (c == '\\' && i + 1 < printed.size()) out += printed[i++];
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[' || c == '(') {
      ++depth;
    } else if (c == '}' || c == ']' || c == ')') {
      --depth;
    } else if (c == ' ' && depth == 1 && i + 1 < printed.size() && printed[i + 1] == ':') {
      out += "\n ";
      continue;
    }
    out += c;
  }
  return out;
}

/// `:ir (f x ...)`, `:graph` and the inspections targets add: evaluates f and the
/// arguments, then prints what the builtin `inspector` ((ir f x ...), (graph ...) ...)
/// returns.
void inspect(Engine& engine, const std::string& command, const std::string& argument, const char* inspector) {
  if (argument.empty() || argument.front() != '(') {
    std::cerr << "usage: " << command << " (f arg...)\n";
    return;
  }
  try {
    const std::string text = engine.inspect(argument, inspector);
    std::cout << text << std::flush;
    if (activePictures) writePicture(engine, *activePictures, makeString(text)); // :graph's picture
  } catch (const Error& e) {
    std::cout << std::flush;
    std::cerr << engine.describe(e) << std::flush;
  } catch (const ExitRequest&) {
    std::cerr << "(exit) is ignored inside " << command << "\n";
  }
}

/// Handles a `:command` line. Returns false to end the session.
bool command(Engine& engine, const std::string& line, int& exitCode, bool& handled) {
  std::istringstream words(line);
  std::string name, argument;
  words >> name;
  std::getline(words >> std::ws, argument);
  handled = true;
  if (name == ":quit" || name == ":q") return false;
  if (name == ":help" || name == ":h") {
    std::cout << helpText();
    return true;
  }
  if (name == ":load") {
    if (argument.empty()) {
      std::cerr << "usage: :load FILE\n";
      return true;
    }
    try {
      engine.evalFile(argument);
      std::cout << "loaded " << argument << std::endl;
    } catch (const Error& e) {
      std::cerr << engine.describe(e);
    } catch (const ExitRequest& request) {
      exitCode = request.code;
      return false;
    }
    return true;
  }
  if (name == ":time") {
    if (argument.empty()) {
      std::cerr << "usage: :time expr\n";
      return true;
    }
    const auto start = std::chrono::steady_clock::now();
    const Outcome outcome = evaluate(engine, argument, exitCode);
    // Only what finished is timed: after an error the error is all there is to say.
    if (outcome != Outcome::Done) return outcome != Outcome::Exit;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::cout << "; " << (ms < 10 ? std::to_string(ms).substr(0, 5) : std::to_string(static_cast<int64_t>(ms + 0.5)))
              << " ms" << std::endl;
    return true;
  }
  if (name == ":doc") {
    if (argument.empty() || argument.find_first_of(" \t()") != std::string::npos) {
      std::cerr << "usage: :doc name\n";
      return true;
    }
    try {
      std::cout << engine.doc(argument) << std::flush;
    } catch (const Error& e) {
      std::cerr << engine.describe(e) << std::flush;
    }
    return true;
  }
  for (const Engine::ReplCommand& c : Engine::replCommands()) {
    if (name != c.command) continue;
    if (c.takesCall) {
      inspect(engine, name, argument, c.builtin.c_str());
      return true;
    }
    // A target's statistics: the map its builtin gives, with its kebab-case keys, an
    // entry per line (the JSON of `tsl run`'s flags is for programs, not people).
    try {
      std::cout << entryPerLine(engine.print(engine.eval("(" + c.builtin + ")", "<" + c.builtin + ">"))) << std::endl;
    } catch (const Error& e) {
      std::cerr << engine.describe(e) << std::flush;
    } catch (const ExitRequest& request) { // a session that redefined the builtin
      exitCode = request.code;
      return false;
    }
    return true;
  }
  for (const auto& [command, inspector] : {std::pair{":ir", "ir"}, std::pair{":graph", "graph"}})
    if (name == command) {
      inspect(engine, name, argument, inspector);
      return true;
    }
  handled = false; // a keyword to evaluate, such as :a
  return true;
}

} // namespace

int runRepl(Engine& engine, cli::Pictures* pictures) {
  activeEngine = &engine;
  activePictures = pictures;
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0; // no SA_RESTART: a blocked wait must see EINTR
  sigaction(SIGINT, &action, nullptr);

  LineEditor editor(historyPath(), [&engine](const std::string& prefix) {
    return engine.completions(prefix);
  });
  if (editor.interactive())
    std::cout << "TSL " << TSL_VERSION << " — :help for help, :quit or Ctrl-D to leave" << std::endl;

  int exitCode = 0;
  std::string pending;
  for (;;) {
    std::string line;
    const LineEditor::Status status = editor.read(pending.empty() ? "tsl> " : "...> ", line);
    if (status == LineEditor::Status::EndOfInput) {
      const bool unfinished = pending.find_first_not_of(" \t\n") != std::string::npos;
      if (editor.interactive()) {
        std::cout << std::endl;
        if (unfinished) {
          // Ctrl-D in the middle of a form drops the form, not the session (as Python's
          // REPL does); another Ctrl-D at the fresh prompt leaves.
          std::cout << "(unfinished form discarded; Ctrl-D again to leave)" << std::endl;
          pending.clear();
          continue;
        }
      } else if (unfinished) {
        evaluate(engine, pending, exitCode); // input ended mid-form: report it (unclosed '(')
      }
      break;
    }
    if (status == LineEditor::Status::Interrupted) {
      pending.clear();
      continue;
    }
    if (pending.empty() && line.starts_with(":")) {
      bool handled = false;
      if (!command(engine, line, exitCode, handled)) break;
      if (handled) {
        editor.remember(line);
        continue;
      }
    }
    pending += line;
    pending += '\n';
    if (isIncomplete(pending)) continue;
    editor.remember(pending.substr(0, pending.size() - 1));
    const std::string text = std::move(pending);
    pending.clear();
    if (text.find_first_not_of(" \t\n") == std::string::npos) continue;
    if (evaluate(engine, text, exitCode) == Outcome::Exit) break;
  }
  activeEngine = nullptr;
  activePictures = nullptr;
  return exitCode;
}

} // namespace tsl
