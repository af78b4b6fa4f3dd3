// ir/TypeRules.cpp — running the table's rules on types with symbolic dimensions.
#include "ir/TypeRules.h"

#include <map>

namespace tsl::ir {

namespace {

/// Primes near a million: sizes no real program uses, and products of two still within
/// the element limit the rules check.
constexpr int64_t kSentinels[] = {1000003, 1000033, 1000037, 1000039, 1000081, 1000099, 1000117, 1000121};

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

} // namespace

Type inferPrimitiveType(OpKind kind, const OpAttrs& attrs, std::span<const Type> operands) {
  std::map<std::string, int64_t> symbols;
  std::vector<TensorType> types;
  for (const Type& t : operands) {
    TensorType tt{t.dtype, false, {}};
    for (const Dim& d : t.dims) {
      if (!d.symbolic()) {
        tt.shape.push(d.size);
        continue;
      }
      auto [it, inserted] = symbols.emplace(d.symbol, 0);
      if (inserted) {
        if (symbols.size() > std::size(kSentinels))
          fail(ErrorKind::Shape, "too many symbolic dimensions in one operation");
        it->second = kSentinels[symbols.size() - 1];
      }
      tt.shape.push(it->second);
    }
    types.push_back(tt);
  }
  TensorType result;
  try {
    result = inferType(kind, attrs, types);
  } catch (Error& e) {
    if (symbols.empty()) throw;
    std::string message = e.message();
    for (const auto& [name, size] : symbols) message = replaceAll(message, std::to_string(size), name);
    throw Error(e.kind(), message, e.span());
  }
  Type type;
  type.dtype = result.weak ? concreteDType({result.dtype, true}) : result.dtype;
  for (int64_t size : result.shape) {
    Dim d{size, {}};
    for (const auto& [name, sentinel] : symbols) {
      if (size == sentinel) d = {0, name};
      else if (size % sentinel == 0) d = {0, cat(name, "*", size / sentinel)};
    }
    type.dims.push_back(d);
  }
  return type;
}

} // namespace tsl::ir
