// parser/Reader.cpp — the reader: ANTLR tokens and parse tree to tsl::Syntax.
//
// Reading happens in three steps:
//  1. ANTLR's lexer (generated from grammar/Tsl.g4) turns the text into tokens. It never
//     fails: malformed input becomes ERROR_CHAR, BAD_NUMBER or UNTERMINATED_STRING tokens.
//  2. checkTokens() walks the tokens once, keeping a stack of open delimiters. It reports
//     malformed tokens, stray and mismatched closers, prefixes (' ` ~ ~@ #_) with nothing
//     after them, nesting beyond kMaxNesting, and — at the end — an unclosed delimiter at
//     the place where it opened. After this step the token stream is well formed.
//  3. ANTLR's parser builds its tree, which Converter turns into Syntax nodes at once,
//     resolving string escapes and number literals.
#include "parser/Reader.h"

#include "TslLexer.h"
#include "TslParser.h"
#include "tsl/StackGuard.h"

#include <antlr4-runtime.h>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <optional>

namespace tsl {
namespace {

using antlr4::Token;

/// The text being read: its file name and the line number its first line has minus one.
struct Source {
  const std::string* file;
  uint32_t lineOffset;
};

/// Span of one token, its end found by walking the token's text (strings may span lines).
Span tokenSpan(const Source& source, const Token* token) {
  Span span;
  span.file = source.file;
  span.line = static_cast<uint32_t>(token->getLine()) + source.lineOffset;
  span.col = static_cast<uint32_t>(token->getCharPositionInLine()) + 1;
  span.endLine = span.line;
  span.endCol = span.col;
  if (token->getType() == Token::EOF) return span;
  const std::string text = token->getText();
  bool first = true;
  bool afterNewline = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte & 0xC0) == 0x80) continue; // continuation byte of a UTF-8 sequence
    if (!first) {
      if (afterNewline) {
        ++span.endLine;
        span.endCol = 1;
      } else {
        ++span.endCol;
      }
    }
    first = false;
    afterNewline = byte == '\n';
  }
  return span;
}

/// Span of a single character at `offset` code points into a one-line token.
Span charSpan(Span tokenSpan, uint32_t offset) {
  tokenSpan.col += offset;
  tokenSpan.endLine = tokenSpan.line;
  tokenSpan.endCol = tokenSpan.col;
  return tokenSpan;
}

bool isOpener(size_t type) {
  return type == TslLexer::OPEN_PAREN || type == TslLexer::OPEN_BRACKET ||
         type == TslLexer::OPEN_BRACE;
}

bool isCloser(size_t type) {
  return type == TslLexer::CLOSE_PAREN || type == TslLexer::CLOSE_BRACKET ||
         type == TslLexer::CLOSE_BRACE;
}

bool isPrefix(size_t type) {
  return type == TslLexer::QUOTE || type == TslLexer::BACKQUOTE || type == TslLexer::UNQUOTE ||
         type == TslLexer::UNQUOTE_SPLICING || type == TslLexer::DISCARD;
}

char closerFor(char opener) { return opener == '(' ? ')' : opener == '[' ? ']' : '}'; }

/// The outcome of checking a token stream.
struct TokenCheck {
  std::optional<Error> error; ///< the first malformed thing, if any
  bool incomplete = false;    ///< the text ended inside a form or string
};

struct OpenDelimiter {
  const Token* token;
  int prefixes; ///< prefix tokens (' ` ~ ~@ #_) directly before it, counted as nesting
};

