// eval/BuiltinDocs.h — the table of :doc texts of the builtins defined in C++.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tsl {

class Evaluator;

namespace builtins {

struct BuiltinDoc {
  const char* name;
  /// "(call form): one sentence."
  const char* text;
  /// Runnable TSL, optionally followed by "  ; result".
  const char* example;
  /// The example touches files, the terminal or the process (the tests do not run it).
  bool effects = false;
};

/// Every entry, in the table's order.
const std::vector<BuiltinDoc>& builtinDocs();

/// Whether the :doc example of builtin `name` touches files or the process (entries
/// marked in the table, and spit and slurp-lines, whose families document them).
bool exampleHasEffects(std::string_view name);

/// The :doc text of an entry: its text, a newline, "  e.g. " and the example.
std::string docText(const BuiltinDoc& entry);

/// Gives each builtin without a :doc its entry of the table; called last by registerBuiltins.
void documentBuiltins(Evaluator& evaluator);

} // namespace builtins
} // namespace tsl
