// eval/BuiltinsCollections.cpp — Clojure's collection functions, over TSL values.
//
// `map`, `filter`, `rest` and `range` return vectors (docs/language.md §4); over a tensor the
// sequence functions walk its first axis; `count` gives an i64.
#include "eval/Builtins.h"
#include "eval/Staging.h"
#include "runtime/Views.h"

#include <algorithm>
#include <cmath>

namespace tsl::builtins {

namespace {

/// Elements of a sequence argument, with a type error naming the function.
std::vector<Value> items(const CallContext& cx, Args args, size_t i) {
  const Value& v = args[i];
  const bool ok = v.isNil() || v.isSequential() || v.isMap() || v.isString() || v.isNonScalarTensor();
  if (!ok) badArgument(cx, i, "a collection", v);
  return sequenceItems(v);
}

Value countOf(const CallContext& cx, const Value& v) {
  const bool ok = v.isNil() || v.isSequential() || v.isMap() || v.isString() || v.isNonScalarTensor();
  if (!ok) fail(ErrorKind::Type, cx.self.name(), " expects a collection, got ", describeKind(v));
  return Value(Tensor::ofInt(sequenceCount(v)));
}

/// Largest vector `range` will build (16M values, 384 MiB); a tensor is the tool for more.
constexpr int64_t kMaxRange = int64_t(1) << 24;

Value range(const CallContext& cx, Args args) {
  const bool anyFloat = std::any_of(args.begin(), args.end(), [](const Value& v) {
    return v.isTensor() && isFloat(v.tensor().dtype());
  });
  if (anyFloat) {
    const double start = args.size() > 1 ? numberArg(cx, args, 0) : 0.0;
    const double stop = numberArg(cx, args, args.size() > 1 ? 1 : 0);
    const double step = args.size() > 2 ? numberArg(cx, args, 2) : 1.0;
    if (step == 0 || !std::isfinite(step)) fail(ErrorKind::Value, "range step must be nonzero and finite");
    const double n = std::ceil((stop - start) / step);
    if (!(n <= static_cast<double>(kMaxRange)))
      fail(ErrorKind::Value, "range of ", n, " elements is too large (limit 2^24; use arange for tensors)");
    std::vector<Value> out;
    for (int64_t i = 0; i < static_cast<int64_t>(std::max(n, 0.0)); ++i)
      out.emplace_back(Tensor::ofFloat(start + static_cast<double>(i) * step, DType::F32));
    return makeVector(std::move(out));
  }
  const int64_t start = args.size() > 1 ? intArg(cx, args, 0) : 0;
  const int64_t stop = intArg(cx, args, args.size() > 1 ? 1 : 0);
  const int64_t step = args.size() > 2 ? intArg(cx, args, 2) : 1;
  if (step == 0) fail(ErrorKind::Value, "range step must be nonzero");
  // The count, exactly, in 128 bits: stepping an int64 up to `stop` could wrap around
  // at the 64-bit limit and never get there.
  const __int128 span = static_cast<__int128>(stop) - start;
  const __int128 n = span == 0 || (span > 0) != (step > 0) ? 0 : (span + step + (step > 0 ? -1 : 1)) / step;
  if (n > kMaxRange)
    fail(ErrorKind::Value, "range of ", static_cast<double>(n), " elements is too large (limit 2^24; use arange for tensors)");
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) {
    if ((k & 0xFFFF) == 0) cx.evaluator.poll(cx.span);
    out.emplace_back(Tensor::ofInt(static_cast<int64_t>(start + static_cast<__int128>(k) * step)));
  }
  return makeVector(std::move(out));
}

Value conjOne(const Value& coll, const Value& x) {
  switch (coll.kind()) {
  case ValueKind::Nil:
  case ValueKind::List: return Value(new ListObj(x, coll.isNil() ? Value::emptyList() : coll));
  case ValueKind::Vector: return coll.vector().conj(x);
  case ValueKind::Map: {
    if (!x.isVector() || x.vector().count() != 2)
      fail(ErrorKind::Type, "conj onto a map takes [key value] pairs, got ", describeKind(x));
    return coll.map().assoc(x.vector()[0], x.vector()[1]);
  }
  default: fail(ErrorKind::Type, "conj expects a vector, list or map, got ", describeKind(coll));
  }
}

Value nthOf(const CallContext& cx, const Value& coll, int64_t i, const Value* notFound) {
  const int64_t n = sequenceCount(coll);
  if (i < 0 || i >= n) {
    if (notFound) return *notFound;
    fail(ErrorKind::Value, cx.self.name(), ": index ", i, " is out of range for ", n, " elements");
  }
  if (coll.isVector()) return coll.vector()[static_cast<size_t>(i)];
  if (coll.isTensor()) return Value(selectIndex(coll.tensor(), 0, i));
  if (std::optional<Value> staged = staging::row(coll, i)) return std::move(*staged);
  return sequenceItems(coll)[static_cast<size_t>(i)];
}

Value getIn(const Value& coll, const Value& key, const Value& notFound) {
  if (coll.isMap()) {
    const Value* found = coll.map().find(key);
    return found ? *found : notFound;
  }
  if (coll.isVector() && key.isTensor() && key.tensor().isScalar() && isInteger(key.tensor().dtype())) {
    const int64_t i = key.tensor().toInt();
    return i >= 0 && i < static_cast<int64_t>(coll.vector().count()) ? coll.vector()[static_cast<size_t>(i)]
                                                                       : notFound;
  }
  return notFound;
}

} // namespace