/// Step 2: one pass over the tokens with a stack of open delimiters.
TokenCheck checkTokens(const std::vector<Token*>& tokens, const Source& file) {
  TokenCheck result;
  std::vector<OpenDelimiter> open;
  int depth = 0;           // nesting of the syntax tree built so far
  int pendingPrefixes = 0; // prefixes waiting for their form
  const Token* lastPrefix = nullptr;
  auto error = [&](const Span& span, std::string message) {
    result.error = Error(ErrorKind::Syntax, std::move(message), span);
    return result;
  };
  for (const Token* token : tokens) {
    const size_t type = token->getType();
    const Span span = tokenSpan(file, token);
    if (type == Token::EOF) {
      if (!open.empty()) {
        const OpenDelimiter& outer = open.front();
        const char opener = outer.token->getText()[0];
        result.incomplete = true;
        return error(tokenSpan(file, outer.token), cat("unclosed '", opener, "': no matching '",
                                                        closerFor(opener), "' before end of input"));
      }
      if (pendingPrefixes > 0) {
        result.incomplete = true;
        return error(tokenSpan(file, lastPrefix),
                     cat("'", lastPrefix->getText(), "' must be followed by a form"));
      }
      return result;
    }
    if (type == TslLexer::ERROR_CHAR) {
      const std::string text = token->getText();
      if (text == "#") return error(span, "unexpected '#': the only dispatch form is '#_'");
      const auto first = static_cast<unsigned char>(text[0]);
      if (first < 0x20 || first == 0x7F) { // unprintable: name it by code point
        char code[8];
        std::snprintf(code, sizeof code, "U+%04X", first);
        return error(span, cat("unexpected control character ", code));
      }
      return error(span, cat("unexpected character '", text, "'"));
    }
    if (type == TslLexer::BAD_NUMBER)
      return error(span, cat("invalid number literal '", token->getText(), "'"));
    if (type == TslLexer::UNTERMINATED_STRING) {
      result.incomplete = true;
      return error(charSpan(span, 0), "unterminated string: no closing '\"' before end of input");
    }
    if (isPrefix(type)) {
      ++pendingPrefixes;
      lastPrefix = token;
      if (depth + pendingPrefixes > kMaxNesting)
        return error(span, cat("forms nested deeper than ", kMaxNesting, " levels"));
      continue;
    }
    if (isCloser(type)) {
      const char closer = token->getText()[0];
      if (pendingPrefixes > 0)
        return error(tokenSpan(file, lastPrefix),
                     cat("'", lastPrefix->getText(), "' must be followed by a form"));
      if (open.empty()) return error(span, cat("unmatched '", closer, "'"));
      const char opener = open.back().token->getText()[0];
      if (closerFor(opener) != closer) {
        const Span openSpan = tokenSpan(file, open.back().token);
        return error(span, cat("'", closer, "' does not match '", opener, "' opened at line ",
                               openSpan.line, ", column ", openSpan.col));
      }
      depth -= 1 + open.back().prefixes;
      open.pop_back();
      continue;
    }
    if (isOpener(type)) {
      open.push_back({token, pendingPrefixes});
      depth += 1 + pendingPrefixes;
      pendingPrefixes = 0;
      if (depth > kMaxNesting)
        return error(span, cat("forms nested deeper than ", kMaxNesting, " levels"));
      continue;
    }
    pendingPrefixes = 0; // an atom completes its prefixes
  }
  return result;
}

/// Turns ANTLR's report of an unexpected token into a syntax error. After checkTokens the
/// parser should never call this; it is the safety net.
class ThrowingErrorListener : public antlr4::BaseErrorListener {
public:
  explicit ThrowingErrorListener(Source file) : file_(file) {}
  void syntaxError(antlr4::Recognizer*, Token* offending, size_t line, size_t column,
                   const std::string& message, std::exception_ptr) override {
    Span span;
    if (offending) {
      span = tokenSpan(file_, offending);
    } else {
      const auto at = static_cast<uint32_t>(line) + file_.lineOffset;
      span = {file_.file, at, static_cast<uint32_t>(column) + 1, at, static_cast<uint32_t>(column) + 1};
    }
    throw Error(ErrorKind::Syntax, message, span);
  }

private:
  Source file_;
};

/// Step 3: the parse tree to Syntax nodes.
class Converter {
public:
  explicit Converter(Source file) : file_(file) {}

