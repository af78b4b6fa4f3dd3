// ir/Parser.cpp — a lexer and recursive-descent parser for the IR text form.
#include "ir/Parser.h"

#include "ir/Attributes.h"
#include "runtime/Dispatch.h"
#include "tsl/StackGuard.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <unordered_map>

namespace tsl::ir {

namespace {

enum class Tok : uint8_t { End, Ident, Value, Symbol, Int, Float, String, Punct, Arrow };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  uint32_t line = 0, col = 0;
  int64_t i = 0;
  double f = 0;
};

class Lexer {
public:
  Lexer(std::string_view text, const std::string* file) : text_(text), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skipSpace();
      Token t;
      t.line = line_;
      t.col = col_;
      if (pos_ >= text_.size()) {
        out.push_back(t);
        return out;
      }
      const char c = text_[pos_];
      if (c == '%' || c == '@') {
        advance();
        t.kind = c == '%' ? Tok::Value : Tok::Symbol;
        t.text = word(true);
        if (t.text.empty()) error(t, cat("expected a name after '", c, "'"));
      } else if (c == '"') {
        t.kind = Tok::String;
        t.text = string(t);
      } else if (c == '-' && peek(1) == '>') {
        advance();
        advance();
        t.kind = Tok::Arrow;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 ((c == '-' || c == '+') && (std::isdigit(static_cast<unsigned char>(peek(1))) || peek(1) == 'i' || peek(1) == 'n'))) {
        number(t);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        t.kind = Tok::Ident;
        t.text = word(false);
        if (t.text == "nan" || t.text == "inf") {
          t.kind = Tok::Float;
          t.f = t.text == "nan" ? std::nan("") : INFINITY;
        }
      } else if (std::string_view("(){}[]<>,:=*").find(c) != std::string_view::npos) {
        t.kind = Tok::Punct;
        t.text = std::string(1, c);
        advance();
      } else {
        error(t, cat("unexpected character '", c, "'"));
      }
      out.push_back(std::move(t));
    }
  }

  [[noreturn]] void error(const Token& at, const std::string& message) const {
    throw Error(ErrorKind::Syntax, message, Span{file_, at.line, at.col, at.line, at.col});
  }

private:
  char peek(size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else if ((static_cast<unsigned char>(text_[pos_]) & 0xC0) != 0x80) {
      ++col_;
    }
    ++pos_;
  }
  void skipSpace() {
    while (pos_ < text_.size()) {
      if (std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        advance();
      } else if (text_[pos_] == '/' && peek(1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else {
        break;
      }
    }
  }
  std::string word(bool valueName) {
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || (valueName && c == '#') ||
          (!valueName && c == '-' && peek(1) != '>'))
        out += c;
      else
        break;
      advance();
    }
    return out;
  }
  void number(Token& t) {
    const size_t start = pos_;
    if (text_[pos_] == '-' || text_[pos_] == '+') advance();
    if (std::isalpha(static_cast<unsigned char>(text_[pos_]))) { // -inf, -nan
      const std::string w = word(false);
      if (w != "inf" && w != "nan") error(t, cat("unexpected '", w, "'"));
      t.kind = Tok::Float;
      t.f = w == "nan" ? std::nan("") : (text_[start] == '-' ? -INFINITY : INFINITY);
      return;
    }
    bool isFloat = false;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        advance();
      } else if (c == '.' || c == 'e' || c == 'E') {
        isFloat = true;
        advance();
        if ((c == 'e' || c == 'E') && (peek(0) == '-' || peek(0) == '+')) advance();
      } else {
        break;
      }
    }
    std::string_view digits = text_.substr(start, pos_ - start);
    if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
    if (isFloat) {
      t.kind = Tok::Float;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), t.f);
      if (ec != std::errc() || ptr != digits.data() + digits.size()) error(t, cat("bad number '", digits, "'"));
    } else {
      t.kind = Tok::Int;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), t.i);
      if (ec != std::errc() || ptr != digits.data() + digits.size()) error(t, cat("bad integer '", digits, "'"));
    }
    t.text = std::string(digits);
  }
  std::string string(const Token& t) {
    advance(); // opening quote
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_];
      if (c == '\n') error(t, "unterminated string");
      if (c == '\\') {
        advance();
        if (pos_ >= text_.size()) break;
        const char e = text_[pos_];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
      out += c;
      advance();
    }
    if (pos_ >= text_.size()) error(t, "unterminated string");
    advance(); // closing quote
    return out;
  }

  std::string_view text_;
  const std::string* file_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

