// kernel/Interpreter.h — TSL as a Jupyter kernel: one tsl::Engine behind xeus's
// interpreter interface (execute, complete, inspect, is_complete, kernel_info).
//
// Every shell request runs on the thread that started the kernel (xeus's one-thread ZeroMQ
// server), the engine's only thread. Output is published as it comes: print's text as the
// stdout stream, std::cerr as stderr, a cell's last value as its execute_result, an error
// as a Jupyter error, `display` and live output through the engine's display sink.
#pragma once

#include "tsl/tsl.h"

#include <xeus/xinterpreter.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <streambuf>
#include <string>

namespace tsl::kernel {

/// A stream buffer that publishes what is written to it as a Jupyter stream (stdout or
/// stderr) — a line at a time, or in batches when lines come fast — while a request runs.
class StreamPublisher : public std::streambuf {
public:
  StreamPublisher(xeus::xinterpreter& interpreter, std::string name) : interpreter_(interpreter), name_(std::move(name)) {}
  /// Publishes what is pending.
  void flushPending();
  /// While muted (a silent execute), output is dropped.
  void setMuted(bool muted) { muted_ = muted; }

protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

private:
  void maybePublish();
  xeus::xinterpreter& interpreter_;
  std::string name_;
  std::string pending_;
  bool muted_ = false;
  std::chrono::steady_clock::time_point last_{};
};

class Interpreter : public xeus::xinterpreter {
public:
  Interpreter();
  ~Interpreter() override;
  /// The engine, for the interrupt thread (Engine::interrupt is async-signal-safe).
  Engine& engine() { return *engine_; }
  /// Flushes pending stream output (before a display, so the order is kept).
  void flushStreams();

private:
  void configure_impl() override;
  nl::json execute_request_impl(int execution_counter, const std::string& code, bool silent, bool store_history,
                                nl::json user_expressions, bool allow_stdin) override;
  nl::json complete_request_impl(const std::string& code, int cursor_pos) override;
  nl::json inspect_request_impl(const std::string& code, int cursor_pos, int detail_level) override;
  nl::json is_complete_request_impl(const std::string& code) override;
  nl::json kernel_info_request_impl() override;
  void shutdown_request_impl() override;

  nl::json errorReply(const std::string& ename, const std::string& evalue, const std::vector<std::string>& traceback,
                      bool publish);

  StreamPublisher out_;
  StreamPublisher err_;
  std::ostream outStream_;
  std::streambuf* savedCerr_ = nullptr;
  std::unique_ptr<Engine> engine_;
};

/// A bundle as Jupyter's `data` object.
nl::json bundleJson(const MimeBundle& bundle);

/// The name under (or just before) byte `at` of `code`, and where it starts.
struct Word {
  std::string text;
  size_t start = 0;
};
Word wordAt(const std::string& code, size_t at);
/// The head of the innermost unclosed list `(head ...` before byte `at`, or empty.
std::string enclosingHead(const std::string& code, size_t at);
/// Byte offset of code point `codePoints` in UTF-8 `text` (Jupyter counts code points).
size_t byteOffset(const std::string& text, size_t codePoints);
size_t codePointCount(const std::string& text, size_t bytes);
/// The keyword options (`:axis`...) a documentation text's call forms name.
std::vector<std::string> documentedKeywords(const std::string& doc);

} // namespace tsl::kernel