  SyntaxPtr form(TslParser::FormContext* ctx) {
    checkStack();
    const Span span = spanOf(ctx);
    if (auto* list = dynamic_cast<TslParser::ListContext*>(ctx))
      return Syntax::list(elements(list->element()), span);
    if (auto* vec = dynamic_cast<TslParser::VectorContext*>(ctx))
      return Syntax::vector(elements(vec->element()), span);
    if (auto* map = dynamic_cast<TslParser::MapContext*>(ctx)) return mapForm(map, span);
    if (auto* q = dynamic_cast<TslParser::QuoteContext*>(ctx))
      return prefixed("quote", q->QUOTE()->getSymbol(), q->form(), span);
    if (auto* q = dynamic_cast<TslParser::QuasiquoteContext*>(ctx))
      return prefixed("quasiquote", q->BACKQUOTE()->getSymbol(), q->form(), span);
    if (auto* q = dynamic_cast<TslParser::UnquoteSplicingContext*>(ctx))
      return prefixed("unquote-splicing", q->UNQUOTE_SPLICING()->getSymbol(), q->form(), span);
    if (auto* q = dynamic_cast<TslParser::UnquoteContext*>(ctx))
      return prefixed("unquote", q->UNQUOTE()->getSymbol(), q->form(), span);
    if (auto* i = dynamic_cast<TslParser::IntegerContext*>(ctx))
      return integer(i->INT()->getText(), span);
    if (auto* f = dynamic_cast<TslParser::FloatContext*>(ctx))
      return floating(f->FLOAT()->getText(), span);
    if (auto* s = dynamic_cast<TslParser::StringContext*>(ctx))
      return string(s->STRING()->getText(), span);
    if (auto* k = dynamic_cast<TslParser::KeywordContext*>(ctx))
      return Syntax::keyword(k->KEYWORD()->getText().substr(1), span);
    if (auto* s = dynamic_cast<TslParser::SymbolContext*>(ctx)) {
      const std::string name = s->SYMBOL()->getText();
      if (name == "true") return Syntax::boolean(true, span);
      if (name == "false") return Syntax::boolean(false, span);
      if (name == "nil") return Syntax::nil(span);
      return Syntax::symbol(name, span);
    }
    throw Error(ErrorKind::Internal, "reader: unknown parse tree node", span);
  }

  std::vector<SyntaxPtr> elements(const std::vector<TslParser::ElementContext*>& elements) {
    std::vector<SyntaxPtr> out;
    out.reserve(elements.size());
    for (auto* element : elements)
      if (element->form()) out.push_back(form(element->form()));
    return out;
  }

private:
  Span spanOf(antlr4::ParserRuleContext* ctx) const {
    return tokenSpan(file_, ctx->getStart()).to(tokenSpan(file_, ctx->getStop()));
  }

  SyntaxPtr prefixed(const char* name, Token* prefix, TslParser::FormContext* inner, Span span) {
    return Syntax::list({Syntax::symbol(name, tokenSpan(file_, prefix)), form(inner)}, span);
  }

  SyntaxPtr mapForm(TslParser::MapContext* ctx, Span span) {
    std::vector<SyntaxPtr> items = elements(ctx->element());
    if (items.size() % 2 != 0)
      throw Error(ErrorKind::Syntax,
                  cat("a map needs an even number of forms (key value ...), got ", items.size()),
                  span);
    for (size_t i = 0; i < items.size(); i += 2) {
      const SyntaxKind k = items[i]->kind();
      if (k != SyntaxKind::Keyword && k != SyntaxKind::String && k != SyntaxKind::Integer &&
          k != SyntaxKind::Float && k != SyntaxKind::Symbol && k != SyntaxKind::List)
        throw Error(ErrorKind::Syntax, "map keys must be keywords, strings or numbers",
                    items[i]->span());
      if (k == SyntaxKind::Symbol || k == SyntaxKind::List) continue; // computed keys
      for (size_t j = 0; j < i; j += 2)
        if (items[j]->kind() == k && items[j]->print() == items[i]->print())
          throw Error(ErrorKind::Syntax, cat("duplicate key ", items[i]->print(), " in map"),
                      items[i]->span());
    }
    return Syntax::map(std::move(items), span);
  }

