// eval/Convert.cpp — quoting, unquoting, tensor literals.
#include "eval/Convert.h"

#include "eval/Printer.h"
#include "runtime/Dispatch.h"
#include "tsl/StackGuard.h"

namespace tsl {

namespace {

bool isNumber(const Syntax& s) {
  return s.kind() == SyntaxKind::Integer || s.kind() == SyntaxKind::Float;
}

/// Whether `form` is a non-empty vector of numbers or of such vectors (raggedness aside).
bool isNumericNest(const Syntax& form) {
  if (!form.isVector() || form.size() == 0) return false;
  for (const SyntaxPtr& item : form.items())
    if (!isNumber(*item) && !isNumericNest(*item)) return false;
  return true;
}

} // namespace

std::optional<Tensor> tensorLiteral(const Syntax& form) {
  if (!isNumericNest(form)) return std::nullopt;
  // The shape is read off the first element at each depth; visit() checks the rest.
  std::vector<int64_t> shape;
  for (const Syntax* s = &form; s->isVector(); s = s->items()[0].get())
    shape.push_back(static_cast<int64_t>(s->size()));
  if (shape.size() > static_cast<size_t>(Shape::kMaxRank))
    throw Error(ErrorKind::Value, cat("tensor literal of rank ", shape.size(), " exceeds the maximum of ",
                                      Shape::kMaxRank),
                form.span());
  std::vector<const Syntax*> numbers;
  bool anyFloat = false;
  // Every row at depth d must be a vector of shape[d] elements; the last level numbers.
  auto visit = [&](auto& self, const Syntax& node, size_t depth) -> void {
    checkStack();
    if (!node.isVector() || static_cast<int64_t>(node.size()) != shape[depth])
      throw Error(ErrorKind::Value,
                  node.isVector()
                      ? cat("ragged tensor literal: this row has ", node.size(),
                            " elements, expected ", shape[depth])
                      : cat("ragged tensor literal: expected a row of ", shape[depth],
                            " numbers, found ", node.print()),
                  node.span());
    for (const SyntaxPtr& item : node.items()) {
      if (depth + 1 == shape.size()) {
        if (!isNumber(*item))
          throw Error(ErrorKind::Value,
                      cat("ragged tensor literal: expected a number, found ", item->print()),
                      item->span());
        numbers.push_back(item.get());
        anyFloat |= item->kind() == SyntaxKind::Float;
      } else {
        self(self, *item, depth + 1);
      }
    }
  };
  visit(visit, form, 0);

  const DType dtype = anyFloat ? DType::F32 : DType::I64;
  Tensor t = Tensor::empty(dtype, Shape(std::span<const int64_t>(shape)));
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = reinterpret_cast<T*>(t.mutableData());
    for (size_t i = 0; i < numbers.size(); ++i) {
      const Syntax& n = *numbers[i];
      out[i] = n.kind() == SyntaxKind::Integer ? convertElement<T>(n.intValue())
                                               : convertElement<T>(n.floatValue());
    }
  });
  return t;
}

namespace {

/// The data form of a compound node, made once and kept on the node (Syntax::derived):
/// a macro gets the same argument forms again each time an enclosing macro's expansion
/// is expanded, and converting them anew each time made nested macros quadratic.
Value compoundToValue(const SyntaxPtr& form) {
  const Syntax& s = *form;
  if (s.derived()) return static_cast<const EmbeddedValueHolder&>(*s.derived()).value();
  Value out;
  if (s.isList()) {
    std::vector<Value> items;
    items.reserve(s.size());
    for (const SyntaxPtr& item : s.items()) items.push_back(syntaxToValue(item));
    out = makeList(items, s.span());
    if (out.list()) const_cast<ListObj*>(out.list())->setOrigin(form);
  } else if (s.isVector()) {
    if (auto t = tensorLiteral(s)) {
      out = Value(std::move(*t));
    } else {
      std::vector<Value> items;
      items.reserve(s.size());
      for (const SyntaxPtr& item : s.items()) items.push_back(syntaxToValue(item));
      out = makeVector(std::move(items), s.span());
      const_cast<VectorObj&>(out.vector()).setOrigin(form);
    }
  } else {
    std::vector<std::pair<Value, Value>> entries;
    for (size_t i = 0; i + 1 < s.size(); i += 2) entries.emplace_back(syntaxToValue(s[i]), syntaxToValue(s[i + 1]));
    out = makeMap(std::move(entries), s.span());
    // A map whose literal keys turned out equal has fewer entries than its syntax.
    if (out.map().count() * 2 == s.size()) const_cast<MapObj&>(out.map()).setOrigin(form);
  }
  s.setDerived(std::make_shared<EmbeddedValueHolder>(out));
  return out;
}

/// The node a collection was converted from, if it is still alive.
SyntaxPtr originOf(const Value& value) {
  switch (value.kind()) {
  case ValueKind::List: return value.list() ? value.list()->origin().lock() : nullptr;
  case ValueKind::Vector: return value.vector().origin().lock();
  case ValueKind::Map: return value.map().origin().lock();
  default: return nullptr;
  }
}

} // namespace

