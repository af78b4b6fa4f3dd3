// parser/Syntax.h — the syntax tree: what the reader produces and macros consume.
//
// A Syntax node is an immutable S-expression with the span it was read from. Every later
// stage (macro expansion, analysis, lowering to IR) works on these nodes and keeps their
// spans, so that an error anywhere points at the user's source. Nodes built by a macro take
// the span of the form they replace. `Embedded` carries a value of a higher layer (a tensor
// or function spliced into code by a macro) through this layer without it knowing the type.
#pragma once

#include "tsl/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tsl {

enum class SyntaxKind : uint8_t {
  List,     ///< (f x)
  Vector,   ///< [a b]
  Map,      ///< {:k v}: items hold keys and values alternately
  Integer,  ///< 42
  Float,    ///< 3.5
  String,   ///< "text" (escapes resolved)
  Keyword,  ///< :axis (text holds "axis")
  Symbol,   ///< x, nn/linear
  Bool,     ///< true, false
  Nil,      ///< nil
  Embedded, ///< a value of a higher layer, spliced in by a macro
};

/// A value of a higher layer carried inside a syntax tree. The layer that embeds it
/// also knows how to take it out again.
class EmbeddedValue {
public:
  virtual ~EmbeddedValue() = default;
  /// How the value prints inside a printed form.
  virtual std::string print() const = 0;
};

class Syntax;
using SyntaxPtr = std::shared_ptr<const Syntax>;

class Syntax {
public:
  static SyntaxPtr list(std::vector<SyntaxPtr> items, Span span);
  static SyntaxPtr vector(std::vector<SyntaxPtr> items, Span span);
  static SyntaxPtr map(std::vector<SyntaxPtr> keysAndValues, Span span);
  static SyntaxPtr integer(int64_t value, Span span);
  static SyntaxPtr floating(double value, Span span);
  static SyntaxPtr string(std::string value, Span span);
  static SyntaxPtr keyword(std::string name, Span span);
  static SyntaxPtr symbol(std::string name, Span span);
  static SyntaxPtr boolean(bool value, Span span);
  static SyntaxPtr nil(Span span);
  static SyntaxPtr embedded(std::shared_ptr<const EmbeddedValue> value, Span span);

  SyntaxKind kind() const { return kind_; }
  const Span& span() const { return span_; }

  bool isList() const { return kind_ == SyntaxKind::List; }
  bool isVector() const { return kind_ == SyntaxKind::Vector; }
  bool isSymbol() const { return kind_ == SyntaxKind::Symbol; }
  bool isSymbol(std::string_view name) const { return isSymbol() && text_ == name; }
  bool isKeyword() const { return kind_ == SyntaxKind::Keyword; }
  bool isCompound() const {
    return kind_ == SyntaxKind::List || kind_ == SyntaxKind::Vector || kind_ == SyntaxKind::Map;
  }

  /// Children of a list, vector or map (maps alternate key, value).
  const std::vector<SyntaxPtr>& items() const { return items_; }
  size_t size() const { return items_.size(); }
  const SyntaxPtr& operator[](size_t i) const { return items_[i]; }
  /// The head symbol's name if this is a list starting with a symbol, else "".
  std::string_view headName() const;

  /// Symbol name, keyword name (without ':'), or string contents.
  const std::string& text() const { return text_; }
  int64_t intValue() const { return int_; }
  double floatValue() const { return float_; }
  bool boolValue() const { return int_ != 0; }
  const std::shared_ptr<const EmbeddedValue>& embeddedValue() const { return embedded_; }

  /// The same node at another span (used when a macro's output takes the call's span).
  SyntaxPtr withSpan(Span span) const;

  /// What a higher layer derived from this node and keeps with it (the evaluator keeps
  /// the node's data form there, so that handing the same form to macros again and again
  /// costs nothing). Not part of the node's meaning; set at most once per layer.
  const std::shared_ptr<const EmbeddedValue>& derived() const { return derived_; }
  void setDerived(std::shared_ptr<const EmbeddedValue> value) const { derived_ = std::move(value); }

  /// Prints the form so that reading it back gives an equal form.
  std::string print() const;

private:
  Syntax(SyntaxKind kind, Span span) : kind_(kind), span_(span) {}

  SyntaxKind kind_;
  Span span_;
  int64_t int_ = 0;
  double float_ = 0;
  std::string text_;
  std::vector<SyntaxPtr> items_;
  std::shared_ptr<const EmbeddedValue> embedded_;
  mutable std::shared_ptr<const EmbeddedValue> derived_;
};

/// Escapes a string the way the reader reads it back ("a\n\"b\"").
std::string quoteString(std::string_view text);

/// Formats a float the shortest way that reads back to the same double, always with a
/// '.' or an exponent ("2.0", "0.1", "1e+20", "nan", "inf").
std::string formatFloatLiteral(double value);

} // namespace tsl