  SyntaxPtr integer(const std::string& text, Span span) {
    const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size())
      throw Error(ErrorKind::Syntax, cat("integer literal ", text, " does not fit in 64 bits"),
                  span);
    return Syntax::integer(value, span);
  }

  SyntaxPtr floating(const std::string& text, Span span) {
    const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
    double value = 0;
    auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // Underflow reads as zero, as in every other language; overflow is an error.
      const size_t e = text.find_first_of("eE");
      if (e == std::string::npos || text[e + 1] != '-')
        throw Error(ErrorKind::Syntax, cat("float literal ", text, " is out of range"), span);
      value = text[0] == '-' ? -0.0 : 0.0;
    } else if (ec != std::errc()) {
      throw Error(ErrorKind::Syntax, cat("invalid float literal ", text), span);
    }
    return Syntax::floating(value, span);
  }

  SyntaxPtr string(const std::string& token, Span span) {
    std::string out;
    out.reserve(token.size());
    uint32_t line = span.line, col = span.col; // position of token[i], starting at the quote
    bool afterNewline = false;
    auto advance = [&](unsigned char byte) {
      if ((byte & 0xC0) == 0x80) return; // UTF-8 continuation: same code point
      if (afterNewline) {
        ++line;
        col = 1;
      } else {
        ++col;
      }
      afterNewline = byte == '\n';
    };
    for (size_t i = 1; i + 1 < token.size(); ++i) {
      const char c = token[i];
      advance(static_cast<unsigned char>(c));
      if (c != '\\') {
        out += c;
        continue;
      }
      const Span at{span.file, line, col, line, col + 1};
      const char next = token[++i];
      advance(static_cast<unsigned char>(next));
      switch (next) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case '\\': out += '\\'; break;
      case '"': out += '"'; break;
      default: {
        size_t len = 1; // show the whole UTF-8 sequence of the escaped character
        while (i + len + 1 < token.size() &&
               (static_cast<unsigned char>(token[i + len]) & 0xC0) == 0x80)
          ++len;
        throw Error(ErrorKind::Syntax,
                    cat("unknown escape '\\", token.substr(i, len),
                        "' in string (known: \\n \\t \\\\ \\\")"),
                    at);
      }
      }
    }
    return Syntax::string(std::move(out), span);
  }

  Source file_;
};

/// Reports the first byte that is not part of well-formed UTF-8 (ANTLR's input stream
/// would otherwise throw a bare std::range_error).
void checkUtf8(std::string_view text, const Source& source) {
  uint32_t line = 1 + source.lineOffset, col = 0;
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    ++col;
    size_t len = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3
                                 : (byte >> 3) == 0x1E ? 4 : 0;
    bool ok = len != 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (ok && len == 2) ok = byte >= 0xC2; // overlong
    if (ok && len == 3) {
      const auto second = static_cast<unsigned char>(text[i + 1]);
      ok = !(byte == 0xE0 && second < 0xA0) && !(byte == 0xED && second >= 0xA0); // overlong, surrogate
    }
    if (ok && len == 4) {
      const auto second = static_cast<unsigned char>(text[i + 1]);
      ok = byte <= 0xF4 && !(byte == 0xF0 && second < 0x90) && !(byte == 0xF4 && second >= 0x90);
    }
    if (!ok) throw Error(ErrorKind::Syntax, "input is not valid UTF-8", {source.file, line, col, line, col});
    if (byte == '\n') {
      ++line;
      col = 0;
    }
    i += len;
  }
}

} // namespace

std::vector<SyntaxPtr> readAll(std::string_view text, std::string_view fileName, uint32_t firstLine) {
  const Source file{internFileName(fileName), firstLine - 1};
  checkUtf8(text, file);
  antlr4::ANTLRInputStream input(text.data(), text.size());
  TslLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  TokenCheck check = checkTokens(tokens.getTokens(), file);
  if (check.error) throw *check.error;

  TslParser parser(&tokens);
  ThrowingErrorListener listener(file);
  parser.removeErrorListeners();
  parser.addErrorListener(&listener);
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
      antlr4::atn::PredictionMode::SLL);
  TslParser::ProgramContext* program = parser.program();
  Converter converter(file);
  return converter.elements(program->element());
}

bool isIncomplete(std::string_view text) {
  const Source source{internFileName("<input>"), 0};
  try {
    checkUtf8(text, source);
  } catch (const Error&) {
    return false; // reading will report it
  }
  antlr4::ANTLRInputStream input(text.data(), text.size());
  TslLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  return checkTokens(tokens.getTokens(), source).incomplete;
}

} // namespace tsl
