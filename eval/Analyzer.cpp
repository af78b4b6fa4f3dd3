// eval/Analyzer.cpp — name resolution, closure conversion and the recur check.
#include "eval/Analyzer.h"

#include "eval/Convert.h"
#include "eval/Expander.h"
#include "eval/Evaluator.h"
#include "tsl/StackGuard.h"

#include <optional>

namespace tsl {

namespace {

struct Local {
  std::string name;
  int slot;
};

/// The bindings visible in one function body (or the top level).
struct Scope {
  Scope* parent = nullptr;
  std::vector<Local> locals;
  int nextSlot = 0;
  int maxSlots = 0;
  std::string selfName; ///< the name of a named fn, bound to the closure itself
  std::vector<std::string> captureNames;
  std::vector<CaptureSource> captureSources;

  int allocate() {
    const int slot = nextSlot++;
    maxSlots = std::max(maxSlots, nextSlot);
    return slot;
  }
};

/// What a `recur` in tail position rebinds.
struct RecurTarget {
  std::vector<const Pattern*> patterns;
  const char* form; ///< "loop" or "fn", for messages
  bool used = false; ///< whether some recur rebinds it
};

[[noreturn]] void syntaxError(const Span& span, const std::string& message) {
  throw Error(ErrorKind::Syntax, message, span);
}

class Analyzer {
public:
  Analyzer(Evaluator&, Namespace& ns) : ns_(ns) {}

  TopLevelCode topLevel(const SyntaxPtr& form) {
    NodePtr node = analyze(form, false);
    markLastUses(*node, top_.maxSlots, {});
    return {std::move(node), top_.maxSlots};
  }

private:
  NodePtr analyze(const SyntaxPtr& form, bool tail) {
    checkStack();
    const Span& span = form->span();
    switch (form->kind()) {
    case SyntaxKind::Integer: return constant(Value(Tensor::weakInt(form->intValue())), span);
    case SyntaxKind::Float: return constant(Value(Tensor::weakFloat(form->floatValue())), span);
    case SyntaxKind::String: return constant(makeString(form->text()), span);
    case SyntaxKind::Keyword: return constant(makeKeyword(form->text()), span);
    case SyntaxKind::Bool: return constant(Value::boolean(form->boolValue()), span);
    case SyntaxKind::Nil: return constant(Value::nil(), span);
    case SyntaxKind::Embedded: return constant(syntaxToValue(form), span);
    case SyntaxKind::Symbol: return symbol(form);
    case SyntaxKind::Vector: {
      if (auto literal = tensorLiteral(*form)) return constant(Value(std::move(*literal)), span);
      std::vector<NodePtr> items;
      for (const SyntaxPtr& item : form->items()) items.push_back(analyze(item, false));
      return std::make_unique<VectorNode>(std::move(items), span);
    }
    case SyntaxKind::Map: {
      std::vector<NodePtr> items;
      for (const SyntaxPtr& item : form->items()) items.push_back(analyze(item, false));
      return std::make_unique<MapNode>(std::move(items), span);
    }
    case SyntaxKind::List: return list(form, tail);
    }
    syntaxError(span, "unknown form");
  }

  static NodePtr constant(Value value, const Span& span) {
    return std::make_unique<ConstNode>(std::move(value), span);
  }

  // ---- Names ----

  enum class Where { Local, Capture, Self };
  struct Found {
    Where where;
    int index;
  };

  /// Finds a local of `scope` or of an enclosing function, capturing it into every
  /// function in between.
  std::optional<Found> lookup(Scope& scope, const std::string& name) {
    for (auto it = scope.locals.rbegin(); it != scope.locals.rend(); ++it)
      if (it->name == name) return Found{Where::Local, it->slot};
    if (!scope.selfName.empty() && scope.selfName == name) return Found{Where::Self, 0};
    for (size_t i = 0; i < scope.captureNames.size(); ++i)
      if (scope.captureNames[i] == name) return Found{Where::Capture, static_cast<int>(i)};
    if (!scope.parent) return std::nullopt;
    const std::optional<Found> outer = lookup(*scope.parent, name);
    if (!outer) return std::nullopt;
    const auto kind = outer->where == Where::Local     ? CaptureSource::Kind::Slot
                      : outer->where == Where::Capture ? CaptureSource::Kind::Capture
                                                       : CaptureSource::Kind::Self;
    scope.captureNames.push_back(name);
    scope.captureSources.push_back({kind, outer->index});
    return Found{Where::Capture, static_cast<int>(scope.captureNames.size() - 1)};
  }

  NodePtr symbol(const SyntaxPtr& form) {
    const std::string& name = form->text();
    const Span& span = form->span();
    if (auto found = lookup(*scope_, name)) {
      switch (found->where) {
      case Where::Local: return std::make_unique<LocalNode>(found->index, span);
      case Where::Capture: return std::make_unique<CaptureNode>(found->index, span);
      case Where::Self: return std::make_unique<SelfNode>(span);
      }
    }
    if (isSpecialForm(name))
      syntaxError(span, cat("'", name, "' is a special form, not a value"));
    Var* var = ns_.resolve(name, true, span);
    if (var->isMacro()) syntaxError(span, cat("'", name, "' is a macro, not a value"));
    if (!var->firstUse.known()) var->firstUse = span;
    return std::make_unique<GlobalNode>(var, span);
  }

