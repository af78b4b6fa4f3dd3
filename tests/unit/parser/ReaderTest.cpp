// tests/unit/parser/ReaderTest.cpp — the reader: every form of docs/language.md §1, spans, errors.
#include "parser/Diagnostics.h"
#include "parser/Reader.h"

#include <doctest/doctest.h>
#include <string>

using namespace tsl;

namespace {

SyntaxPtr readOne(const std::string& text) {
  auto forms = readAll(text, "test.tsl");
  REQUIRE(forms.size() == 1);
  return forms[0];
}

/// The syntax error reading `text` gives, as "line:col: message".
std::string readError(const std::string& text) {
  try {
    readAll(text, "test.tsl");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Syntax);
    return cat(e.span().line, ":", e.span().col, ": ", e.message());
  }
  FAIL("no error reading: " << text);
  return "";
}

} // namespace

TEST_CASE("atoms read as their kinds with their values") {
  CHECK(readOne("42")->intValue() == 42);
  CHECK(readOne("-7")->intValue() == -7);
  CHECK(readOne("+5")->intValue() == 5);
  CHECK(readOne("3.5")->floatValue() == 3.5);
  CHECK(readOne("-1e-3")->floatValue() == -1e-3);
  CHECK(readOne("2.0e+4")->floatValue() == 2.0e4);
  CHECK(readOne("1e5")->kind() == SyntaxKind::Float);
  CHECK(readOne("\"a\\n\\\"b\\\"\"")->text() == "a\n\"b\"");
  CHECK(readOne(":axis")->kind() == SyntaxKind::Keyword);
  CHECK(readOne(":axis")->text() == "axis");
  CHECK(readOne("true")->kind() == SyntaxKind::Bool);
  CHECK(readOne("false")->boolValue() == false);
  CHECK(readOne("nil")->kind() == SyntaxKind::Nil);
  for (const char* name : {"x", "log-softmax", "+", "@", "set!", "nn/linear", "->", "->>", "-", "a'", "x#"}) {
    CAPTURE(name);
    const SyntaxPtr s = readOne(name);
    CHECK(s->kind() == SyntaxKind::Symbol);
    CHECK(s->text() == name);
  }
}

TEST_CASE("compound forms nest and keep their children in order") {
  const SyntaxPtr list = readOne("(f x 1)");
  REQUIRE(list->isList());
  CHECK(list->size() == 3);
  CHECK(list->headName() == "f");
  const SyntaxPtr vec = readOne("[[1 2] [3 4]]");
  REQUIRE(vec->isVector());
  CHECK(vec->items()[1]->items()[0]->intValue() == 3);
  const SyntaxPtr map = readOne("{:w w :b b}");
  REQUIRE(map->kind() == SyntaxKind::Map);
  CHECK(map->size() == 4);
  CHECK(readOne("[]")->size() == 0);
  CHECK(readOne("[1, 2, 3]")->size() == 3); // commas are whitespace
}

TEST_CASE("quote forms read as lists headed by their special form") {
  CHECK(readOne("'x")->print() == "(quote x)");
  CHECK(readOne("`(a ~b ~@c)")->print() == "(quasiquote (a (unquote b) (unquote-splicing c)))");
}

TEST_CASE("comments and #_ drop text and forms") {
  CHECK(readAll("; nothing here\n", "t").empty());
  CHECK(readOne("(a #_b c)")->print() == "(a c)");
  CHECK(readOne("(a #_ #_ b c d)")->print() == "(a d)");
  CHECK(readOne("#_(ignored) kept")->print() == "kept");
}

TEST_CASE("spans give file, line, column and end, counting from 1") {
  const auto forms = readAll("(def x 1)\n  (f\n   \"two\nlines\")", "spans.tsl");
  REQUIRE(forms.size() == 2);
  CHECK(forms[0]->span().fileName() == "spans.tsl");
  CHECK(forms[0]->span().line == 1);
  CHECK(forms[0]->span().col == 1);
  CHECK(forms[0]->span().endCol == 9);
  const Span& f = forms[1]->span();
  CHECK(f.line == 2);
  CHECK(f.col == 3);
  CHECK(f.endLine == 4);
  CHECK(f.endCol == 7);
  const Span& str = forms[1]->items()[1]->span();
  CHECK(str.line == 3);
  CHECK(str.col == 4);
  CHECK(str.endLine == 4);
  CHECK(str.endCol == 6);
}

TEST_CASE("columns count code points, not bytes") {
  const auto forms = readAll("(\"héllo\" x)", "t");
  CHECK(forms[0]->items()[1]->span().col == 10);
}