Value syntaxToValue(const SyntaxPtr& form) {
  checkStack();
  const Syntax& s = *form;
  switch (s.kind()) {
  case SyntaxKind::List:
  case SyntaxKind::Vector:
  case SyntaxKind::Map: return compoundToValue(form);
  case SyntaxKind::Integer: return Value(Tensor::weakInt(s.intValue()));
  case SyntaxKind::Float: return Value(Tensor::weakFloat(s.floatValue()));
  case SyntaxKind::String: return makeString(s.text());
  case SyntaxKind::Keyword: return makeKeyword(s.text());
  case SyntaxKind::Symbol: return makeSymbol(s.text(), s.span());
  case SyntaxKind::Bool: return Value::boolean(s.boolValue());
  case SyntaxKind::Nil: return Value::nil();
  case SyntaxKind::Embedded:
    return static_cast<const EmbeddedValueHolder&>(*s.embeddedValue()).value();
  }
  return Value::nil();
}

SyntaxPtr valueToSyntax(const Value& value, const Span& fallback) {
  checkStack();
  // A collection that came from syntax unchanged goes back to that very node.
  if (SyntaxPtr origin = originOf(value)) return origin;
  auto spanOr = [&](const Span& own) { return own.known() ? own : fallback; };
  switch (value.kind()) {
  case ValueKind::Nil: return Syntax::nil(fallback);
  case ValueKind::Tensor: {
    const Tensor& t = value.tensor();
    if (t.isScalar() && t.weak())
      return isFloat(t.dtype()) ? Syntax::floating(t.toDouble(), fallback)
                                : Syntax::integer(t.toInt(), fallback);
    if (t.isScalar() && t.dtype() == DType::Bool) return Syntax::boolean(t.isNonZero(), fallback);
    return Syntax::embedded(std::make_shared<EmbeddedValueHolder>(value), fallback);
  }
  case ValueKind::String: return Syntax::string(value.string().text(), fallback);
  case ValueKind::Keyword: return Syntax::keyword(value.keyword().name(), fallback);
  case ValueKind::Symbol:
    return Syntax::symbol(value.symbol().name(), spanOr(value.symbol().span()));
  case ValueKind::List: {
    std::vector<SyntaxPtr> items;
    const Span span = value.list() ? spanOr(value.list()->span()) : fallback;
    for (const ListObj* cell = value.list(); cell; cell = cell->next())
      items.push_back(valueToSyntax(cell->first(), span));
    return Syntax::list(std::move(items), span);
  }
  case ValueKind::Vector: {
    const Span span = spanOr(value.vector().span());
    std::vector<SyntaxPtr> items;
    for (const Value& item : value.vector().items()) items.push_back(valueToSyntax(item, span));
    return Syntax::vector(std::move(items), span);
  }
  case ValueKind::Map: {
    const Span span = spanOr(value.map().span());
    std::vector<SyntaxPtr> items;
    for (const auto& [k, v] : value.map().entries()) {
      items.push_back(valueToSyntax(k, span));
      items.push_back(valueToSyntax(v, span));
    }
    return Syntax::map(std::move(items), span);
  }
  case ValueKind::Function:
  case ValueKind::Recur:
  case ValueKind::Internal:
    return Syntax::embedded(std::make_shared<EmbeddedValueHolder>(value), fallback);
  }
  return Syntax::nil(fallback);
}

std::string EmbeddedValueHolder::print() const { return printValue(value_, true); }

} // namespace tsl
