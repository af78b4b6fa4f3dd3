// eval/Printer.h — values as text (docs/language.md §3, "Printing").
#pragma once

#include "eval/Value.h"

#include <string>

namespace tsl {

/// Prints a value. `readably` quotes strings, also inside collections (the REPL, prn,
/// pr-str, str of a collection); without it every string prints raw (print, println),
/// as in Clojure. Maps keep insertion order: {:a 1, :b 2}.
std::string printValue(const Value& value, bool readably);

} // namespace tsl