namespace {

/// Building collections: count, list, vector, hash-map, vec, %concat.
void defineConstructors(Evaluator& evaluator) {
  evaluator.defineBuiltin("count", 1, 1, [](CallContext& cx, Args args) { return countOf(cx, args[0]); });
  evaluator.defineBuiltin("list", 0, -1, [](CallContext&, Args args) { return makeList(args); });
  evaluator.defineBuiltin("vector", 0, -1, [](CallContext&, Args args) {
    return makeVector(std::vector<Value>(args.begin(), args.end()));
  });
  evaluator.defineBuiltin("hash-map", 0, -1, [](CallContext&, Args args) {
    if (args.size() % 2) fail(ErrorKind::Type, "hash-map expects keys and values in pairs, got ", args.size(), " arguments");
    Value map = makeMap({});
    for (size_t i = 0; i < args.size(); i += 2) map = map.map().assoc(args[i], args[i + 1]);
    return map;
  });
  evaluator.defineBuiltin("vec", 1, 1, [](CallContext& cx, Args args) {
    if (args[0].isVector()) return args[0];
    return makeVector(items(cx, args, 0));
  });
  // Sequence concatenation into a list, for quasiquote's expansions; `concat` itself is
  // the tensor primitive of docs/language.md §4.
  evaluator.defineBuiltin("%concat", 0, -1, [](CallContext& cx, Args args) {
    std::vector<Value> out;
    for (size_t i = 0; i < args.size(); ++i) {
      std::vector<Value> part = items(cx, args, i);
      out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    return makeList(out);
  });
}

/// Taking sequences apart and adding to them: first ... nth, cons, conj.
void defineSequenceAccess(Evaluator& evaluator) {
  evaluator.defineBuiltin("first", 1, 1, [](CallContext& cx, Args args) {
    const Value& v = args[0];
    if (v.isList()) return v.list() ? v.list()->first() : Value();
    if (v.isVector()) return v.vector().count() ? v.vector()[0] : Value();
    if (sequenceCount(v) == 0) return Value();
    return nthOf(cx, v, 0, nullptr);
  });
  evaluator.defineBuiltin("second", 1, 1, [](CallContext& cx, Args args) {
    const Value none;
    return sequenceCount(args[0]) < 2 ? Value() : nthOf(cx, args[0], 1, &none);
  });
  evaluator.defineBuiltin("last", 1, 1, [](CallContext& cx, Args args) {
    const int64_t n = sequenceCount(args[0]);
    return n == 0 ? Value() : nthOf(cx, args[0], n - 1, nullptr);
  });
  evaluator.defineBuiltin("rest", 1, 1, [](CallContext& cx, Args args) {
    const Value& v = args[0];
    if (v.isVector()) return v.vector().drop(1);
    std::vector<Value> all = items(cx, args, 0);
    if (!all.empty()) all.erase(all.begin());
    return makeVector(std::move(all));
  });
  evaluator.defineBuiltin("next", 1, 1, [](CallContext& cx, Args args) {
    if (sequenceCount(args[0]) <= 1) return Value();
    std::vector<Value> all = items(cx, args, 0);
    all.erase(all.begin());
    return makeVector(std::move(all));
  });
  evaluator.defineBuiltin("nth", 2, 3, [](CallContext& cx, Args args) {
    return nthOf(cx, args[0], intArg(cx, args, 1), args.size() == 3 ? &args[2] : nullptr);
  });
  evaluator.defineBuiltin("cons", 2, 2, [](CallContext& cx, Args args) {
    if (args[1].isList() || args[1].isNil())
      return Value(new ListObj(args[0], args[1].isNil() ? Value::emptyList() : args[1]));
    std::vector<Value> all = items(cx, args, 1);
    all.insert(all.begin(), args[0]);
    return makeList(all);
  });
  evaluator.defineBuiltin("conj", 1, -1, [](CallContext&, Args args) {
    Value coll = args[0];
    for (size_t i = 1; i < args.size(); ++i) coll = conjOne(coll, args[i]);
    return coll;
  });
}

/// Maps (and vectors by index): assoc, dissoc, get, contains?, keys, vals.
void defineMapFunctions(Evaluator& evaluator) {
  evaluator.defineBuiltin("assoc", 3, -1, [](CallContext& cx, Args args) {
    if ((args.size() - 1) % 2) fail(ErrorKind::Type, "assoc expects keys and values in pairs");
    Value coll = args[0].isNil() ? makeMap({}) : args[0];
    for (size_t i = 1; i < args.size(); i += 2) {
      if (coll.isMap()) {
        coll = coll.map().assoc(args[i], args[i + 1]);
      } else if (coll.isVector()) {
        const int64_t index = intArg(cx, args, i);
        const auto n = static_cast<int64_t>(coll.vector().count());
        if (index < 0 || index > n)
          fail(ErrorKind::Value, "assoc: index ", index, " is out of range for a vector of ", n);
        if (index == n) {
          coll = coll.vector().conj(args[i + 1]);
        } else {
          coll = coll.vector().assoc(static_cast<size_t>(index), args[i + 1]);
        }
      } else {
        badArgument(cx, 0, "a map or vector", coll);
      }
    }
    return coll;
  });
  evaluator.defineBuiltin("dissoc", 1, -1, [](CallContext& cx, Args args) {
    if (args[0].isNil()) return Value();
    if (!args[0].isMap()) badArgument(cx, 0, "a map", args[0]);
    Value map = args[0];
    for (size_t i = 1; i < args.size(); ++i) map = map.map().dissoc(args[i]);
    return map;
  });
  evaluator.defineBuiltin("get", 2, 3, [](CallContext& cx, Args args) {
    const Value notFound = args.size() == 3 ? args[2] : Value();
    const Value& coll = args[0];
    if (coll.isNil() || coll.isMap() || coll.isVector()) return getIn(coll, args[1], notFound);
    badArgument(cx, 0, "a map or vector", coll);
  });
  evaluator.defineBuiltin("contains?", 2, 2, [](CallContext& cx, Args args) {
    const Value& coll = args[0];
    if (coll.isMap()) return boolean(coll.map().find(args[1]) != nullptr);
    if (coll.isVector()) {
      const Value& k = args[1];
      staging::requireStatic(k, "contains?: the index into a vector");
      if (!k.isTensor() || !k.tensor().isScalar() || isFloat(k.tensor().dtype())) return boolean(false);
      const int64_t i = k.tensor().toInt();
      return boolean(i >= 0 && i < static_cast<int64_t>(coll.vector().count()));
    }
    if (coll.isNil()) return boolean(false);
    badArgument(cx, 0, "a map or vector", coll);
  });
  evaluator.defineBuiltin("keys", 1, 1, [](CallContext& cx, Args args) {
    if (args[0].isNil()) return Value();
    if (!args[0].isMap()) badArgument(cx, 0, "a map", args[0]);
    std::vector<Value> out;
    for (const auto& entry : args[0].map().entries()) out.push_back(entry.first);
    return makeVector(std::move(out));
  });
  evaluator.defineBuiltin("vals", 1, 1, [](CallContext& cx, Args args) {
    if (args[0].isNil()) return Value();
    if (!args[0].isMap()) badArgument(cx, 0, "a map", args[0]);
    std::vector<Value> out;
    for (const auto& entry : args[0].map().entries()) out.push_back(entry.second);
    return makeVector(std::move(out));
  });
}

/// Whole sequences: empty?, range, reverse, into.
void defineSequenceFunctions(Evaluator& evaluator) {
  evaluator.defineBuiltin("empty?", 1, 1, [](CallContext& cx, Args args) {
    return boolean(countOf(cx, args[0]).tensor().toInt() == 0);
  });
  evaluator.defineBuiltin("range", 1, 3, [](CallContext& cx, Args args) { return range(cx, args); });
  evaluator.defineBuiltin("reverse", 1, 1, [](CallContext& cx, Args args) {
    std::vector<Value> all = items(cx, args, 0);
    std::reverse(all.begin(), all.end());
    return makeVector(std::move(all));
  });
  evaluator.defineBuiltin("into", 2, 2, [](CallContext& cx, Args args) {
    Value coll = args[0];
    for (const Value& x : items(cx, args, 1)) coll = conjOne(coll, x);
    return coll;
  });

}

/// Tells a progress bar watching `coll` (eval/Progress.cpp) that its first `done`
/// elements have been used; nothing for any other collection.
void walked(const Value& coll, size_t done) {
  if (!coll.isVector()) return;
  if (SequenceObserver* observer = coll.vector().observer()) observer->reached(coll.vector().observedStart() + done);
}

/// Functions of functions: map, filter, reduce, apply, and sort.
void defineHigherOrder(Evaluator& evaluator) {
  evaluator.defineBuiltin("map", 2, -1, [](CallContext& cx, Args args) {
    const Value& f = callableArg(cx, args, 0);
    std::vector<std::vector<Value>> colls;
    size_t n = SIZE_MAX;
    for (size_t i = 1; i < args.size(); ++i) {
      colls.push_back(items(cx, args, i));
      n = std::min(n, colls.back().size());
    }
    std::vector<Value> out;
    out.reserve(n);
    std::vector<Value> callArgs(colls.size());
    for (size_t k = 0; k < n; ++k) {
      cx.evaluator.poll(cx.span);
      for (size_t c = 0; c < colls.size(); ++c) callArgs[c] = colls[c][k];
      out.push_back(cx.evaluator.apply(f, callArgs, cx.span));
      for (size_t i = 1; i < args.size(); ++i) walked(args[i], k + 1);
    }
    return makeVector(std::move(out));
  });
  evaluator.defineBuiltin("filter", 2, 2, [](CallContext& cx, Args args) {
    const Value& f = callableArg(cx, args, 0);
    std::vector<Value> out;
    size_t done = 0;
    for (const Value& x : items(cx, args, 1)) {
      cx.evaluator.poll(cx.span);
      if (cx.evaluator.apply(f, Args(&x, 1), cx.span).truthy()) out.push_back(x);
      walked(args[1], ++done);
    }
    return makeVector(std::move(out));
  });
  evaluator.defineBuiltin("reduce", 2, 3, [](CallContext& cx, Args args) {
    const Value& f = callableArg(cx, args, 0);
    std::vector<Value> all = items(cx, args, args.size() - 1);
    size_t start = 0;
    Value acc;
    if (args.size() == 3) {
      acc = args[1];
    } else if (all.empty()) {
      return cx.evaluator.apply(f, {}, cx.span);
    } else {
      acc = all[0];
      start = 1;
    }
    for (size_t i = start; i < all.size(); ++i) {
      cx.evaluator.poll(cx.span);
      const Value pair[2] = {acc, all[i]};
      acc = cx.evaluator.apply(f, Args(pair, 2), cx.span);
      walked(args.back(), i + 1);
    }
    return acc;
  });
  evaluator.defineBuiltin("apply", 2, -1, [](CallContext& cx, Args args) {
    const Value& f = callableArg(cx, args, 0);
    std::vector<Value> callArgs(args.begin() + 1, args.end() - 1);
    std::vector<Value> spread = items(cx, args, args.size() - 1);
    callArgs.insert(callArgs.end(), spread.begin(), spread.end());
    return cx.evaluator.apply(f, callArgs, cx.span);
  });
  evaluator.defineBuiltin("sort", 1, 1, [](CallContext& cx, Args args) {
    std::vector<Value> all = items(cx, args, 0);
    const bool strings = std::all_of(all.begin(), all.end(), [](const Value& v) { return v.isString(); });
    const bool numbers = std::all_of(all.begin(), all.end(), [](const Value& v) {
      return v.isTensor() && v.tensor().isScalar();
    });
    if (!strings && !numbers) fail(ErrorKind::Type, "sort expects numbers or strings");
    std::stable_sort(all.begin(), all.end(), [&](const Value& a, const Value& b) {
      if (strings) return a.string().text() < b.string().text();
      return a.tensor().toDouble() < b.tensor().toDouble();
    });
    return makeVector(std::move(all));
  });
}

} // namespace

void registerCollectionBuiltins(Evaluator& evaluator) {
  defineConstructors(evaluator);
  defineSequenceAccess(evaluator);
  defineMapFunctions(evaluator);
  defineSequenceFunctions(evaluator);
  defineHigherOrder(evaluator);
}

} // namespace tsl::builtins
