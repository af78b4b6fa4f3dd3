// kernel/Interpreter.cpp — the Jupyter requests, answered by one tsl::Engine.
#include "kernel/Interpreter.h"

#include <xeus/xhelper.hpp>

#include <algorithm>
#include <iostream>
#include <new>
#include <sstream>

namespace tsl::kernel {

// ---- Streams ----

void StreamPublisher::flushPending() {
  if (pending_.empty()) return;
  std::string text;
  text.swap(pending_);
  last_ = std::chrono::steady_clock::now();
  if (!muted_) interpreter_.publish_stream(name_, text);
}

// A line is published at once unless the last message went out less than 50 ms ago; then
// lines gather (a loop printing thousands of lines sends a few messages), up to 64 KiB.
void StreamPublisher::maybePublish() {
  const auto now = std::chrono::steady_clock::now();
  if (pending_.size() > (64u << 10) || now - last_ > std::chrono::milliseconds(50)) flushPending();
}

StreamPublisher::int_type StreamPublisher::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  pending_ += traits_type::to_char_type(c);
  if (c == '\n') maybePublish();
  return c;
}

std::streamsize StreamPublisher::xsputn(const char* s, std::streamsize n) {
  pending_.append(s, static_cast<size_t>(n));
  if (std::string_view(s, static_cast<size_t>(n)).find('\n') != std::string_view::npos) maybePublish();
  return n;
}

int StreamPublisher::sync() {
  maybePublish();
  return 0;
}

// ---- Display ----

nl::json bundleJson(const MimeBundle& bundle) {
  nl::json data = nl::json::object();
  for (const auto& [mime, text] : bundle.items) data[mime] = text;
  return data;
}

