// ir/Type.cpp — IR types: printing, parsing, conversion to the runtime's TensorType.
#include "ir/Type.h"

#include "runtime/Layout.h"

#include <cctype>
#include <charconv>

namespace tsl::ir {

std::optional<Layout> layoutFromName(std::string_view name) {
  if (name == "default") return Layout::RowMajor;
  return layoutFromKeyword(name);
}

Type Type::of(const TensorType& t) {
  return of(t.weak ? concreteDType({t.dtype, true}) : t.dtype, t.shape);
}

Type Type::of(const Tensor& t) {
  Type type = of(t.weak() ? concreteDType(t.typeKey()) : t.dtype(), t.shape());
  type.layout = t.layout();
  return type;
}

Type Type::of(DType dtype, const Shape& shape) {
  Type type;
  type.dtype = dtype;
  for (int64_t d : shape) type.dims.push_back({d, {}});
  return type;
}

bool Type::concrete() const {
  for (const Dim& d : dims)
    if (d.symbolic()) return false;
  return true;
}

Shape Type::shape() const {
  Shape s;
  for (const Dim& d : dims) {
    TSL_ASSERT(!d.symbolic(), "the symbolic dimension ", d.symbol, " has no size here");
    s.push(d.size);
  }
  return s;
}

TensorType Type::tensorType() const { return {dtype, false, shape()}; }

int64_t Type::bytes() const { return physicalBytes(layout, shape(), dtype); }

std::string Type::str() const {
  std::string out = dtypeName(dtype);
  if (!dims.empty()) {
    out += '[';
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) out += ',';
      out += dims[i].symbolic() ? dims[i].symbol : std::to_string(dims[i].size);
    }
    out += ']';
  }
  if (layout != Layout::RowMajor) out += cat("{", layoutName(layout), "}");
  return out;
}

std::optional<Type> parseType(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]))) ++i;
  const auto dtype = dtypeFromName(text.substr(0, i));
  if (!dtype) return std::nullopt;
  Type type;
  type.dtype = *dtype;
  if (i < text.size() && text[i] == '[') {
    ++i;
    while (i < text.size() && text[i] != ']') {
      size_t start = i;
      while (i < text.size() && text[i] != ',' && text[i] != ']') ++i;
      const std::string_view dim = text.substr(start, i - start);
      if (dim.empty()) return std::nullopt;
      Dim d;
      if (std::isdigit(static_cast<unsigned char>(dim[0]))) {
        auto [ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), d.size);
        if (ec != std::errc() || ptr != dim.data() + dim.size()) return std::nullopt;
      } else {
        for (char c : dim) // names, and derived sizes such as n*64
          if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '*') return std::nullopt;
        d.symbol = std::string(dim);
      }
      type.dims.push_back(d);
      if (type.dims.size() > static_cast<size_t>(Shape::kMaxRank)) return std::nullopt;
      if (i < text.size() && text[i] == ',') {
        ++i;
        if (i < text.size() && text[i] == ']') return std::nullopt; // f32[2,]
      }
    }
    if (i >= text.size()) return std::nullopt;
    ++i; // ']'
  }
  if (i < text.size() && text[i] == '{') {
    const size_t close = text.find('}', i);
    if (close == std::string_view::npos) return std::nullopt;
    const auto layout = layoutFromName(text.substr(i + 1, close - i - 1));
    if (!layout || !layoutFitsRank(*layout, type.rank())) return std::nullopt;
    type.layout = *layout;
    i = close + 1;
  }
  if (i != text.size()) return std::nullopt;
  return type;
}

} // namespace tsl::ir
