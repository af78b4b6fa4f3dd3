// tsl/Error.h — source spans and the one error type every layer throws.
//
// A user's mistake anywhere in TSL (reader, evaluator, kernels, compiler) becomes a
// tsl::Error carrying its kind, a lowercase message and, once known, the span of the
// source that caused it. Layers below the evaluator (the runtime's kernels) throw without
// a span; the evaluator attaches the span of the call that failed. Compiler bugs are
// ErrorKind::Internal and say so. This header is part of the public embedding API and the
// only thing the layers share, so it stays small and header-only.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tsl {

/// Interns a file name for the life of the process, so that spans can point at it
/// cheaply. Thread-safe; the returned pointer is stable and never freed.
inline const std::string* internFileName(std::string_view name) {
  static std::mutex mutex;
  static auto* names = new std::unordered_set<std::string>(); // never destroyed: spans outlive statics
  std::lock_guard<std::mutex> lock(mutex);
  return &*names->emplace(name).first;
}

/// A region of source text. Lines and columns count from 1; line 0 means "unknown".
/// Columns count Unicode code points. The end is inclusive of the last character.
struct Span {
  const std::string* file = nullptr;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t endLine = 0;
  uint32_t endCol = 0;

  bool known() const { return line != 0; }
  std::string_view fileName() const { return file ? std::string_view(*file) : "<unknown>"; }
  /// The span from the start of this one to the end of `last`.
  Span to(const Span& last) const {
    Span s = *this;
    s.endLine = last.endLine;
    s.endCol = last.endCol;
    return s;
  }
  bool operator==(const Span&) const = default;
};

/// Thrown by a program's `(exit code)` through the engine: the host decides what exiting
/// means (the `tsl` command exits with the code).
struct ExitRequest {
  int code;
};

/// The kinds of user error of docs/language.md §8 (User: raised by a program's own
/// `throw`), plus Internal for bugs in TSL itself.
enum class ErrorKind : uint8_t { Syntax, Name, Type, Shape, Value, Io, Assert, Runtime, Internal, User };

inline const char* errorKindName(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::Syntax: return "syntax";
  case ErrorKind::Name: return "name";
  case ErrorKind::Type: return "type";
  case ErrorKind::Shape: return "shape";
  case ErrorKind::Value: return "value";
  case ErrorKind::Io: return "io";
  case ErrorKind::Assert: return "assert";
  case ErrorKind::Runtime: return "runtime";
  case ErrorKind::Internal: return "internal";
  case ErrorKind::User: return "user";
  }
  return "internal";
}

/// Concatenates anything streamable; used to build error messages.
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// A user-visible error: kind, message and (once known) the span it points at.
class Error : public std::exception {
public:
  Error(ErrorKind kind, std::string message, Span span = {})
      : kind_(kind), message_(std::move(message)), span_(span) {
    refresh();
  }

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  const Span& span() const { return span_; }
  /// Extra lines printed after the caret (e.g. "note: in f called at ..."); a note that
  /// repeats the previous one is counted instead of printed again.
  std::string notes() const {
    std::string out;
    for (const auto& [text, repeats] : notes_) {
      out += text;
      if (repeats > 1) out += cat(" (", repeats, " times)");
      out += '\n';
    }
    return out;
  }

  /// Attaches a span unless one is already known: the innermost span wins.
  void setSpanIfUnknown(const Span& span) {
    if (!span_.known() && span.known()) span_ = span;
  }
  void setSpan(const Span& span) { span_ = span; }
  /// Adds a note; one equal to the previous note only counts up its repetitions, and
  /// beyond `maxDistinct` notes new ones are dropped.
  void addNote(std::string_view note, size_t maxDistinct = SIZE_MAX) {
    if (!notes_.empty() && notes_.back().first == note) ++notes_.back().second;
    else if (notes_.size() < maxDistinct) notes_.emplace_back(std::string(note), 1);
  }

  /// What a TSL `throw` attached (the error as a TSL value, for `catch`); hosts ignore it.
  const std::shared_ptr<const void>& payload() const { return payload_; }
  void setPayload(std::shared_ptr<const void> payload) { payload_ = std::move(payload); }

  /// "kind error: message", without position.
  const char* what() const noexcept override { return headline_.c_str(); }

private:
  void refresh() { headline_ = std::string(errorKindName(kind_)) + " error: " + message_; }

  ErrorKind kind_;
  std::string message_;
  Span span_;
  std::vector<std::pair<std::string, int>> notes_;
  std::string headline_;
  std::shared_ptr<const void> payload_;
};

// A backend's kernel library may be compiled without exceptions, so that the code it puts
// into ahead-of-time libraries needs no C++ runtime; it never fails, and there the
// functions below trap.
#if defined(__cpp_exceptions)
#define TSL_THROW(error) throw error
#else
#define TSL_THROW(error) __builtin_trap()
#endif

/// Throws a user error of `kind` whose message is the concatenation of `parts`.
template <typename... Parts>
[[noreturn]] void fail(ErrorKind kind, const Parts&... parts) {
  TSL_THROW(Error(kind, cat(parts...)));
}

/// Throws a user error at a known span.
template <typename... Parts>
[[noreturn]] void failAt(const Span& span, ErrorKind kind, const Parts&... parts) {
  TSL_THROW(Error(kind, cat(parts...), span));
}

} // namespace tsl

/// Checks an internal invariant. A failure is a bug in TSL, reported as an internal
/// error (never an abort), so a host program survives it.
#define TSL_ASSERT(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::tsl::fail(::tsl::ErrorKind::Internal, "assertion '" #cond "' failed at ", __FILE__, ":",   \
                  __LINE__ __VA_OPT__(, ": ", __VA_ARGS__));                                       \
  } while (0)
