// parser/Reader.h — text to syntax trees (docs/language.md §1).
//
// The reader is the only place that sees ANTLR. It reports the first malformed thing in
// the text as a syntax error with its span: an unclosed delimiter at the position where it
// opened, a stray or mismatched closer where it stands, a bad number, string escape or
// character where it is.
#pragma once

#include "parser/Syntax.h"

#include <string_view>
#include <vector>

namespace tsl {

/// Deepest nesting of delimiters the reader accepts; deeper input is a syntax error
/// rather than a risk to the native stack.
constexpr int kMaxNesting = 1000;

/// Reads every form in `text`. Throws a syntax error at the first malformed form.
/// `firstLine` is the line number of the text's first line (a REPL numbers its inputs as
/// lines of one growing transcript).
std::vector<SyntaxPtr> readAll(std::string_view text, std::string_view fileName, uint32_t firstLine = 1);

/// Whether `text` ends inside an unfinished form (an open delimiter or string), so that a
/// REPL should ask for another line. Other errors do not count as incomplete: reading the
/// text will report them.
bool isIncomplete(std::string_view text);

} // namespace tsl