class Parser {
public:
  Parser(std::vector<Token> tokens, Lexer& lexer, const std::string* file)
      : tokens_(std::move(tokens)), lexer_(lexer), file_(file) {}

  std::unique_ptr<Module> module() {
    auto m = std::make_unique<Module>();
    building_ = m.get();
    while (peek().kind != Tok::End) function(*m);
    return m;
  }

private:
  // ---- Tokens ----
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  bool isPunct(const char* p, size_t ahead = 0) const { return peek(ahead).kind == Tok::Punct && peek(ahead).text == p; }
  bool isIdent(const char* word) const { return peek().kind == Tok::Ident && peek().text == word; }
  [[noreturn]] void error(const std::string& message) const { lexer_.error(peek(), message); }
  void expectPunct(const char* p) {
    if (!isPunct(p)) error(cat("expected '", p, "'", describeHere()));
    next();
  }
  void expectIdent(const char* word) {
    if (!isIdent(word)) error(cat("expected '", word, "'", describeHere()));
    next();
  }
  std::string describeHere() const {
    const Token& t = peek();
    if (t.kind == Tok::End) return " at the end of the text";
    return t.text.empty() ? "" : cat(" before '", t.text, "'");
  }
  Span spanOf(const Token& t) const { return {file_, t.line, t.col, t.line, t.col}; }

