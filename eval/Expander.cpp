// eval/Expander.cpp — macro expansion and the derived forms.
#include "eval/Expander.h"

#include "eval/Convert.h"
#include "eval/Evaluator.h"
#include "eval/Nodes.h"
#include "tsl/StackGuard.h"

#include <algorithm>
#include <array>

namespace tsl {

namespace {

constexpr std::array<std::string_view, 17> kSpecialForms = {
    "def",   "defn", "defmacro",   "fn",         "let",
    "loop",  "recur", "if",        "do",         "quote",
    "quasiquote", "unquote", "unquote-splicing", "and", "or",
    "import", "&"};

/// Repeated expansion of one form beyond this is taken to be a macro that never stops.
constexpr int kMaxExpansions = 10000;


[[noreturn]] void syntaxError(const SyntaxPtr& at, const std::string& message) {
  throw Error(ErrorKind::Syntax, message, at->span());
}

SyntaxPtr sym(const char* name, const Span& span) { return Syntax::symbol(name, span); }

/// (core/name args...) — qualified so that user definitions cannot capture it.
SyntaxPtr coreCall(const char* name, std::vector<SyntaxPtr> args, const Span& span) {
  args.insert(args.begin(), Syntax::symbol(std::string("core/") + name, span));
  return Syntax::list(std::move(args), span);
}

bool isCall(const SyntaxPtr& form, std::string_view head) {
  return form->isList() && form->size() == 2 && form->headName() == head;
}

/// Whether a quasiquoted form contains anything to evaluate at this depth.
bool hasUnquote(const SyntaxPtr& form, int depth) {
  checkStack();
  if (form->isSymbol()) return !form->text().empty() && form->text().back() == '#';
  if (!form->isCompound()) return false;
  if (form->isList() && form->size() == 2) {
    const std::string_view head = form->headName();
    if (head == "unquote" || head == "unquote-splicing")
      return depth == 1 || hasUnquote(form->items()[1], depth - 1);
    if (head == "quasiquote") return hasUnquote(form->items()[1], depth + 1);
  }
  return std::any_of(form->items().begin(), form->items().end(),
                     [&](const SyntaxPtr& item) { return hasUnquote(item, depth); });
}

} // namespace

bool isSpecialForm(std::string_view name) {
  return std::find(kSpecialForms.begin(), kSpecialForms.end(), name) != kSpecialForms.end();
}

Expander::Expander(Evaluator& evaluator, Namespace& ns) : evaluator_(evaluator), ns_(ns) {}

bool Expander::isLocal(std::string_view name) const {
  return std::find(locals_.begin(), locals_.end(), name) != locals_.end();
}

SyntaxPtr Expander::expand(const SyntaxPtr& form) {
  checkStack();
  switch (form->kind()) {
  case SyntaxKind::List: return expandList(form);
  case SyntaxKind::Vector:
  case SyntaxKind::Map: {
    std::vector<SyntaxPtr> items;
    items.reserve(form->size());
    for (const SyntaxPtr& item : form->items()) items.push_back(expand(item));
    return form->isVector() ? Syntax::vector(std::move(items), form->span())
                            : Syntax::map(std::move(items), form->span());
  }
  case SyntaxKind::Symbol:
    if (form->text() == "&") syntaxError(form, "'&' is only allowed in a parameter vector");
    return form;
  default: return form;
  }
}

SyntaxPtr Expander::expandOnce(const SyntaxPtr& form, bool& expanded) {
  expanded = false;
  if (!form->isList() || form->size() == 0 || !form->items()[0]->isSymbol()) return form;
  const std::string& head = form->items()[0]->text();
  if (isSpecialForm(head) || isLocal(head)) return form;
  Var* var = ns_.resolve(head, false, form->items()[0]->span());
  if (!var || !var->isMacro()) return form;
  expanded = true;
  return callMacro(form, *var);
}

SyntaxPtr Expander::callMacro(const SyntaxPtr& form, const Var& macro) {
  // A macro called with the wrong number of forms is malformed syntax, not a type error.
  const FunctionObj& fn = macro.value.function();
  if (fn.functionKind() == FunctionObj::Kind::Closure) {
    const Lambda& lambda = *static_cast<const ClosureObj&>(fn).lambda();
    const size_t given = form->size() - 1, fixed = lambda.params.size();
    if (given < fixed || (!lambda.variadic() && given > fixed))
      syntaxError(form, cat(macro.name, " expects ", lambda.variadic() ? "at least " : "", fixed,
                            fixed == 1 ? " form" : " forms", ", got ", given));
  }
  std::vector<Value> args;
  args.reserve(form->size() - 1);
  for (size_t i = 1; i < form->size(); ++i) args.push_back(syntaxToValue(form->items()[i]));
  evaluator_.macroCalls().push_back(form);
  struct Pop {
    Evaluator& evaluator;
    ~Pop() { evaluator.macroCalls().pop_back(); }
  } pop{evaluator_};
  try {
    const Value result = evaluator_.apply(macro.value, args, form->span());
    return valueToSyntax(result, form->span());
  } catch (Error& e) {
    e.setSpanIfUnknown(form->span());
    if (e.span() != form->span())
      e.addNote(cat("note: while expanding the macro ", macro.name, " at ",
                    form->span().fileName(), ":", form->span().line, ":", form->span().col));
    throw;
  }
}

SyntaxPtr Expander::expandList(const SyntaxPtr& original) {
  SyntaxPtr form = original;
  // While this call's expansion is expanded, it counts one level of nesting.
  struct Nesting {
    std::vector<SyntaxPtr>* stack = nullptr;
    ~Nesting() {
      if (stack) stack->pop_back();
    }
  } nesting;
  for (int round = 0;; ++round) {
    if (form->size() == 0) return form;
    const SyntaxPtr& head = form->items()[0];
    if (head->isSymbol() && isSpecialForm(head->text())) return expandSpecial(head->text(), form);
    if (round == kMaxExpansions)
      syntaxError(original, cat("macro expansion did not finish after ", kMaxExpansions, " steps"));
    bool expanded = false;
    const std::string macroName(form->headName());
    form = expandOnce(form, expanded);
    if (!expanded) break;
    if (!nesting.stack) {
      std::vector<SyntaxPtr>& stack = evaluator_.expansions();
      // Expansions nested deeper than the call-depth limit (a macro whose expansion calls
      // a macro whose expansion calls ...) are taken to be a macro expanding into itself
      // without end. 10 000 levels take about 0.1 s; a `cond` of 2 000 clauses nests
      // 1 000 deep. --max-depth raises both limits.
      const auto limit = static_cast<size_t>(evaluator_.maxDepth());
      if (stack.size() >= limit) {
        // Point at the outermost call: the form the user wrote.
        Error e(ErrorKind::Syntax,
                cat("macro expansion nested more than ", limit, " levels deep, at ", macroName,
                    " (a macro that expands into a call of itself without end?)"),
                stack.front()->span());
        e.addNote(cat("note: the innermost expansion is of ", macroName, " at ", original->span().fileName(), ":",
                      original->span().line, ":", original->span().col));
        throw e;
      }
      stack.push_back(original);
      nesting.stack = &stack;
    }
    if (!form->isList()) return expand(form);
  }
  // A call: expand the callee and every argument.
  std::vector<SyntaxPtr> items;
  items.reserve(form->size());
  for (const SyntaxPtr& item : form->items()) items.push_back(expand(item));
  return Syntax::list(std::move(items), form->span());
}

SyntaxPtr Expander::expandBody(std::vector<SyntaxPtr>& out, const SyntaxPtr& form, size_t from) {
  for (size_t i = from; i < form->size(); ++i) out.push_back(expand(form->items()[i]));
  return nullptr;
}

SyntaxPtr Expander::expandSpecial(std::string_view head, const SyntaxPtr& form) {
  const Span& span = form->span();
  const auto& items = form->items();
  const size_t n = form->size() - 1; // operands

  if (head == "quote") {
    if (n != 1) syntaxError(form, cat("quote expects one form, got ", n));
    return form;
  }
  if (head == "quasiquote") {
    if (n != 1) syntaxError(form, cat("quasiquote expects one form, got ", n));
    gensyms_.clear();
    return expand(quasiquote(items[1], 1));
  }
  if (head == "unquote" || head == "unquote-splicing")
    syntaxError(form, cat(head == "unquote" ? "unquote (~)" : "unquote-splicing (~@)",
                          " is only allowed inside a quasiquote (`)"));
  if (head == "&") syntaxError(form, "'&' is only allowed in a parameter vector");
  if (head == "def") return expandDefinition(form, false, false);
  if (head == "defn") return expandDefinition(form, false, true);
  if (head == "defmacro") return expandDefinition(form, true, true);
  if (head == "import") return expandImport(form);
  if (head == "fn") {
    if (n >= 1 && items[1]->isSymbol()) return expandFn(form, items[1], 2);
    return expandFn(form, nullptr, 1);
  }
  if (head == "let" || head == "loop") return expandBindingForm(form);
  if (head == "if") {
    if (n < 2 || n > 3)
      syntaxError(form, cat("if expects a condition, a then form and an optional else form, got ",
                            n, n == 1 ? " form" : " forms"));
    std::vector<SyntaxPtr> out{items[0], expand(items[1]), expand(items[2])};
    out.push_back(n == 3 ? expand(items[3]) : Syntax::nil(span));
    return Syntax::list(std::move(out), span);
  }
  // recur, do, and, or: operands are plain expressions.
  std::vector<SyntaxPtr> out{items[0]};
  expandBody(out, form, 1);
  return Syntax::list(std::move(out), span);
}

void Expander::patternNames(const SyntaxPtr& pattern, std::vector<std::string>& names) {
  checkStack();
  if (pattern->isSymbol()) {
    const std::string& name = pattern->text();
    if (name == "&") syntaxError(pattern, "'&' must be followed by one pattern for the rest");
    if (isSpecialForm(name)) syntaxError(pattern, cat("cannot bind the special form name '", name, "'"));
    if (name.find('/') != std::string::npos && name != "/")
      syntaxError(pattern, cat("cannot bind the qualified name '", name, "'"));
    names.push_back(name);
    return;
  }
  if (!pattern->isVector())
    syntaxError(pattern, cat("cannot bind to ", pattern->print(),
                             ": expected a symbol or a vector pattern"));
  const auto& items = pattern->items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i]->isSymbol("&")) {
      if (i + 2 > items.size() || (i + 2 < items.size() && !items[i + 2]->isKeyword()))
        syntaxError(items[i], "'&' must be followed by exactly one pattern for the rest");
      patternNames(items[i + 1], names);
      i += 1;
      continue;
    }
    if (items[i]->isKeyword() && items[i]->text() == "as") {
      if (i + 2 != items.size() || !items[i + 1]->isSymbol())
        syntaxError(items[i], ":as must be followed by one symbol, at the end of the pattern");
      patternNames(items[i + 1], names);
      return;
    }
    patternNames(items[i], names);
  }
}

