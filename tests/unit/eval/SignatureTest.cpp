// tests/unit/eval/SignatureTest.cpp — the parameter signatures `tsl compile --sig` and
// Engine::compile read: spaces may surround punctuation but never split a word or a size.
#include "eval/Compile.h"
#include "tsl/Error.h"

#include <doctest/doctest.h>

using namespace tsl;

namespace {

/// The types of `text` as one string ("x:f32[2,3] i64"), or "error: MESSAGE".
std::string parsed(std::string_view text) {
  std::vector<std::string> names;
  std::vector<ir::Type> types;
  try {
    parseSignature(text, names, types);
  } catch (const Error& e) {
    return std::string(errorKindName(e.kind())) + " error: " + e.message();
  }
  std::string out;
  for (size_t i = 0; i < types.size(); ++i)
    out += (i ? " " : "") + (names[i].empty() ? "" : names[i] + ":") + types[i].str();
  return out;
}

} // namespace

TEST_CASE("a signature lists NAME:TYPE items; spaces around punctuation are allowed") {
  CHECK(parsed("x:f32[128,64],y:i64[128]") == "x:f32[128,64] y:i64[128]");
  CHECK(parsed("a:f32[2, 3]") == "a:f32[2,3]");
  CHECK(parsed(" a : f32[ 2 , 3 ] ,  n: i64 ") == "a:f32[2,3] n:i64");
  CHECK(parsed("f32[n,64], f32[64]") == "f32[n,64] f32[64]");
  CHECK(parsed("") == "");
}

TEST_CASE("a space inside a size, a dtype or a name is a value error naming the item") {
  // It used to be read as f32[23]: every space was removed before the type was parsed.
  CHECK(parsed("a:f32[2 3]") == "value error: bad signature item 'a:f32[2 3]': a space inside a name, type or size");
  CHECK(parsed("x:f32[2,3], b:f 32[2]") ==
        "value error: bad signature item 'b:f 32[2]': a space inside a name, type or size");
  CHECK(parsed("my x:f32") == "value error: bad signature item 'my x:f32': a space inside a name, type or size");
  CHECK(parsed("a:f32[n m]") == "value error: bad signature item 'a:f32[n m]': a space inside a name, type or size");
  CHECK(parsed("a:f32[2],") ==
        "value error: bad signature item '': expected NAME:TYPE such as x:f32[128,64] or n:i64");
  CHECK(parsed("a:f32[2") ==
        "value error: bad signature item 'a:f32[2': expected NAME:TYPE such as x:f32[128,64] or n:i64");
}

namespace {

/// Each argument's name and tree shape, then the leaf types in order, or "error: ...".
std::string parsedTrees(std::string_view text) {
  std::vector<std::string> names;
  std::vector<ir::Type> types;
  std::vector<TreeShape> shapes;
  try {
    parseSignature(text, names, types, &shapes);
  } catch (const Error& e) {
    return std::string(errorKindName(e.kind())) + " error: " + e.message();
  }
  std::vector<std::string> labels;
  for (size_t i = 0; i < shapes.size(); ++i) shapes[i].label(names[i], labels);
  std::string out;
  for (size_t i = 0; i < types.size(); ++i) out += (i ? " " : "") + labels.at(i) + ":" + types[i].str();
  return out;
}

} // namespace

TEST_CASE("a signature item may be a tree; its leaves come in the order written") {
  CHECK(parsedTrees("p:{:w f32[784,10] :b f32[10]},x:f32[32,784]") == "p.w:f32[784,10] p.b:f32[10] x:f32[32,784]");
  CHECK(parsedTrees("p: {:layers [{:w f32[2, 3]}, {:w f32[3,1]}] :lr f32}") == "p.layers.0.w:f32[2,3] p.layers.1.w:f32[3,1] p.lr:f32");
  CHECK(parsedTrees("v:[i64[2] f16[n]]") == "v.0:i64[2] v.1:f16[n]");
  CHECK(parsedTrees("x:f32[3]") == "x:f32[3]");
  CHECK(parsedTrees("p:{:w f32[2]") == "value error: bad signature item 'p:{:w f32[2]': '{' without '}'");
  CHECK(parsedTrees("p:{w f32[2]}") == "value error: bad signature item 'p:{w f32[2]}': map keys are keywords, as {:w f32[3] :b f32[]}");
  CHECK(parsedTrees("p:{:w f32[2] :w f32[3]}") == "value error: bad signature item 'p:{:w f32[2] :w f32[3]}': a map key appears twice");
  CHECK(parsedTrees("p:{}") == "value error: bad signature item 'p:{}': an empty map or vector has no tensors to pass");
  CHECK(parsedTrees("p:{:w q32[2]}") == "value error: bad signature item 'p:{:w q32[2]}': 'q32[2]' is not a type such as f32[128,64]");
  CHECK(parsedTrees("p:{:w f32[2]} x") == "value error: bad signature item 'p:{:w f32[2]} x': text after the tree");
  CHECK(parsed("p:{:w f32[2]}") == "value error: bad signature item 'p:{:w f32[2]}': trees are not accepted here");
}