namespace {

/// `display` and live output (progress bars): display_data, or update_display_data for a
/// display shown before under the same id.
class KernelSink : public DisplaySink {
public:
  explicit KernelSink(Interpreter& interpreter) : interpreter_(interpreter) {}
  void show(const MimeBundle& bundle, const std::string& id, bool update) override {
    interpreter_.flushStreams();
    nl::json transient = nl::json::object();
    if (!id.empty()) transient["display_id"] = id;
    if (update && !id.empty())
      interpreter_.update_display_data(bundleJson(bundle), nl::json::object(), std::move(transient));
    else
      interpreter_.display_data(bundleJson(bundle), nl::json::object(), std::move(transient));
  }

private:
  Interpreter& interpreter_;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool isWordChar(char c) {
  return !(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')' || c == '[' || c == ']' || c == '{' ||
           c == '}' || c == '"' || c == '\'' || c == '`' || c == ',' || c == ';' || c == '@' || c == '^' || c == '~');
}

} // namespace

// ---- Text positions ----

size_t byteOffset(const std::string& text, size_t codePoints) {
  size_t i = 0;
  for (size_t n = 0; i < text.size() && n < codePoints; ++n) {
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

size_t codePointCount(const std::string& text, size_t bytes) {
  size_t n = 0;
  for (size_t i = 0; i < bytes && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  return n;
}

Word wordAt(const std::string& code, size_t at) {
  at = std::min(at, code.size());
  size_t start = at;
  while (start > 0 && isWordChar(code[start - 1])) --start;
  size_t end = at;
  while (end < code.size() && isWordChar(code[end])) ++end;
  return Word{code.substr(start, end - start), start};
}

std::string enclosingHead(const std::string& code, size_t at) {
  // Walks back over balanced brackets (strings and comments are rare enough before a
  // cursor to be read as text) to the unclosed '(' and the name after it.
  int depth = 0;
  for (size_t i = std::min(at, code.size()); i-- > 0;) {
    const char c = code[i];
    if (c == ')' || c == ']' || c == '}') {
      ++depth;
    } else if (c == '(' || c == '[' || c == '{') {
      if (depth > 0) {
        --depth;
        continue;
      }
      if (c != '(') return {};
      size_t end = i + 1;
      while (end < code.size() && isWordChar(code[end])) ++end;
      return code.substr(i + 1, end - i - 1);
    }
  }
  return {};
}

std::vector<std::string> documentedKeywords(const std::string& doc) {
  // Call forms are the lines that start with '(': "(sum x :axis nil :keepdims false)".
  // After the first keyword, options and their defaults alternate.
  std::vector<std::string> out;
  for (const std::string& line : lines(doc)) {
    if (line.empty() || line[0] != '(') continue;
    std::istringstream words(line.substr(1));
    bool option = true, seenKeyword = false;
    for (std::string word; words >> word;) {
      while (!word.empty() && (word.back() == ')' || word.back() == ']')) word.pop_back();
      if (!seenKeyword && !(word.size() > 1 && word[0] == ':')) continue;
      seenKeyword = true;
      if (option && word.size() > 1 && word[0] == ':' &&
          std::find(out.begin(), out.end(), word) == out.end())
        out.push_back(word);
      option = !option;
    }
  }
  return out;
}

// ---- The interpreter ----

Interpreter::Interpreter() : out_(*this, "stdout"), err_(*this, "stderr"), outStream_(&out_) {
  xeus::register_interpreter(this);
  engine_ = std::make_unique<Engine>(10000, &outStream_);
  engine_->setDisplaySink(std::make_shared<KernelSink>(*this));
  savedCerr_ = std::cerr.rdbuf(&err_);
}

Interpreter::~Interpreter() { std::cerr.rdbuf(savedCerr_); }

void Interpreter::configure_impl() {}

void Interpreter::flushStreams() {
  outStream_.flush();
  out_.flushPending();
  err_.flushPending();
}

nl::json Interpreter::errorReply(const std::string& ename, const std::string& evalue,
                                 const std::vector<std::string>& traceback, bool publish) {
  flushStreams();
  if (publish) publish_execution_error(ename, evalue, traceback);
  // Built by hand: xeus 2.4's create_error_reply swaps ename and evalue.
  nl::json reply;
  reply["status"] = "error";
  reply["ename"] = ename;
  reply["evalue"] = evalue;
  reply["traceback"] = traceback;
  return reply;
}

nl::json Interpreter::execute_request_impl(int executionCounter, const std::string& code, bool silent,
                                           bool /*storeHistory*/, nl::json /*userExpressions*/, bool /*allowStdin*/) {
  out_.setMuted(silent);
  err_.setMuted(silent);
  struct Unmute {
    Interpreter& self;
    ~Unmute() {
      self.flushStreams();
      self.out_.setMuted(false);
      self.err_.setMuted(false);
    }
  } unmute{*this};
  Value last;
  try {
    engine_->evalEach(code, "In[" + std::to_string(executionCounter) + "]", [&](const Value& value) { last = value; });
  } catch (const Error& e) {
    // ename is the kind as TSL names it ("type error"); the traceback is what the REPL
    // prints: file:line:col, kind and message, the source line and its caret.
    const std::string ename = std::string(errorKindName(e.kind())) + " error";
    return errorReply(ename, e.message(), lines(engine_->describe(e)), !silent);
  } catch (const ExitRequest&) {
    flushStreams();
    if (!silent) publish_stream("stderr", "(exit) does not end a notebook's kernel: restart it instead\n");
    return xeus::create_successful_reply();
  } catch (const std::bad_alloc&) {
    return errorReply("runtime error", "out of memory", {"runtime error: out of memory"}, !silent);
  }
  flushStreams();
  if (!silent && !last.isNil()) {
    try {
      publish_execution_result(executionCounter, bundleJson(engine_->represent(last)), nl::json::object());
    } catch (const Error& e) {
      const std::string ename = std::string(errorKindName(e.kind())) + " error";
      return errorReply(ename, e.message(), lines(engine_->describe(e)), true);
    }
  }
  return xeus::create_successful_reply();
}

nl::json Interpreter::complete_request_impl(const std::string& code, int cursorPos) {
  const size_t at = byteOffset(code, static_cast<size_t>(std::max(cursorPos, 0)));
  const Word word = wordAt(code, at);
  const std::string prefix = word.text.substr(0, at - word.start);
  std::vector<std::string> matches;
  if (prefix.starts_with(':')) {
    // A keyword: the options of the primitive (or documented function) being called.
    const std::string head = enclosingHead(code, word.start);
    if (!head.empty()) {
      try {
        for (const std::string& k : documentedKeywords(engine_->doc(head)))
          if (k.starts_with(prefix)) matches.push_back(k);
      } catch (const Error&) {
        // not a documented name: no keywords to offer
      }
    }
  } else {
    matches = engine_->completions(prefix);
  }
  const int start = static_cast<int>(codePointCount(code, word.start));
  const int end = static_cast<int>(codePointCount(code, word.start + word.text.size()));
  return xeus::create_complete_reply(matches, start, end);
}

nl::json Interpreter::inspect_request_impl(const std::string& code, int cursorPos, int /*detailLevel*/) {
  const size_t at = byteOffset(code, static_cast<size_t>(std::max(cursorPos, 0)));
  std::string name = wordAt(code, at).text;
  if (name.empty() || name[0] == ':') name = enclosingHead(code, at);
  if (name.empty()) return xeus::create_inspect_reply(false);
  try {
    return xeus::create_inspect_reply(true, nl::json{{"text/plain", engine_->doc(name)}});
  } catch (const Error&) {
    return xeus::create_inspect_reply(false);
  }
}

nl::json Interpreter::is_complete_request_impl(const std::string& code) {
  // The REPL's own rule: an open bracket or string reads another line.
  if (isIncomplete(code)) return xeus::create_is_complete_reply("incomplete", "  ");
  // A form the reader refuses (an unmatched `)`, a bad literal) can never be completed.
  try {
    for (const Error& error : engine_->check(code, "<cell>"))
      if (error.kind() == ErrorKind::Syntax) return xeus::create_is_complete_reply("invalid");
  } catch (const Error&) {
    // what check cannot judge is left to execution, which reports it
  }
  return xeus::create_is_complete_reply("complete");
}

nl::json Interpreter::kernel_info_request_impl() {
  // TSL reads like Clojure: its highlighting (Pygments, CodeMirror) fits.
  nl::json info = xeus::create_info_reply("5.3", "tsl-kernel", TSL_VERSION, "tsl", TSL_VERSION, "text/x-tsl", ".tsl",
                                          "clojure", "clojure", "",
                                          "TSL " TSL_VERSION " - a Lisp for tensor programs (Shift-Tab shows a "
                                          "name's :doc; (display v) shows a value)",
                                          false, nl::json::array());
  info["language_info"].erase("nbconvert_exporter"); // the generic script exporter
  return info;
}

void Interpreter::shutdown_request_impl() { flushStreams(); }

} // namespace tsl::kernel
