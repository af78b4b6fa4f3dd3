// eval/BuiltinsCore.cpp — strings, printing, predicates, and the language's own tools
// (macroexpand, eval, gensym, exit, assertions).
#include "eval/Builtins.h"
#include "runtime/Io.h"
#include "eval/Staging.h"
#include "eval/Tracer.h"
#include "eval/Convert.h"
#include "parser/Reader.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tsl::builtins {

namespace {

/// Concatenation as Clojure's str: strings raw, nil as "", anything else as it prints
/// readably (so strings inside collections keep their quotes).
std::string strOf(Args args) {
  std::string out;
  for (const Value& v : args) {
    if (v.isString()) out += v.string().text();
    else if (!v.isNil()) out += printValue(v, true);
  }
  return out;
}

std::string joinPrinted(Args args, bool readably) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += ' ';
    out += printValue(args[i], readably);
  }
  return out;
}

/// Byte offset of code point `index` in UTF-8 `s`, or npos if past the end.
size_t codePointOffset(const std::string& s, int64_t index) {
  size_t offset = 0;
  for (int64_t k = 0; k < index; ++k) {
    if (offset >= s.size()) return std::string::npos;
    ++offset;
    while (offset < s.size() && (static_cast<unsigned char>(s[offset]) & 0xC0) == 0x80) ++offset;
  }
  return offset;
}

int64_t codePointCount(const std::string& s) {
  int64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

/// The namespace macros and eval resolve names in: the one running code.
Namespace& here(CallContext& cx) { return cx.evaluator.currentNamespace(); }

/// Where a form handed to a macro came from: its own span if it kept one (lists,
/// vectors, maps, symbols), else the matching part of the macro call being expanded
/// (atoms such as 1 or :k carry no span), else that call, else the current call.
Span formSpan(CallContext& cx, const Value& form) {
  if (form.isSymbol() && form.symbol().span().known()) return form.symbol().span();
  if (form.isList() && form.list() && form.list()->span().known()) return form.list()->span();
  if (form.isVector() && form.vector().span().known()) return form.vector().span();
  if (form.isMap() && form.map().span().known()) return form.map().span();
  if (cx.evaluator.macroCalls().empty()) return cx.span;
  const SyntaxPtr& call = cx.evaluator.macroCalls().back();
  std::vector<SyntaxPtr> pending(call->items().rbegin(), call->items().rend() - 1);
  while (!pending.empty()) {
    const SyntaxPtr node = pending.back();
    pending.pop_back();
    if (!node->isCompound() && valuesEqual(syntaxToValue(node), form)) return node->span();
    pending.insert(pending.end(), node->items().rbegin(), node->items().rend());
  }
  return call->span();
}

void definePredicate(Evaluator& evaluator, const char* name, bool (*test)(const Value&)) {
  evaluator.defineBuiltin(name, 1, 1, [test](CallContext&, Args args) { return boolean(test(args[0])); });
}

} // namespace