TEST_CASE("an unclosed delimiter is reported where it opened") {
  CHECK(readError("(def a 1)\n(def b 2)\n  (println (+ a b)\n(def c 3)\n") ==
        "3:3: unclosed '(': no matching ')' before end of input");
  CHECK(readError("[1 2") == "1:1: unclosed '[': no matching ']' before end of input");
  CHECK(readError("{:a") == "1:1: unclosed '{': no matching '}' before end of input");
}

TEST_CASE("stray and mismatched closers are reported where they stand") {
  CHECK(readError("(a))") == "1:4: unmatched ')'");
  CHECK(readError("(a\n  ]") == "2:3: ']' does not match '(' opened at line 1, column 1");
}

TEST_CASE("malformed tokens are syntax errors at their position") {
  CHECK(readError("(f 1x)") == "1:4: invalid number literal '1x'");
  CHECK(readError("1.2.3") == "1:1: invalid number literal '1.2.3'");
  CHECK(readError(".5") == "1:1: invalid number literal '.5'");
  CHECK(readError("\"abc") == "1:1: unterminated string: no closing '\"' before end of input");
  CHECK(readError("(x \"a\\qb\")") == "1:6: unknown escape '\\q' in string (known: \\n \\t \\\\ \\\")");
  CHECK(readError("#{1}") == "1:1: unexpected '#': the only dispatch form is '#_'");
  CHECK(readError("(a ~)") == "1:4: '~' must be followed by a form");
  CHECK(readError("'") == "1:1: ''' must be followed by a form");
  CHECK(readError("99999999999999999999") == "1:1: integer literal 99999999999999999999 does not fit in 64 bits");
  CHECK(readError("1e999") == "1:1: float literal 1e999 is out of range");
  CHECK(readError("{:a 1 :b}") == "1:1: a map needs an even number of forms (key value ...), got 3");
  CHECK(readError("{:a 1 :a 2}") == "1:7: duplicate key :a in map");
}

TEST_CASE("tiny floats underflow to zero like everywhere else") {
  CHECK(readOne("1e-400")->floatValue() == 0.0);
}

TEST_CASE("input that is not UTF-8 is a syntax error, not an exception of another kind") {
  CHECK(readError("(a \xff)") == "1:4: input is not valid UTF-8");
}

TEST_CASE("nesting beyond the limit is an error, not a stack overflow") {
  const std::string deep(100000, '(');
  CHECK(readError(deep).find("nested deeper than 1000 levels") != std::string::npos);
  const std::string quotes(100000, '\'');
  CHECK(readError(quotes + "x").find("nested deeper than 1000 levels") != std::string::npos);
  std::string ok;
  for (int i = 0; i < 999; ++i) ok += '(';
  for (int i = 0; i < 999; ++i) ok += ')';
  CHECK(readAll(ok, "t").size() == 1);
}

TEST_CASE("isIncomplete asks for more input only for unfinished forms") {
  CHECK(isIncomplete("(defn f [x]"));
  CHECK(isIncomplete("\"open string"));
  CHECK(isIncomplete("'"));
  CHECK_FALSE(isIncomplete("(+ 1 2)"));
  CHECK_FALSE(isIncomplete("(a))")); // an error, which reading reports
  CHECK_FALSE(isIncomplete(""));
}

TEST_CASE("print gives text that reads back to an equal form") {
  for (const char* text : {"(f x 1 -2 3.5)", "[a [b c] {:k \"v\\n\"}]", "(quote (1 2.0 nil true :kw))",
                           "1e+20", "-2.5e-08"}) {
    CAPTURE(text);
    const std::string printed = readOne(text)->print();
    CHECK(readOne(printed)->print() == printed);
  }
  CHECK(readOne("2.0")->print() == "2.0");
  CHECK(readOne("0.1")->print() == "0.1");
}

TEST_CASE("diagnostics render the position, the line and a caret under the span") {
  SourceManager sources;
  sources.add("model.tsl", "(def a 1)\n(def b (matmul a a))\n");
  const Error error(ErrorKind::Shape, "matmul cannot contract", Span{internFileName("model.tsl"), 2, 8, 2, 19});
  CHECK(sources.render(error) ==
        "model.tsl:2:8: shape error: matmul cannot contract\n(def b (matmul a a))\n       ^~~~~~~~~~~~\n");
  CHECK(renderHeadline(Error(ErrorKind::Io, "cannot open 'x'")) == "io error: cannot open 'x'\n");
}
