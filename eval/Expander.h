// eval/Expander.h — macro expansion: surface forms to core forms.
//
// The expander is the only stage that knows the surface language. It runs user and
// stdlib macros, rewrites the derived forms (`defn`, `defmacro`, `quasiquote`, `if`
// without else) and performs `import` as the form is expanded, so later forms can use
// `nn/...`. It checks the shape of every special form and reports malformed ones as
// syntax errors at their span. Its output contains only these core forms:
//
//   (def name doc? expr)          (defmacro name doc? (fn ...))
//   (fn name? [patterns] body...) (let [pattern expr ...] body...)
//   (loop [pattern expr ...] body...) (recur expr...)
//   (if c then else)              (do expr...)   (and expr...)  (or expr...)
//   (quote form)                  calls (f expr...), vectors, maps and atoms
//
// which is what the analyzer (and later the lowering to IR) consumes.
#pragma once

#include "parser/Syntax.h"

#include <string>
#include <vector>

namespace tsl {

class Evaluator;
class Namespace;

/// The names of the special forms, which macros and locals cannot redefine.
bool isSpecialForm(std::string_view name);

class Expander {
public:
  Expander(Evaluator& evaluator, Namespace& ns);

  /// Expands `form` completely into core forms.
  SyntaxPtr expand(const SyntaxPtr& form);
  /// Expands the head macro of `form` once (for `macroexpand-1`); `expanded` tells
  /// whether it was a macro call.
  SyntaxPtr expandOnce(const SyntaxPtr& form, bool& expanded);

private:
  SyntaxPtr expandList(const SyntaxPtr& form);
  SyntaxPtr expandSpecial(std::string_view head, const SyntaxPtr& form);
  SyntaxPtr expandFn(const SyntaxPtr& form, const SyntaxPtr& name, size_t paramsAt);
  SyntaxPtr expandBindingForm(const SyntaxPtr& form);
  SyntaxPtr expandDefinition(const SyntaxPtr& form, bool isMacro, bool isDefn);
  SyntaxPtr expandImport(const SyntaxPtr& form);
  SyntaxPtr expandBody(std::vector<SyntaxPtr>& out, const SyntaxPtr& form, size_t from);
  SyntaxPtr quasiquote(const SyntaxPtr& form, int depth);
  SyntaxPtr callMacro(const SyntaxPtr& form, const struct Var& macro);

  /// Whether `name` is bound by an enclosing fn, let or loop (locals shadow macros).
  bool isLocal(std::string_view name) const;
  /// Checks a binding pattern and adds the names it binds to `names`.
  void patternNames(const SyntaxPtr& pattern, std::vector<std::string>& names);

  Evaluator& evaluator_;
  Namespace& ns_;
  std::vector<std::string> locals_; ///< a stack of bound names
  std::vector<std::pair<std::string, std::string>> gensyms_; ///< auto-gensyms of one quasiquote
};

} // namespace tsl
