// ir/TypeRules.cpp — running the table's rules on types with symbolic dimensions.
//
// A symbolic dimension is a product of names and at most one integer: `n`, `n*64`,
// `b*n` (what reshapes of symbolic shapes give). Each name stands for a distinct prime
// near a million while the rule runs (inside Shape::StandInSizes, which lets such
// shapes exceed the element limit), and result sizes divisible by those primes are
// named again by factoring them.
#include "ir/TypeRules.h"

#include <cctype>
#include <map>

namespace tsl::ir {

namespace {

/// Primes near a million: sizes no real program uses as a dimension or a multiple of one.
constexpr int64_t kSentinels[] = {1000003, 1000033, 1000037, 1000039, 1000081, 1000099, 1000117, 1000121};

class Symbols {
public:
  /// The stand-in size of a symbolic dimension.
  int64_t size(const std::string& text) {
    int64_t product = 1, factor = 1;
    size_t start = 0;
    while (start <= text.size()) {
      size_t star = text.find('*', start);
      if (star == std::string::npos) star = text.size();
      const std::string part = text.substr(start, star - start);
      if (part.empty()) fail(ErrorKind::Shape, "bad symbolic dimension '", text, "'");
      if (std::isdigit(static_cast<unsigned char>(part[0]))) {
        if (part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos || factor != 1)
          fail(ErrorKind::Shape, "bad symbolic dimension '", text, "'");
        factor = std::stoll(part);
      } else {
        product = multiply(product, sentinel(part), text);
      }
      start = star + 1;
    }
    return multiply(product, factor, text);
  }

  bool any() const { return !byName_.empty(); }

  /// A size in symbols again: "n", "n*m*64", or nullopt if no symbol divides it.
  std::optional<std::string> name(int64_t size) const {
    if (size <= 0 || byName_.empty()) return std::nullopt;
    std::string out;
    for (const auto& [sentinel, name] : byValue_)
      while (size % sentinel == 0) {
        out += (out.empty() ? "" : "*") + name;
        size /= sentinel;
      }
    if (out.empty()) return std::nullopt;
    if (size != 1) out += cat("*", size);
    return out;
  }

  /// A rule's message with the stand-in sizes (and products of them) named again.
  std::string rename(const std::string& message) const {
    std::string out;
    for (size_t i = 0; i < message.size();) {
      if (!std::isdigit(static_cast<unsigned char>(message[i]))) {
        out += message[i++];
        continue;
      }
      size_t j = i;
      while (j < message.size() && std::isdigit(static_cast<unsigned char>(message[j]))) ++j;
      const std::string digits = message.substr(i, j - i);
      std::optional<std::string> symbolic;
      if (digits.size() >= 7 && digits.size() <= 18) symbolic = name(std::stoll(digits));
      out += symbolic ? *symbolic : digits;
      i = j;
    }
    return out;
  }

private:
  int64_t sentinel(const std::string& name) {
    auto it = byName_.find(name);
    if (it != byName_.end()) return it->second;
    if (byName_.size() == std::size(kSentinels)) fail(ErrorKind::Shape, "too many symbolic dimensions in one operation");
    const int64_t value = kSentinels[byName_.size()];
    byName_[name] = value;
    byValue_[value] = name;
    return value;
  }

  static int64_t multiply(int64_t a, int64_t b, const std::string& text) {
    if (b != 0 && a > (int64_t(1) << 62) / b) fail(ErrorKind::Shape, "the symbolic dimension '", text, "' is too large");
    return a * b;
  }

  std::map<std::string, int64_t> byName_;
  std::map<int64_t, std::string> byValue_;
};

} // namespace

Type inferPrimitiveType(OpKind kind, const OpAttrs& attrs, std::span<const Type> operands) {
  Symbols symbols;
  std::vector<TensorType> types;
  for (const Type& t : operands) {
    TensorType tt{t.dtype, false, {}};
    for (const Dim& d : t.dims) tt.shape.push(d.symbolic() ? symbols.size(d.symbol) : d.size);
    types.push_back(tt);
  }
  TensorType result;
  {
    std::optional<Shape::StandInSizes> standIns;
    if (symbols.any()) standIns.emplace();
    try {
      result = inferType(kind, attrs, types);
    } catch (Error& e) {
      if (!symbols.any()) throw;
      throw Error(e.kind(), symbols.rename(e.message()), e.span());
    }
  }
  Type type;
  type.dtype = result.weak ? concreteDType({result.dtype, true}) : result.dtype;
  for (int64_t size : result.shape) {
    const std::optional<std::string> symbolic = symbols.name(size);
    type.dims.push_back(symbolic ? Dim{0, *symbolic} : Dim{size, {}});
  }
  // The layout: the operation table's rule over the operands of the result's shape.
  std::vector<OperandLayout> laid;
  for (const Type& t : operands) laid.push_back({t.layout, t.rank() > 0 && t.dims == type.dims});
  type.layout = resultLayout(kind, attrs, laid, type.rank());
  return type;
}

} // namespace tsl::ir
