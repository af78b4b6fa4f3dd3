// parser/Diagnostics.h — rendering errors the way a compiler does.
//
//   model.tsl:12:7: shape error: matmul cannot contract f32[4,3] with f32[4,2] (3 != 4)
//     (matmul a b)
//     ^~~~~~~~~~~~
//
// SourceManager remembers the text of every file and string the engine has read, so an
// error can show its line long after reading finished.
#pragma once

#include "tsl/Error.h"

#include <map>
#include <string>
#include <string_view>

namespace tsl {

class SourceManager {
public:
  /// Remembers `text` as the contents of `file` (replacing an earlier version).
  void add(std::string_view file, std::string text);
  /// Appends `text` (ending it with a newline) to the remembered text of `file`; returns
  /// the line number its first line gets. The REPL keeps its inputs as one transcript.
  uint32_t append(std::string_view file, std::string_view text);
  /// The remembered text of the file a span points into, or nullptr.
  const std::string* text(const Span& span) const;

  /// `file:line:col: kind error: message`, then the source line and a caret under the
  /// span (when the source is known), then the error's notes.
  std::string render(const Error& error) const;

private:
  std::map<std::string, std::string, std::less<>> texts_;
};

/// Renders without any source text (position and headline only, plus notes).
std::string renderHeadline(const Error& error);

/// The caret part alone: the given line of `text` and a marker under columns
/// [col, endCol] (clipped to that line). Empty if the line does not exist.
std::string renderCaret(std::string_view text, const Span& span);

} // namespace tsl
