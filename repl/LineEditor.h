// repl/LineEditor.h — line input for the REPL on libedit.
//
// Line editing, persistent history and completion come from libedit. Ctrl-C while typing
// abandons the current input (and a half-entered multi-line form) and shows a fresh
// prompt, which needs libedit's callback interface: a blocking readline() cannot be
// interrupted cleanly. When standard input is not a terminal, lines are read plainly.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tsl {

class LineEditor {
public:
  enum class Status { Line, Interrupted, EndOfInput };

  /// `historyFile` empty: no persistent history. `complete` lists the names that start
  /// with a prefix.
  LineEditor(std::string historyFile, std::function<std::vector<std::string>(const std::string&)> complete);
  ~LineEditor();

  /// Reads one line after printing `prompt`.
  Status read(const std::string& prompt, std::string& line);
  /// Adds an entry (a whole, possibly multi-line, input) to the history.
  void remember(const std::string& entry);
  bool interactive() const { return interactive_; }

  /// Called from the SIGINT handler: whether the editor was waiting for input (and so
  /// takes the interrupt itself).
  static bool takeInterrupt() noexcept;

private:
  std::string historyFile_;
  bool interactive_;
};

} // namespace tsl