  // ---- Names ----
  void pushScope() { scopes_.emplace_back(); }
  void popScope() { scopes_.pop_back(); }
  void define(const std::string& name, Value* v, const Token& at) {
    if (lookup(name)) lexer_.error(at, cat("%", name, " is defined twice"));
    scopes_.back()[name] = v;
    const bool numeric = std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!numeric && name.find('#') == std::string::npos) v->setName(name);
  }
  Value* lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    return nullptr;
  }
  Value* use() {
    const Token& t = peek();
    if (t.kind != Tok::Value) error(cat("expected a value (%name)", describeHere()));
    next();
    Value* v = lookup(t.text);
    if (!v) lexer_.error(t, cat("%", t.text, " is not defined here"));
    return v;
  }
  std::vector<Value*> uses() {
    std::vector<Value*> out;
    if (peek().kind != Tok::Value) return out;
    out.push_back(use());
    while (isPunct(",") && peek(1).kind == Tok::Value) {
      next();
      out.push_back(use());
    }
    return out;
  }

  // ---- Types ----
  Type type() {
    const Token& t = peek();
    if (t.kind != Tok::Ident || !dtypeFromName(t.text)) error(cat("expected a type", describeHere()));
    next();
    Type result;
    result.dtype = *dtypeFromName(t.text);
    if (isPunct("[")) {
      next();
      while (!isPunct("]")) {
        Dim d;
        if (peek().kind == Tok::Int) {
          const Token& size = next();
          d.size = size.i;
          if (d.size < 0) lexer_.error(size, "a dimension must not be negative");
        } else if (peek().kind == Tok::Ident) {
          d.symbol = next().text;
          while (isPunct("*")) { // a size derived from symbols: n*64, b*n
            next();
            if (peek().kind == Tok::Int) d.symbol += cat("*", next().i);
            else if (peek().kind == Tok::Ident) d.symbol += "*" + next().text;
            else error("expected a name or an integer after '*'");
          }
        } else {
          error(cat("expected a dimension", describeHere()));
        }
        result.dims.push_back(d);
        if (result.dims.size() > static_cast<size_t>(Shape::kMaxRank)) error("too many dimensions");
        if (!isPunct("]")) expectPunct(",");
      }
      next();
    }
    // {layout}, told apart from a region by its one layout name before '}'.
    if (isPunct("{") && peek(1).kind == Tok::Ident && layoutFromName(peek(1).text) && isPunct("}", 2)) {
      next();
      const Token name = next();
      result.layout = *layoutFromName(name.text);
      if (!layoutFitsRank(result.layout, result.rank()))
        lexer_.error(name, cat("layout {", name.text, "} does not apply to a tensor of rank ", result.rank()));
      next();
    }
    return result;
  }
  std::vector<Type> typeList() {
    std::vector<Type> out{type()};
    while (isPunct(",")) {
      next();
      out.push_back(type());
    }
    return out;
  }

  // ---- Locations ----
  Span location() {
    if (!isIdent("loc")) return {};
    next();
    expectPunct("(");
    if (peek().kind != Tok::String) error("expected a file name in loc(...)");
    Span span;
    span.file = internFileName(next().text);
    auto integer = [&] {
      if (peek().kind != Tok::Int) error(cat("expected a line or column in loc(...)", describeHere()));
      const int64_t v = next().i;
      if (v < 0 || v > UINT32_MAX) error("a line or column is out of range");
      return static_cast<uint32_t>(v);
    };
    expectPunct(":");
    span.line = integer();
    expectPunct(":");
    span.col = integer();
    // "-L:C": the lexer reads "-L" as a negative integer.
    if (peek().kind != Tok::Int || peek().i > 0) error("expected '-line:col' in loc(...)");
    const int64_t endLine = -next().i;
    if (endLine > UINT32_MAX) error("a line is out of range");
    span.endLine = static_cast<uint32_t>(endLine);
    expectPunct(":");
    span.endCol = integer();
    expectPunct(")");
    return span;
  }

  // ---- Constants ----
  Tensor constantValue(const Type& t) {
    if (!t.concrete()) error("a constant needs a concrete type");
    if (!isIdent("dense")) {
      const Token& v = next();
      if (t.rank() != 0) lexer_.error(v, "a constant of rank > 0 is written dense<...>");
      if (v.kind == Tok::Int) return Tensor::ofInt(v.i, t.dtype);
      if (v.kind == Tok::Float) return Tensor::ofFloat(v.f, t.dtype);
      if (v.kind == Tok::Ident && (v.text == "true" || v.text == "false"))
        return Tensor::ofInt(v.text == "true", t.dtype);
      lexer_.error(v, "expected a number, true or false");
    }
    next();
    expectPunct("<");
    const Shape shape = t.shape();
    Tensor out = Tensor::empty(t.dtype, shape);
    const int64_t n = out.numel();
    if (peek().kind == Tok::String) {
      const Token& hex = next();
      const size_t bytes = static_cast<size_t>(n) * dtypeSize(t.dtype);
      if (hex.text.size() != 2 + 2 * bytes || hex.text.rfind("0x", 0) != 0)
        lexer_.error(hex, cat("expected 0x and ", bytes, " bytes of hex for ", t.str()));
      auto* o = reinterpret_cast<unsigned char*>(out.mutableData());
      for (size_t i = 0; i < bytes; ++i) {
        int value = 0;
        auto [ptr, ec] = std::from_chars(hex.text.data() + 2 + 2 * i, hex.text.data() + 4 + 2 * i, value, 16);
        if (ec != std::errc() || ptr != hex.text.data() + 4 + 2 * i) lexer_.error(hex, "bad hex digit");
        o[i] = static_cast<unsigned char>(value);
      }
    } else {
      int64_t index = 0;
      dispatchDType(t.dtype, [&](auto tag) {
        using T = decltype(tag);
        T* o = reinterpret_cast<T*>(out.mutableData());
        denseList(shape, 0, [&](const Token& v) {
          if (index >= n) lexer_.error(v, "more elements than the type holds");
          if (v.kind == Tok::Int) o[index++] = convertElement<T>(v.i);
          else if (v.kind == Tok::Float) o[index++] = convertElement<T>(v.f);
          else if (v.kind == Tok::Ident && (v.text == "true" || v.text == "false")) o[index++] = convertElement<T>(v.text == "true");
          else lexer_.error(v, "expected a number");
        });
      });
      if (index != n) error(cat("expected ", n, " elements for ", t.str(), ", got ", index));
    }
    expectPunct(">");
    // The elements are written in logical order whatever the layout the type names.
    return t.layout == Layout::RowMajor ? out : toLayout(out, t.layout);
  }
  static std::string shapeText(const Shape& shape) { return shape.str(); }

  template <typename Element>
  void denseList(const Shape& shape, int depth, Element&& element) {
    checkStack();
    if (depth == shape.rank()) {
      element(next());
      return;
    }
    expectPunct("[");
    for (int64_t i = 0; i < shape[depth]; ++i) {
      if (i) {
        if (isPunct("]"))
          error(cat("dense<...> has ", i, " entries along axis ", depth, " where the type ", shapeText(shape), " needs ",
                    shape[depth]));
        expectPunct(",");
      }
      denseList(shape, depth + 1, element);
    }
    if (isPunct(","))
      error(cat("dense<...> has more than ", shape[depth], " entries along axis ", depth, " of ", shapeText(shape)));
    expectPunct("]");
  }

  // ---- Attributes ----
  AttrValue attrValue() {
    checkStack();
    AttrValue v;
    const Token& t = next();
    switch (t.kind) {
    case Tok::Int: v.kind = AttrValue::Kind::Int; v.i = t.i; return v;
    case Tok::Float: v.kind = AttrValue::Kind::Float; v.f = t.f; return v;
    case Tok::String: v.kind = AttrValue::Kind::String; v.text = t.text; return v;
    case Tok::Ident:
      if (t.text == "true" || t.text == "false") {
        v.kind = AttrValue::Kind::Bool;
        v.i = t.text == "true";
      } else if (t.text != "none") {
        v.kind = AttrValue::Kind::Ident;
        v.text = t.text;
      }
      return v;
    case Tok::Punct:
      if (t.text == "[") {
        v.kind = AttrValue::Kind::List;
        while (!isPunct("]")) {
          if (!v.list.empty()) expectPunct(",");
          v.list.push_back(attrValue());
        }
        next();
        return v;
      }
      [[fallthrough]];
    default: lexer_.error(t, "expected an attribute value");
    }
  }
  AttrDict attrDict() {
    AttrDict dict;
    if (!isPunct("{")) return dict;
    next();
    while (!isPunct("}")) {
      if (!dict.empty()) expectPunct(",");
      if (peek().kind != Tok::Ident) error(cat("expected an attribute name", describeHere()));
      std::string key = next().text;
      expectPunct("=");
      dict.emplace_back(std::move(key), attrValue());
    }
    next();
    return dict;
  }

  // ---- Structure ----
  void function(Module& m) {
    expectIdent("func");
    if (peek().kind != Tok::Symbol) error(cat("expected @name", describeHere()));
    const Token& nameToken = next();
    if (m.find(nameToken.text)) lexer_.error(nameToken, cat("@", nameToken.text, " is defined twice"));
    Function& f = m.addFunction(nameToken.text, {});
    pushScope();
    expectPunct("(");
    while (!isPunct(")")) {
      if (!f.body().arguments().empty()) expectPunct(",");
      if (peek().kind != Tok::Value) error(cat("expected a parameter", describeHere()));
      const Token& param = next();
      expectPunct(":");
      define(param.text, f.body().addArgument(type()), param);
    }
    next();
    if (peek().kind != Tok::Arrow) error(cat("expected '->'", describeHere()));
    next();
    expectPunct("(");
    std::vector<Type> declared;
    if (!isPunct(")")) declared = typeList();
    expectPunct(")");
    f.setSpan(location());
    expectPunct("{");
    blockBody(f.body());
    expectPunct("}");
    popScope();
    // The declared result types must be those returned.
    const std::vector<Type> actual = f.resultTypes();
    if (actual != declared) lexer_.error(nameToken, cat("@", f.name(), " declares results that its return does not give"));
  }

  void blockBody(Block& block) {
    checkStack();
    while (!isPunct("}")) {
      if (peek().kind == Tok::End) error("expected '}' before the end of the text");
      operation(block);
    }
  }

  void region(Region& r, bool scoped = true) {
    expectPunct("{");
    if (scoped) pushScope();
    blockBody(r.block());
    if (scoped) popScope();
    expectPunct("}");
  }

  void operation(Block& block) {
    const Span start = spanOf(peek());
    const size_t before = block.ops().size();
    operationAt(block);
    // Where the operation is in the text, for messages about IR without loc(...).
    if (block.ops().size() > before) building_->setTextPosition(block.ops().back().get(), start);
  }

  void operationAt(Block& block) {
    // Results.
    std::vector<std::pair<Token, int>> results; // name, group size (0: single)
    if (peek().kind == Tok::Value) {
      const Token name = next();
      int group = 0;
      if (isPunct(":")) {
        next();
        if (peek().kind != Tok::Int || peek().i < 2 || peek().i > 4096) error("expected a result count of at least 2");
        group = static_cast<int>(next().i);
      }
      results.emplace_back(name, group);
      expectPunct("=");
    }
    const Token opToken = peek();
    if (opToken.kind != Tok::Ident) error(cat("expected an operation", describeHere()));
    next();
    const std::string& mnemonic = opToken.text;
    const size_t expectedResults = results.empty() ? 0 : results[0].second == 0 ? 1 : static_cast<size_t>(results[0].second);
    Operation* op = nullptr;
    if (mnemonic == "constant") {
      // constant <literal> : type — the literal's meaning depends on the type after it.
      const size_t literalAt = pos_;
      skipLiteral();
      expectPunct(":");
      const Type t = type();
      const size_t after = pos_;
      pos_ = literalAt;
      Tensor value = constantValue(t);
      pos_ = after;
      op = block.append(std::make_unique<Operation>(OpCode::of(Structural::Constant), Span{}));
      op->setConstant(std::move(value));
      op->addResult(t);
    } else if (mnemonic == "call") {
      if (peek().kind != Tok::Symbol) error(cat("expected @callee", describeHere()));
      const std::string callee = next().text;
      expectPunct("(");
      std::vector<Value*> args = uses();
      expectPunct(")");
      std::vector<Type> types;
      if (isPunct(":")) {
        next();
        types = typeList();
      }
      op = block.append(std::make_unique<Operation>(OpCode::of(Structural::Call), Span{}));
      op->setCallee(callee);
      op->operands() = std::move(args);
      for (const Type& t : types) op->addResult(t);
    } else if (mnemonic == "raise") {
      // raise KIND "message"
      const Token kindToken = peek();
      if (kindToken.kind != Tok::Ident) error(cat("expected an error kind (assert, value...)", describeHere()));
      next();
      std::optional<ErrorKind> kind;
      for (ErrorKind k : {ErrorKind::Syntax, ErrorKind::Name, ErrorKind::Type, ErrorKind::Shape, ErrorKind::Value,
                          ErrorKind::Io, ErrorKind::Assert, ErrorKind::Runtime, ErrorKind::User})
        if (kindToken.text == errorKindName(k)) kind = k;
      if (!kind) lexer_.error(kindToken, cat("unknown error kind '", kindToken.text, "'"));
      if (peek().kind != Tok::String) error(cat("expected the message as a string", describeHere()));
      op = block.append(std::make_unique<Operation>(OpCode::of(Structural::Raise), Span{}));
      op->setRaise(*kind, next().text);
    } else if (mnemonic == "yield" || mnemonic == "condition" || mnemonic == "return") {
      const Structural s = mnemonic == "yield" ? Structural::Yield : mnemonic == "condition" ? Structural::Condition : Structural::Return;
      op = block.append(std::make_unique<Operation>(OpCode::of(s), Span{}));
      op->operands() = uses();
    } else if (mnemonic == "tape_new" || mnemonic == "tape_push" || mnemonic == "tape_pop") {
      const Structural s = mnemonic == "tape_new" ? Structural::TapeNew
                           : mnemonic == "tape_push" ? Structural::TapePush
                                                     : Structural::TapePop;
      std::vector<Value*> operands = s == Structural::TapeNew ? std::vector<Value*>{} : uses();
      expectPunct(":");
      std::vector<Type> types = typeList();
      op = block.append(std::make_unique<Operation>(OpCode::of(s), Span{}));
      op->operands() = std::move(operands);
      for (const Type& t : types) op->addResult(t);
    } else if (mnemonic == "if") {
      Value* cond = use();
      std::vector<Type> types;
      if (isPunct(":")) {
        next();
        types = typeList();
      }
      op = block.append(std::make_unique<Operation>(OpCode::of(Structural::If), Span{}));
      op->operands().push_back(cond);
      for (const Type& t : types) op->addResult(t);
      op->setSpan(location());
      region(op->addRegion());
      expectIdent("else");
      region(op->addRegion());
    } else if (mnemonic == "while") {
      op = whileOp(block);
    } else if (mnemonic == "fused") {
      op = fusedOp(block);
    } else {
      const OpInfo* info = findOpByMnemonic(mnemonic);
      if (!info) lexer_.error(opToken, cat("unknown operation '", mnemonic, "'"));
      std::vector<Value*> operands = uses();
      OpAttrs attrs;
      try {
        attrs = attrsFromDict(info->kind, attrDict());
      } catch (Error& e) {
        e.setSpanIfUnknown(spanOf(opToken));
        throw;
      }
      expectPunct(":");
      std::vector<Type> types = typeList();
      op = block.append(std::make_unique<Operation>(OpCode::of(info->kind), Span{}));
      op->operands() = std::move(operands);
      op->setAttrs(std::move(attrs));
      for (const Type& t : types) op->addResult(t);
    }
    if (!op->code().is(Structural::If) && !op->code().is(Structural::While) && !op->code().is(Structural::Fused))
      op->setSpan(location());
    if (op->resultCount() != expectedResults)
      lexer_.error(opToken, cat(mnemonic, " has ", op->resultCount(), " results but ", expectedResults, " are named"));
    if (!results.empty()) {
      const auto& [name, group] = results[0];
      if (group == 0) define(name.text, op->result(), name);
      else
        for (int i = 0; i < group; ++i) define(cat(name.text, "#", i), op->result(static_cast<size_t>(i)), name);
    }
  }

  /// while (%a = %x, ...) : (types) -> (types) loc? { before } do (%b, ...) { after }
  Operation* whileOp(Block& block) {
    expectPunct("(");
    std::vector<Token> names;
    std::vector<Value*> inits;
    while (!isPunct(")")) {
      if (!names.empty()) expectPunct(",");
      if (peek().kind != Tok::Value) error(cat("expected a loop variable", describeHere()));
      names.push_back(next());
      expectPunct("=");
      inits.push_back(use());
    }
    next();
    expectPunct(":");
    expectPunct("(");
    std::vector<Type> carried;
    if (!isPunct(")")) carried = typeList();
    expectPunct(")");
    if (peek().kind != Tok::Arrow) error(cat("expected '->'", describeHere()));
    next();
    expectPunct("(");
    std::vector<Type> results;
    if (!isPunct(")")) results = typeList();
    expectPunct(")");
    if (carried.size() != inits.size()) error("while: the carried types do not match the initial values");
    Operation* op = block.append(std::make_unique<Operation>(OpCode::of(Structural::While), Span{}));
    op->operands() = inits;
    for (const Type& t : results) op->addResult(t);
    op->setSpan(location());
    Region& before = op->addRegion();
    pushScope();
    for (size_t i = 0; i < names.size(); ++i) define(names[i].text, before.block().addArgument(carried[i]), names[i]);
    region(before, false);
    popScope();
    expectIdent("do");
    Region& after = op->addRegion();
    pushScope();
    expectPunct("(");
    size_t index = 0;
    while (!isPunct(")")) {
      if (index) expectPunct(",");
      if (peek().kind != Tok::Value) error(cat("expected a value name", describeHere()));
      const Token& name = next();
      if (index >= results.size()) lexer_.error(name, "while: more after-region arguments than results");
      define(name.text, after.block().addArgument(results[index]), name);
      ++index;
    }
    next();
    if (index != results.size()) error("while: the after region needs one argument per result");
    region(after, false);
    popScope();
    return op;
  }

  /// fused KIND (%a = %x, ...) : (types) -> (types) loc? { body }. KIND is what the body
  /// holds (the printer derives it); it is read and not trusted.
  Operation* fusedOp(Block& block) {
    if (peek().kind != Tok::Ident) error(cat("expected the kind of fusion (elementwise, reduction, contraction)", describeHere()));
    next();
    expectPunct("(");
    std::vector<Token> names;
    std::vector<Value*> inputs;
    while (!isPunct(")")) {
      if (!names.empty()) expectPunct(",");
      if (peek().kind != Tok::Value) error(cat("expected a region argument", describeHere()));
      names.push_back(next());
      expectPunct("=");
      inputs.push_back(use());
    }
    next();
    expectPunct(":");
    expectPunct("(");
    std::vector<Type> types;
    if (!isPunct(")")) types = typeList();
    expectPunct(")");
    if (peek().kind != Tok::Arrow) error(cat("expected '->'", describeHere()));
    next();
    expectPunct("(");
    std::vector<Type> results;
    if (!isPunct(")")) results = typeList();
    expectPunct(")");
    if (types.size() != inputs.size()) error("fused: one type is needed per input");
    Operation* op = block.append(std::make_unique<Operation>(OpCode::of(Structural::Fused), Span{}));
    op->operands() = inputs;
    for (const Type& t : results) op->addResult(t);
    op->setSpan(location());
    Region& body = op->addRegion();
    // The region sees only its arguments: a fresh scope stack, not the enclosing one.
    std::vector<std::unordered_map<std::string, Value*>> outer;
    std::swap(outer, scopes_);
    pushScope();
    for (size_t i = 0; i < names.size(); ++i) define(names[i].text, body.block().addArgument(types[i]), names[i]);
    try {
      region(body, false);
    } catch (...) {
      std::swap(outer, scopes_);
      throw;
    }
    std::swap(outer, scopes_);
    return op;
  }

  /// Skips a constant literal (a number, true/false, or dense<...>).
  void skipLiteral() {
    if (isIdent("dense")) {
      next();
      expectPunct("<");
      int depth = 1;
      while (depth > 0) {
        if (peek().kind == Tok::End) error("expected '>' to end dense<...>");
        if (isPunct("<")) ++depth;
        if (isPunct(">")) --depth;
        next();
      }
      return;
    }
    next();
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  Module* building_ = nullptr;
  Lexer& lexer_;
  const std::string* file_;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
};

} // namespace

std::unique_ptr<Module> parseModule(std::string_view text, std::string_view fileName) {
  const std::string* file = internFileName(fileName);
  Lexer lexer(text, file);
  Parser parser(lexer.run(), lexer, file);
  return parser.module();
}

} // namespace tsl::ir