SyntaxPtr Expander::expandFn(const SyntaxPtr& form, const SyntaxPtr& name, size_t paramsAt) {
  const auto& items = form->items();
  if (paramsAt >= items.size() || !items[paramsAt]->isVector()) {
    if (paramsAt < items.size() && items[paramsAt]->isList())
      syntaxError(items[paramsAt], "functions with several arities are not supported; "
                                   "use one parameter vector (with & rest if needed)");
    syntaxError(form, "fn expects a parameter vector: (fn [params] body...)");
  }
  const size_t mark = locals_.size();
  if (name) locals_.push_back(name->text());
  std::vector<std::string> names;
  patternNames(items[paramsAt], names);
  locals_.insert(locals_.end(), names.begin(), names.end());
  std::vector<SyntaxPtr> out{items[0]};
  if (name) out.push_back(name);
  out.push_back(items[paramsAt]);
  try {
    expandBody(out, form, paramsAt + 1);
  } catch (...) {
    locals_.resize(mark);
    throw;
  }
  locals_.resize(mark);
  return Syntax::list(std::move(out), form->span());
}

SyntaxPtr Expander::expandBindingForm(const SyntaxPtr& form) {
  const auto& items = form->items();
  const std::string& head = items[0]->text();
  if (form->size() < 2 || !items[1]->isVector())
    syntaxError(form, cat(head, " expects a binding vector: (", head, " [name value ...] body...)"));
  const SyntaxPtr& bindings = items[1];
  if (bindings->size() % 2 != 0)
    syntaxError(bindings, cat(head, " bindings need an even number of forms (name value ...), got ",
                              bindings->size()));
  const size_t mark = locals_.size();
  std::vector<SyntaxPtr> expandedBindings;
  std::vector<SyntaxPtr> out{items[0]};
  try {
    for (size_t i = 0; i < bindings->size(); i += 2) {
      std::vector<std::string> names;
      patternNames(bindings->items()[i], names);
      expandedBindings.push_back(bindings->items()[i]);
      expandedBindings.push_back(expand(bindings->items()[i + 1]));
      locals_.insert(locals_.end(), names.begin(), names.end());
    }
    out.push_back(Syntax::vector(std::move(expandedBindings), bindings->span()));
    expandBody(out, form, 2);
  } catch (...) {
    locals_.resize(mark);
    throw;
  }
  locals_.resize(mark);
  return Syntax::list(std::move(out), form->span());
}

