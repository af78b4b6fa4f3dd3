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