void registerCoreBuiltins(Evaluator& evaluator) {
  // ---- Strings and printing ----
  // A string holds text now; a traced tensor's digits exist only when compiled code runs.
  auto noTraced = [](const CallContext& cx, Args args) {
    for (const Value& v : args)
      if (Tracer::containsTraced(v))
        fail(ErrorKind::Type, "jit: ", cx.self.name(), " of a traced tensor: its value is known only when the "
                              "compiled code runs (print it outside the compiled function)");
  };
  evaluator.defineBuiltin("str", 0, -1, [noTraced](CallContext& cx, Args args) {
    noTraced(cx, args);
    return makeString(strOf(args));
  });
  evaluator.defineBuiltin("pr-str", 0, -1, [noTraced](CallContext& cx, Args args) {
    noTraced(cx, args);
    return makeString(joinPrinted(args, true));
  });
  evaluator.defineBuiltin("print", 0, -1, [](CallContext& cx, Args args) {
    clearProgressLine();
    cx.evaluator.out() << joinPrinted(args, false) << std::flush;
    return Value();
  });
  evaluator.defineBuiltin("println", 0, -1, [](CallContext& cx, Args args) {
    clearProgressLine();
    cx.evaluator.out() << joinPrinted(args, false) << std::endl;
    return Value();
  });
  evaluator.defineBuiltin("prn", 0, -1, [](CallContext& cx, Args args) {
    clearProgressLine();
    cx.evaluator.out() << joinPrinted(args, true) << std::endl;
    return Value();
  });
  evaluator.defineBuiltin("subs", 2, 3, [](CallContext& cx, Args args) {
    const std::string& s = stringArg(cx, args, 0);
    const int64_t n = codePointCount(s);
    const int64_t start = intArg(cx, args, 1);
    const int64_t end = args.size() == 3 ? intArg(cx, args, 2) : n;
    if (start < 0 || end < start || end > n)
      fail(ErrorKind::Value, "subs: range [", start, ", ", end, ") is out of bounds for a string of ", n,
           " characters");
    const size_t from = codePointOffset(s, start), to = codePointOffset(s, end);
    return makeString(s.substr(from, to - from));
  });
  evaluator.defineBuiltin("includes?", 2, 2, [](CallContext& cx, Args args) {
    return boolean(stringArg(cx, args, 0).find(stringArg(cx, args, 1)) != std::string::npos);
  });
  evaluator.defineBuiltin("slurp", 1, 1, [](CallContext& cx, Args args) {
    return makeString(readTextFile(stringArg(cx, args, 0), kMaxSlurpBytes));
  });

  // ---- Names ----
  evaluator.defineBuiltin("keyword", 1, 1, [](CallContext& cx, Args args) {
    if (args[0].isKeyword()) return args[0];
    return makeKeyword(stringArg(cx, args, 0));
  });
  evaluator.defineBuiltin("symbol", 1, 1, [](CallContext& cx, Args args) {
    if (args[0].isSymbol()) return args[0];
    return makeSymbol(stringArg(cx, args, 0));
  });
  evaluator.defineBuiltin("name", 1, 1, [](CallContext& cx, Args args) {
    const Value& v = args[0];
    if (v.isString()) return v;
    if (v.isKeyword()) return makeString(v.keyword().name());
    if (v.isSymbol()) return makeString(v.symbol().name());
    badArgument(cx, 0, "a keyword, symbol or string", v);
  });
  evaluator.defineBuiltin("gensym", 0, 1, [](CallContext& cx, Args args) {
    return makeSymbol(cx.evaluator.gensym(args.empty() ? "G" : stringArg(cx, args, 0)));
  });

  // ---- Predicates ----
  definePredicate(evaluator, "nil?", [](const Value& v) { return v.isNil(); });
  definePredicate(evaluator, "some?", [](const Value& v) { return !v.isNil(); });
  definePredicate(evaluator, "string?", [](const Value& v) { return v.isString(); });
  definePredicate(evaluator, "keyword?", [](const Value& v) { return v.isKeyword(); });
  definePredicate(evaluator, "symbol?", [](const Value& v) { return v.isSymbol(); });
  definePredicate(evaluator, "vector?", [](const Value& v) { return v.isVector(); });
  definePredicate(evaluator, "list?", [](const Value& v) { return v.isList(); });
  definePredicate(evaluator, "map?", [](const Value& v) { return v.isMap(); });
  definePredicate(evaluator, "fn?", [](const Value& v) { return v.isFunction(); });
  definePredicate(evaluator, "sequential?", [](const Value& v) { return v.isSequential(); });
  definePredicate(evaluator, "coll?", [](const Value& v) { return v.isSequential() || v.isMap(); });
  // A traced tensor answers by its type, as the tensor it stands for would.
  definePredicate(evaluator, "tensor?", [](const Value& v) { return isTensorLike(v); });
  definePredicate(evaluator, "number?", [](const Value& v) {
    return isTensorLike(v) && !v.isNonScalarTensor() && !isBool(v.isTensor() ? v.tensor().dtype() : tracedType(v).dtype);
  });
  definePredicate(evaluator, "boolean?", [](const Value& v) {
    return isTensorLike(v) && !v.isNonScalarTensor() && isBool(v.isTensor() ? v.tensor().dtype() : tracedType(v).dtype);
  });
  evaluator.defineBuiltin("type", 1, 1, [](CallContext&, Args args) {
    const Value& v = args[0];
    if (isTensorLike(v)) return makeKeyword(v.isNonScalarTensor() ? "tensor" : "number");
    static const char* const names[] = {"nil", "tensor", "string", "keyword", "symbol",
                                        "list", "vector", "map", "fn", "recur"};
    return makeKeyword(names[static_cast<int>(v.kind())]);
  });
  evaluator.defineBuiltin("identity", 1, 1, [](CallContext&, Args args) { return args[0]; });

  // ---- Control ----
  evaluator.defineBuiltin("%assert-fail", 1, 1, [](CallContext& cx, Args args) -> Value {
    std::string message = args[0].isString() ? args[0].string().text() : printValue(args[0], false);
    // In a branch taken on a traced value, the failure happens when the compiled code
    // takes that branch: the tracer raises it there (Tracer::branch), at the assert's span.
    fail(ErrorKind::Assert, message);
  });
  evaluator.defineBuiltin("exit", 0, 1, [](CallContext& cx, Args args) -> Value {
    const int64_t code = args.empty() ? 0 : intArg(cx, args, 0);
    // A process exit status is one byte: a larger code would be silently cut.
    if (code < 0 || code > 255) fail(ErrorKind::Value, "exit code must be from 0 to 255, got ", code);
    throw ExitRequest{static_cast<int>(code)};
  });
  evaluator.defineBuiltin("now-ns", 0, 0, [](CallContext&, Args) {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    return Value(Tensor::ofInt(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
  });
  evaluator.defineBuiltin("syntax-error", 2, 2, [](CallContext& cx, Args args) -> Value {
    throw Error(ErrorKind::Syntax, stringArg(cx, args, 1), formSpan(cx, args[0]));
  });

  // ---- Code as data ----
  evaluator.defineBuiltin("macroexpand-1", 1, 1, [](CallContext& cx, Args args) {
    bool expanded = false;
    const SyntaxPtr form = valueToSyntax(args[0], cx.span);
    return syntaxToValue(cx.evaluator.expandOnce(form, here(cx), expanded));
  });
  evaluator.defineBuiltin("macroexpand", 1, 1, [](CallContext& cx, Args args) {
    SyntaxPtr form = valueToSyntax(args[0], cx.span);
    for (bool expanded = true; expanded;) form = cx.evaluator.expandOnce(form, here(cx), expanded);
    return syntaxToValue(form);
  });
  evaluator.defineBuiltin("macroexpand-all", 1, 1, [](CallContext& cx, Args args) {
    return syntaxToValue(cx.evaluator.expand(valueToSyntax(args[0], cx.span), here(cx)));
  });
  evaluator.defineBuiltin("eval", 1, 1, [](CallContext& cx, Args args) {
    return cx.evaluator.evalForm(valueToSyntax(args[0], cx.span), here(cx));
  });
  evaluator.defineBuiltin("read-string", 1, 1, [](CallContext& cx, Args args) {
    const std::vector<SyntaxPtr> forms = readAll(stringArg(cx, args, 0), "<read-string>");
    return forms.empty() ? Value() : syntaxToValue(forms[0]);
  });
}

} // namespace tsl::builtins