SyntaxPtr Expander::expandDefinition(const SyntaxPtr& form, bool isMacro, bool isDefn) {
  const auto& items = form->items();
  const std::string& head = items[0]->text();
  const Span& span = form->span();
  if (form->size() < 2 || !items[1]->isSymbol())
    syntaxError(form->size() < 2 ? form : items[1],
                cat(head, " expects a name (a symbol) first: (", head, " name ",
                    isDefn ? "[params] body...)" : "value)"));
  const SyntaxPtr& name = items[1];
  if (isSpecialForm(name->text())) syntaxError(name, cat("cannot redefine the special form '", name->text(), "'"));
  if (name->text().find('/') != std::string::npos && name->text() != "/")
    syntaxError(name, cat("cannot define the qualified name '", name->text(), "'"));
  size_t at = 2;
  SyntaxPtr doc;
  if (at < form->size() && items[at]->kind() == SyntaxKind::String && (isDefn || form->size() > 3)) {
    doc = items[at];
    ++at;
  }
  std::vector<SyntaxPtr> out{Syntax::symbol(isMacro ? "defmacro" : "def", items[0]->span()), name};
  if (doc) out.push_back(doc);
  if (isDefn) {
    // (defn name doc? [params] body...) -> (def name doc? (fn name [params] body...))
    std::vector<SyntaxPtr> fn{Syntax::symbol("fn", items[0]->span()), name};
    fn.insert(fn.end(), items.begin() + static_cast<std::ptrdiff_t>(at), items.end());
    out.push_back(expandFn(Syntax::list(std::move(fn), span), name, 2));
  } else {
    if (at + 1 != form->size())
      syntaxError(form, cat("def expects a name and one value: (def name value), got ",
                            form->size() - 1, " forms"));
    out.push_back(expand(items[at]));
  }
  return Syntax::list(std::move(out), span);
}

