// repl/LineEditor.cpp — libedit's callback interface driven by select(), so that a
// Ctrl-C can abandon the line being edited. The SIGINT handler writes a byte to a pipe
// that select() watches beside standard input (the self-pipe trick), so the wait wakes
// whichever thread the signal lands on.
#include "repl/LineEditor.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <editline/readline.h>
#include <iostream>
#include <sys/select.h>
#include <unistd.h>

namespace tsl {

namespace {

std::atomic<bool> waitingForInput{false};
volatile std::sig_atomic_t interruptPending = 0;
int wakePipe[2] = {-1, -1}; // [0] watched by select, [1] written by the signal handler

void drainWakePipe() {
  char bytes[64];
  while (wakePipe[0] >= 0 && ::read(wakePipe[0], bytes, sizeof bytes) > 0) {
  }
}

// libedit's callback interface delivers the finished line through a C function.
bool lineReady = false;
bool endOfInput = false;
std::string finishedLine;

void onLine(char* line) {
  lineReady = true;
  if (!line) {
    endOfInput = true;
  } else {
    finishedLine = line;
    std::free(line);
  }
  rl_callback_handler_remove();
}

std::function<std::vector<std::string>(const std::string&)>* completer = nullptr;
std::vector<std::string> candidates;

char* nextCandidate(const char* text, int state) {
  static size_t index;
  if (state == 0) {
    candidates = (*completer)(text);
    index = 0;
  }
  if (index >= candidates.size()) return nullptr;
  return strdup(candidates[index++].c_str());
}

char** completeName(const char* text, int, int) {
  rl_attempted_completion_over = 1; // never fall back to file names
  return rl_completion_matches(text, nextCandidate);
}

} // namespace

bool LineEditor::takeInterrupt() noexcept {
  if (!waitingForInput.load()) return false;
  interruptPending = 1;
  if (wakePipe[1] >= 0) {
    const int saved = errno; // write() is async-signal-safe; errno must survive the handler
    const char byte = 1;
    [[maybe_unused]] const ssize_t written = ::write(wakePipe[1], &byte, 1);
    errno = saved;
  }
  return true;
}

LineEditor::LineEditor(std::string historyFile,
                       std::function<std::vector<std::string>(const std::string&)> complete)
    : historyFile_(std::move(historyFile)), interactive_(isatty(STDIN_FILENO) != 0) {
  static std::function<std::vector<std::string>(const std::string&)> storedCompleter;
  storedCompleter = std::move(complete);
  completer = &storedCompleter;
  if (!interactive_) return;
  if (wakePipe[0] < 0 && pipe2(wakePipe, O_CLOEXEC | O_NONBLOCK) != 0) wakePipe[0] = wakePipe[1] = -1;
  rl_catch_signals = 0; // SIGINT is ours: it interrupts select() below
  rl_readline_name = const_cast<char*>("tsl");
  rl_attempted_completion_function = completeName;
  static char breaks[] = " \t\n()[]{}'\"`,;~";
  rl_completer_word_break_characters = breaks;
  using_history();
  stifle_history(2000);
  if (!historyFile_.empty()) read_history(historyFile_.c_str());
}

LineEditor::~LineEditor() {
  if (interactive_ && !historyFile_.empty()) write_history(historyFile_.c_str());
}

void LineEditor::remember(const std::string& entry) {
  if (!interactive_ || entry.find_first_not_of(" \t\n") == std::string::npos) return;
  add_history(entry.c_str());
  if (!historyFile_.empty()) write_history(historyFile_.c_str());
}

LineEditor::Status LineEditor::read(const std::string& prompt, std::string& line) {
  if (!interactive_) {
    std::cout << std::flush;
    if (!std::getline(std::cin, line)) return Status::EndOfInput;
    return Status::Line;
  }
  lineReady = false;
  endOfInput = false;
  drainWakePipe();
  interruptPending = 0;
  waitingForInput = true;
  rl_callback_handler_install(prompt.c_str(), onLine);
  Status status = Status::Line;
  while (!lineReady) {
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(STDIN_FILENO, &fds);
    if (wakePipe[0] >= 0) FD_SET(wakePipe[0], &fds);
    const int ready = interruptPending ? -1 : select(std::max(STDIN_FILENO, wakePipe[0]) + 1, &fds, nullptr, nullptr, nullptr);
    if (interruptPending) {
      // Abandon the line: clear it, leave the editor, move to a fresh line.
      drainWakePipe();
      rl_replace_line("", 0);
      rl_callback_handler_remove();
      std::fputs("\n", stdout);
      std::fflush(stdout);
      status = Status::Interrupted;
      break;
    }
    if (ready < 0) {
      if (errno == EINTR) continue;
      status = Status::EndOfInput;
      rl_callback_handler_remove();
      break;
    }
    if (FD_ISSET(STDIN_FILENO, &fds)) rl_callback_read_char();
  }
  waitingForInput = false;
  if (status != Status::Line) return status;
  if (endOfInput) return Status::EndOfInput;
  line = finishedLine;
  return Status::Line;
}

} // namespace tsl
