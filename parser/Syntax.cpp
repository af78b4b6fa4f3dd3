// parser/Syntax.cpp — construction and printing of syntax nodes.
#include "parser/Syntax.h"

#include "tsl/FormatFloat.h"

namespace tsl {

SyntaxPtr Syntax::list(std::vector<SyntaxPtr> items, Span span) {
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::List, span));
  s->items_ = std::move(items);
  return s;
}

SyntaxPtr Syntax::vector(std::vector<SyntaxPtr> items, Span span) {
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::Vector, span));
  s->items_ = std::move(items);
  return s;
}

SyntaxPtr Syntax::map(std::vector<SyntaxPtr> keysAndValues, Span span) {
  TSL_ASSERT(keysAndValues.size() % 2 == 0);
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::Map, span));
  s->items_ = std::move(keysAndValues);
  return s;
}

SyntaxPtr Syntax::integer(int64_t value, Span span) {
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::Integer, span));
  s->int_ = value;
  return s;
}

SyntaxPtr Syntax::floating(double value, Span span) {
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::Float, span));
  s->float_ = value;
  return s;
}

SyntaxPtr Syntax::string(std::string value, Span span) {
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::String, span));
  s->text_ = std::move(value);
  return s;
}

SyntaxPtr Syntax::keyword(std::string name, Span span) {
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::Keyword, span));
  s->text_ = std::move(name);
  return s;
}

SyntaxPtr Syntax::symbol(std::string name, Span span) {
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::Symbol, span));
  s->text_ = std::move(name);
  return s;
}

SyntaxPtr Syntax::boolean(bool value, Span span) {
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::Bool, span));
  s->int_ = value ? 1 : 0;
  return s;
}

SyntaxPtr Syntax::nil(Span span) {
  return std::shared_ptr<Syntax>(new Syntax(SyntaxKind::Nil, span));
}

SyntaxPtr Syntax::embedded(std::shared_ptr<const EmbeddedValue> value, Span span) {
  auto s = std::shared_ptr<Syntax>(new Syntax(SyntaxKind::Embedded, span));
  s->embedded_ = std::move(value);
  return s;
}

std::string_view Syntax::headName() const {
  if (kind_ != SyntaxKind::List || items_.empty() || !items_[0]->isSymbol()) return {};
  return items_[0]->text_;
}

SyntaxPtr Syntax::withSpan(Span span) const {
  auto s = std::shared_ptr<Syntax>(new Syntax(*this));
  s->span_ = span;
  s->derived_.reset(); // derived from the node at its old span
  return s;
}

std::string quoteString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\\': out += "\\\\"; break;
    case '"': out += "\\\""; break;
    default: out += c;
    }
  }
  out += '"';
  return out;
}

std::string formatFloatLiteral(double value) { return formatShortest(value, true); }

namespace {

void printTo(const Syntax& s, std::string& out) {
  auto printItems = [&](char open, char close) {
    out += open;
    for (size_t i = 0; i < s.size(); ++i) {
      if (i) out += ' ';
      printTo(*s[i], out);
    }
    out += close;
  };
  switch (s.kind()) {
  case SyntaxKind::List: printItems('(', ')'); break;
  case SyntaxKind::Vector: printItems('[', ']'); break;
  case SyntaxKind::Map: printItems('{', '}'); break;
  case SyntaxKind::Integer: out += std::to_string(s.intValue()); break;
  case SyntaxKind::Float: out += formatFloatLiteral(s.floatValue()); break;
  case SyntaxKind::String: out += quoteString(s.text()); break;
  case SyntaxKind::Keyword: out += ':' + s.text(); break;
  case SyntaxKind::Symbol: out += s.text(); break;
  case SyntaxKind::Bool: out += s.boolValue() ? "true" : "false"; break;
  case SyntaxKind::Nil: out += "nil"; break;
  case SyntaxKind::Embedded: out += s.embeddedValue()->print(); break;
  }
}

} // namespace

std::string Syntax::print() const {
  std::string out;
  printTo(*this, out);
  return out;
}

} // namespace tsl