  /// Builds a binding pattern, allocating slots and declaring its names.
  Pattern pattern(const SyntaxPtr& form) {
    checkStack();
    Pattern p;
    p.span = form->span();
    if (form->isSymbol()) {
      p.kind = Pattern::Kind::Slot;
      p.slot = scope_->allocate();
      p.name = form->text();
      scope_->locals.push_back({form->text(), p.slot});
      return p;
    }
    p.kind = Pattern::Kind::Sequence;
    const auto& items = form->items();
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i]->isSymbol("&")) {
        p.rest = std::make_unique<Pattern>(pattern(items[++i]));
      } else if (items[i]->isKeyword() && items[i]->text() == "as") {
        p.asSlot = scope_->allocate();
        scope_->locals.push_back({items[++i]->text(), p.asSlot});
      } else {
        p.items.push_back(pattern(items[i]));
      }
    }
    return p;
  }

  // ---- Forms ----

  NodePtr list(const SyntaxPtr& form, bool tail) {
    const Span& span = form->span();
    if (form->size() == 0) return constant(Value::emptyList(), span);
    const std::string_view head = form->headName();
    const auto& items = form->items();
    // The expander forbids binding special-form names, so a head naming one is the form.
    if (!head.empty() && isSpecialForm(head)) {
      if (head == "quote") return constant(syntaxToValue(items[1]), span);
      if (head == "if")
        return std::make_unique<IfNode>(analyze(items[1], false), analyze(items[2], tail),
                                        analyze(items[3], tail), span);
      if (head == "do") return body(form, 1, tail);
      if (head == "and" || head == "or") {
        std::vector<NodePtr> operands;
        for (size_t i = 1; i < items.size(); ++i)
          operands.push_back(analyze(items[i], tail && i + 1 == items.size()));
        return std::make_unique<LogicNode>(head == "and", std::move(operands), span);
      }
      if (head == "let") return let(form, tail);
      if (head == "loop") return loop(form);
      if (head == "recur") return recur(form, tail);
      if (head == "fn") return fn(form, "", false);
      if (head == "def" || head == "defmacro") return def(form, head == "defmacro");
      syntaxError(span, cat("'", head, "' cannot be used here"));
    }
    if (NodePtr fast = binaryCall(form)) return fast;
    NodePtr callee = analyze(items[0], false);
    std::vector<NodePtr> operands;
    operands.reserve(items.size() - 1);
    for (size_t i = 1; i < items.size(); ++i) operands.push_back(analyze(items[i], false));
    return std::make_unique<CallNode>(std::move(callee), std::move(operands), span);
  }

  /// (op a b) of a global builtin with a two-operand fast path, or nullptr.
  NodePtr binaryCall(const SyntaxPtr& form) {
    const auto& items = form->items();
    if (items.size() != 3 || !items[0]->isSymbol()) return nullptr;
    const std::string& name = items[0]->text();
    if (lookup(*scope_, name)) return nullptr;
    Var* var = ns_.resolve(name, false, items[0]->span());
    if (!var || !var->defined || !var->value.isFunction()) return nullptr;
    const FunctionObj& f = var->value.function();
    if (f.functionKind() != FunctionObj::Kind::Builtin) return nullptr;
    const auto fn = static_cast<const BuiltinObj&>(f).binaryFn();
    if (!fn) return nullptr;
    NodePtr lhs = analyze(items[1], false);
    NodePtr rhs = analyze(items[2], false);
    return std::make_unique<BinaryCallNode>(var, var->value.object(), fn, std::move(lhs), std::move(rhs),
                                            form->span());
  }

  /// Forms [from, end) of `form` as a sequence; the last in tail position.
  NodePtr body(const SyntaxPtr& form, size_t from, bool tail) {
    const auto& items = form->items();
    if (from >= items.size()) return constant(Value::nil(), form->span());
    if (from + 1 == items.size()) return analyze(items[from], tail);
    std::vector<NodePtr> nodes;
    for (size_t i = from; i < items.size(); ++i)
      nodes.push_back(analyze(items[i], tail && i + 1 == items.size()));
    return std::make_unique<DoNode>(std::move(nodes), form->span());
  }

  std::vector<Binding> bindings(const SyntaxPtr& vector) {
    std::vector<Binding> out;
    out.reserve(vector->size() / 2); // patterns must not move: recur points at them
    for (size_t i = 0; i < vector->size(); i += 2) {
      NodePtr init = analyze(vector->items()[i + 1], false);
      out.push_back(Binding{pattern(vector->items()[i]), std::move(init)});
    }
    return out;
  }

  NodePtr let(const SyntaxPtr& form, bool tail) {
    const size_t localsMark = scope_->locals.size();
    const int firstSlot = scope_->nextSlot;
    std::vector<Binding> binds = bindings(form->items()[1]);
    const int endSlot = scope_->nextSlot;
    NodePtr bodyNode = body(form, 2, tail);
    scope_->locals.resize(localsMark);
    scope_->nextSlot = firstSlot;
    return std::make_unique<LetNode>(std::move(binds), std::move(bodyNode), firstSlot, endSlot,
                                     form->span());
  }

  NodePtr loop(const SyntaxPtr& form) {
    const size_t localsMark = scope_->locals.size();
    const int firstSlot = scope_->nextSlot;
    std::vector<Binding> binds = bindings(form->items()[1]);
    const int endSlot = scope_->nextSlot;
    RecurTarget target{{}, "loop"};
    for (const Binding& b : binds) target.patterns.push_back(&b.pattern);
    RecurTarget* saved = target_;
    target_ = &target;
    NodePtr bodyNode;
    try {
      bodyNode = body(form, 2, true);
    } catch (...) {
      target_ = saved;
      throw;
    }
    target_ = saved;
    scope_->locals.resize(localsMark);
    scope_->nextSlot = firstSlot;
    return std::make_unique<LoopNode>(std::move(binds), std::move(bodyNode), firstSlot, endSlot,
                                      form->span());
  }

  NodePtr recur(const SyntaxPtr& form, bool tail) {
    const Span& span = form->span();
    if (!target_) syntaxError(span, "recur outside of a loop or fn");
    if (!tail)
      syntaxError(span, cat("recur must be in tail position of its ", target_->form,
                            " (nothing may remain to do after it)"));
    const size_t n = form->size() - 1;
    if (n != target_->patterns.size())
      syntaxError(span, cat("recur passes ", n, n == 1 ? " value" : " values", " but its ",
                            target_->form, " binds ", target_->patterns.size()));
    std::vector<NodePtr> operands;
    for (size_t i = 1; i < form->size(); ++i) operands.push_back(analyze(form->items()[i], false));
    target_->used = true;
    return std::make_unique<RecurNode>(std::move(operands), target_->patterns, span);
  }

  NodePtr fn(const SyntaxPtr& form, const std::string& nameHint, bool macro) {
    const auto& items = form->items();
    const bool named = items[1]->isSymbol();
    const size_t paramsAt = named ? 2 : 1;
    auto lambda = std::make_shared<Lambda>();
    lambda->name = named ? items[1]->text() : nameHint;
    lambda->source = form;
    lambda->ns = &ns_;
    lambda->span = form->span();

    Scope inner;
    inner.parent = scope_;
    if (named) inner.selfName = items[1]->text();
    Scope* savedScope = scope_;
    RecurTarget* savedTarget = target_;
    scope_ = &inner;
    RecurTarget target{{}, "fn"};
    try {
      const auto& params = items[paramsAt]->items();
      lambda->params.reserve(params.size());
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i]->isSymbol("&")) {
          lambda->rest = pattern(params[++i]);
          continue;
        }
        lambda->params.push_back(pattern(params[i]));
      }
      for (const Pattern& p : lambda->params) target.patterns.push_back(&p);
      if (lambda->rest) target.patterns.push_back(&*lambda->rest);
      target_ = &target;
      lambda->body = body(form, paramsAt + 1, true);
    } catch (...) {
      scope_ = savedScope;
      target_ = savedTarget;
      throw;
    }
    scope_ = savedScope;
    target_ = savedTarget;
    lambda->recurs = target.used;
    lambda->frameSize = inner.maxSlots;
    markLastUses(*lambda->body, lambda->frameSize, target.patterns);
    lambda->captureSources = std::move(inner.captureSources);
    lambda->captureNames = std::move(inner.captureNames);
    return std::make_unique<FnNode>(std::move(lambda), macro, form->span());
  }

  NodePtr def(const SyntaxPtr& form, bool macro) {
    const auto& items = form->items();
    const std::string& name = items[1]->text();
    std::string doc;
    size_t valueAt = 2;
    if (items.size() == 4) {
      doc = items[2]->text();
      valueAt = 3;
    }
    Var* var = ns_.intern(name);
    var->declared = true;
    const SyntaxPtr& valueForm = items[valueAt];
    NodePtr value = valueForm->isList() && valueForm->headName() == "fn"
                        ? fn(valueForm, name, macro)
                        : analyze(valueForm, false);
    return std::make_unique<DefNode>(var, std::move(value), std::move(doc), form->span());
  }

  Namespace& ns_;
  Scope top_;
  Scope* scope_ = &top_;
  RecurTarget* target_ = nullptr;
};

} // namespace

TopLevelCode analyzeTopLevel(Evaluator& evaluator, Namespace& ns, const SyntaxPtr& coreForm) {
  Analyzer analyzer(evaluator, ns);
  return analyzer.topLevel(coreForm);
}

} // namespace tsl
