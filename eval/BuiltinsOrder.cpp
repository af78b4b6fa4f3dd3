// eval/BuiltinsOrder.cpp — ordering collections by a key: sort-by.
#include "eval/Builtins.h"

#include <algorithm>

namespace tsl::builtins {

void registerOrderBuiltins(Evaluator& evaluator) {
  // (sort-by keyfn coll) or (sort-by keyfn comp coll): the elements of coll as a vector,
  // ordered by (keyfn x) ascending — keys all numbers or all strings — or by (comp a b)
  // (true when a's key comes first); stable, as Clojure's.
  evaluator.defineBuiltin("sort-by", 2, 3, [](CallContext& cx, Args args) {
    const Value& keyfn = callableArg(cx, args, 0);
    const Value* comp = args.size() == 3 ? &callableArg(cx, args, 1) : nullptr;
    const Value& coll = args.back();
    if (!(coll.isNil() || coll.isSequential() || coll.isMap() || coll.isNonScalarTensor()))
      badArgument(cx, args.size() - 1, "a collection", coll);
    const std::vector<Value> all = sequenceItems(coll);
    std::vector<Value> keys;
    keys.reserve(all.size());
    for (const Value& x : all) keys.push_back(cx.evaluator.apply(keyfn, std::span<const Value>(&x, 1), cx.span));
    const bool strings = std::all_of(keys.begin(), keys.end(), [](const Value& k) { return k.isString(); });
    const bool numbers = std::all_of(keys.begin(), keys.end(),
                                     [](const Value& k) { return k.isTensor() && k.tensor().isScalar(); });
    if (!comp && !strings && !numbers)
      fail(ErrorKind::Type, "sort-by: the keys must be all numbers or all strings (or give a comparator)");
    std::vector<size_t> order(all.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (comp) {
        const Value pair[] = {keys[a], keys[b]};
        return cx.evaluator.apply(*comp, pair, cx.span).truthy();
      }
      if (strings) return keys[a].string().text() < keys[b].string().text();
      return keys[a].tensor().toDouble() < keys[b].tensor().toDouble();
    });
    std::vector<Value> out;
    out.reserve(all.size());
    for (size_t i : order) out.push_back(all[i]);
    return makeVector(std::move(out));
  });

  document(evaluator, "sort-by", "(sort-by keyfn coll) or (sort-by keyfn comp coll): coll as a vector ordered by (keyfn x), all numbers or all strings, or by the comparator comp; stable.\n  e.g. (sort-by count [\"ccc\" \"a\" \"bb\"])  ; [\"a\" \"bb\" \"ccc\"]");
}

} // namespace tsl::builtins
