// eval/BuiltinsErrors.cpp — errors as values: try/catch/finally (the `try` macro of
// stdlib/core.tsl expands to %try), throw, ex-info and the ex- accessors.
//
// A caught error is a plain map, so it prints, compares and destructures like any value:
//   {:kind :shape, :message "matmul cannot ...", :data nil, :position ["f.tsl" 3 7]}
// ex-info makes one of kind :user (its position is filled in by throw). Throwing a map
// raises a tsl::Error of its kind, at its position if it has one (a re-thrown error is
// unchanged), else at the throw form; the map itself rides along on the Error so that a
// catch gets back its :data.
#include "eval/Builtins.h"
#include "eval/Staging.h"

#include <memory>

namespace tsl::builtins {

namespace {

constexpr ErrorKind kCatchable[] = {ErrorKind::Syntax, ErrorKind::Name,   ErrorKind::Type,
                                    ErrorKind::Shape,  ErrorKind::Value,  ErrorKind::Io,
                                    ErrorKind::Assert, ErrorKind::Runtime, ErrorKind::User};

std::optional<ErrorKind> kindNamed(std::string_view name) {
  for (ErrorKind k : kCatchable)
    if (name == errorKindName(k)) return k;
  return std::nullopt;
}

const Value* field(const Value& error, std::string_view key) {
  return error.isMap() ? error.map().find(makeKeyword(key)) : nullptr;
}

/// The map a caught error becomes (the map it was thrown as, when it was one).
Value errorValue(const Error& e) {
  if (const auto* thrown = static_cast<const Value*>(e.payload().get())) return *thrown;
  Value position;
  if (e.span().known())
    position = makeVector({makeString(std::string(e.span().fileName())), Value(Tensor::ofInt(e.span().line)),
                           Value(Tensor::ofInt(e.span().col))});
  return makeMap({{makeKeyword("kind"), makeKeyword(errorKindName(e.kind()))},
                  {makeKeyword("message"), makeString(e.message())},
                  {makeKeyword("data"), Value()},
                  {makeKeyword("position"), position}});
}

/// Argument i as an error value: a map with a :kind keyword and a :message string.
const Value& errorArg(const CallContext& cx, Args args, size_t i) {
  const Value* kind = field(args[i], "kind");
  const Value* message = field(args[i], "message");
  if (!kind || !kind->isKeyword() || !kindNamed(kind->keyword().name()) || !message || !message->isString())
    badArgument(cx, i, "an error (a map from ex-info or catch, with :kind and :message)", args[i]);
  return args[i];
}

/// Ctrl-C, and the host's step limit (Engine::setStepLimit), are not errors a program
/// handles: they always reach the top.
bool isInterrupt(const Error& e) {
  return e.kind() == ErrorKind::Runtime &&
         (e.message() == "interrupted" || e.message().starts_with("step limit exceeded"));
}

bool catches(const Value& kind, const Error& e) {
  const std::string& name = kind.keyword().name();
  return name == "any" || name == errorKindName(e.kind());
}

} // namespace

void registerErrorBuiltins(Evaluator& evaluator) {
  // (%try body-fn [kind handler-fn ...] finally-fn): what (try ...) expands to.
  evaluator.defineBuiltin("%try", 3, 3, [](CallContext& cx, Args args) -> Value {
    if (staging::lowering(cx.evaluator))
      fail(ErrorKind::Type, "jit: try cannot be compiled (errors inside compiled code are raised when it runs); "
                            "put the try around the call of the compiled function");
    const Value body = args[0], clauses = args[1], finally = args[2];
    auto runFinally = [&] {
      if (!finally.isNil()) cx.evaluator.apply(finally, {}, cx.span);
    };
    Value result;
    try {
      result = cx.evaluator.apply(body, {}, cx.span);
    } catch (Error& e) {
      if (isInterrupt(e) || e.kind() == ErrorKind::Internal) {
        runFinally();
        throw;
      }
      const auto& items = clauses.vector();
      size_t i = 0;
      while (i < items.count() && !catches(items[i], e)) i += 2;
      if (i == items.count()) {
        runFinally();
        throw;
      }
      const Value caught = errorValue(e);
      try {
        result = cx.evaluator.apply(items[i + 1], std::span<const Value>(&caught, 1), cx.span);
      } catch (...) {
        runFinally();
        throw;
      }
    } catch (...) { // (exit n) and anything else that is not an error: finally, then on
      runFinally();
      throw;
    }
    runFinally();
    return result;
  });

  evaluator.defineBuiltin("ex-info", 1, 2, [](CallContext& cx, Args args) {
    return makeMap({{makeKeyword("kind"), makeKeyword("user")},
                    {makeKeyword("message"), makeString(stringArg(cx, args, 0))},
                    {makeKeyword("data"), args.size() > 1 ? args[1] : Value()},
                    {makeKeyword("position"), Value()}});
  });

  evaluator.defineBuiltin("throw", 1, 1, [](CallContext& cx, Args args) -> Value {
    const Value& error = errorArg(cx, args, 0);
    const ErrorKind kind = *kindNamed(field(error, "kind")->keyword().name());
    Span span = cx.span;
    Value thrown = error;
    const Value* position = field(error, "position");
    if (position && position->isVector() && position->vector().count() == 3 && position->vector()[0].isString() &&
        position->vector()[1].isTensor() && position->vector()[2].isTensor()) {
      const auto& p = position->vector();
      span = Span{internFileName(p[0].string().text()), static_cast<uint32_t>(p[1].tensor().toInt()),
                  static_cast<uint32_t>(p[2].tensor().toInt()), 0, 0};
    } else { // first thrown here: its position is the throw form's
      auto entries = std::vector<std::pair<Value, Value>>{
          {makeKeyword("kind"), *field(error, "kind")},
          {makeKeyword("message"), *field(error, "message")},
          {makeKeyword("data"), field(error, "data") ? *field(error, "data") : Value()},
          {makeKeyword("position"),
           makeVector({makeString(std::string(span.fileName())), Value(Tensor::ofInt(span.line)),
                       Value(Tensor::ofInt(span.col))})}};
      thrown = makeMap(std::move(entries));
    }
    Error e(kind, field(error, "message")->string().text(), span);
    e.setPayload(std::make_shared<const Value>(std::move(thrown)));
    throw e;
  });

  evaluator.defineBuiltin("ex-kind", 1, 1, [](CallContext& cx, Args args) {
    return *field(errorArg(cx, args, 0), "kind");
  });
  evaluator.defineBuiltin("ex-message", 1, 1, [](CallContext& cx, Args args) {
    return *field(errorArg(cx, args, 0), "message");
  });
  evaluator.defineBuiltin("ex-data", 1, 1, [](CallContext& cx, Args args) {
    const Value* data = field(errorArg(cx, args, 0), "data");
    return data ? *data : Value();
  });
  evaluator.defineBuiltin("ex-position", 1, 1, [](CallContext& cx, Args args) {
    const Value* position = field(errorArg(cx, args, 0), "position");
    return position ? *position : Value();
  });

  document(evaluator, "ex-info", "(ex-info message data?): an error of kind :user carrying data, for throw.\n  e.g. (throw (ex-info \"bad batch\" {:index 3}))");
  document(evaluator, "throw", "(throw e): raises the error e (from ex-info, or a caught one, unchanged).\n  e.g. (try (throw (ex-info \"no\" nil)) (catch :user e (ex-message e)))");
  document(evaluator, "ex-kind", "(ex-kind e): the kind of a caught error, a keyword (:shape, :user, ...).\n  e.g. (try (+ 1 \"a\") (catch :any e (ex-kind e)))  ; :type");
  document(evaluator, "ex-message", "(ex-message e): the message of a caught error, a string.\n  e.g. (try (assert false \"no\") (catch :assert e (ex-message e)))  ; \"no\"");
  document(evaluator, "ex-data", "(ex-data e): the data given to ex-info, or nil for the built-in kinds.\n  e.g. (try (throw (ex-info \"x\" {:i 1})) (catch :user e (ex-data e)))  ; {:i 1}");
  document(evaluator, "ex-position", "(ex-position e): where a caught error was raised, [file line col], or nil.\n  e.g. (try (+ 1 \"a\") (catch :any e (ex-position e)))");
}

} // namespace tsl::builtins