SyntaxPtr Expander::expandImport(const SyntaxPtr& form) {
  const auto& items = form->items();
  if (form->size() < 2 || items[1]->kind() != SyntaxKind::String)
    syntaxError(form, "import expects a module path string: (import \"stdlib/nn\")");
  std::string alias;
  const std::string& path = items[1]->text();
  if (form->size() == 4 && items[2]->isKeyword() && items[2]->text() == "as" && items[3]->isSymbol()) {
    alias = items[3]->text();
  } else if (form->size() != 2) {
    syntaxError(form, "import expects a path and optionally :as alias: (import \"lib/x\" :as y)");
  } else {
    const size_t slash = path.find_last_of('/');
    alias = slash == std::string::npos ? path : path.substr(slash + 1);
    if (alias.size() > 4 && alias.ends_with(".tsl")) alias.resize(alias.size() - 4);
  }
  Namespace& module = evaluator_.importModule(path, form->span().fileName(), form->span());
  ns_.addAlias(alias, &module);
  return Syntax::nil(form->span());
}

SyntaxPtr Expander::quasiquote(const SyntaxPtr& form, int depth) {
  checkStack();
  const Span& span = form->span();
  if (!hasUnquote(form, depth)) return Syntax::list({sym("quote", span), form}, span);
  if (form->isSymbol()) {
    // An auto-gensym: `x#` names the same fresh symbol throughout one quasiquote.
    const std::string& name = form->text();
    auto it = std::find_if(gensyms_.begin(), gensyms_.end(),
                           [&](const auto& entry) { return entry.first == name; });
    if (it == gensyms_.end()) {
      gensyms_.emplace_back(name, evaluator_.gensym(name.substr(0, name.size() - 1)));
      it = gensyms_.end() - 1;
    }
    return Syntax::list({sym("quote", span), Syntax::symbol(it->second, span)}, span);
  }
  if (isCall(form, "unquote")) {
    if (depth == 1) return form->items()[1];
    return coreCall("list", {Syntax::list({sym("quote", span), sym("unquote", span)}, span),
                             quasiquote(form->items()[1], depth - 1)},
                    span);
  }
  if (isCall(form, "unquote-splicing") && depth == 1)
    syntaxError(form, "unquote-splicing (~@) must be inside a list or vector");
  if (isCall(form, "quasiquote"))
    return coreCall("list", {Syntax::list({sym("quote", span), sym("quasiquote", span)}, span),
                             quasiquote(form->items()[1], depth + 1)},
                    span);
  // A list, vector or map: concatenate its parts, splicing where asked.
  std::vector<SyntaxPtr> parts;
  for (const SyntaxPtr& item : form->items()) {
    if (isCall(item, "unquote-splicing") && depth == 1)
      parts.push_back(item->items()[1]);
    else
      parts.push_back(coreCall("list", {quasiquote(item, depth)}, item->span()));
  }
  SyntaxPtr concatenated = coreCall("%concat", std::move(parts), span);
  if (form->isList()) return concatenated;
  if (form->isVector()) return coreCall("vec", {concatenated}, span);
  return coreCall("apply", {Syntax::symbol("core/hash-map", span), concatenated}, span);
}

} // namespace tsl
