// tests/unit/eval/DocsTest.cpp — help that helps: every name the REPL completes (the core
// library, and every standard library module once imported) has a :doc giving its call
// form and an example, and every example runs in a fresh engine.
#include "eval/BuiltinDocs.h"
#include "stdlib/Embedded.h"
#include "tsl/tsl.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

using namespace tsl;

namespace {

/// The standard library modules one imports (all but stdlib/core, which is preloaded).
std::vector<std::string> modules() {
  std::vector<std::string> out;
  for (const stdlib::EmbeddedFile& file : stdlib::embeddedFiles())
    if (file.name != "stdlib/core") out.emplace_back(file.name);
  return out;
}

/// The line after "e.g. " in a :doc text (the reader ignores a trailing "  ; result",
/// what the example's value prints as).
std::string exampleOf(const std::string& doc) {
  const size_t at = doc.find("e.g. ");
  if (at == std::string::npos) return "";
  const size_t end = doc.find('\n', at);
  return doc.substr(at + 5, end == std::string::npos ? std::string::npos : end - at - 5);
}

/// Examples that raise on purpose, and the error they raise.
const std::map<std::string, std::string> kRaising = {{"ex-info", "user error: bad batch"}};

} // namespace

TEST_CASE("every name the REPL completes has a :doc with its call form and an example") {
  Engine engine;
  for (const std::string& m : modules()) engine.eval(cat("(import \"", m, "\")"));
  const std::vector<std::string> names = engine.completions("");
  CHECK(names.size() > 200);
  MESSAGE(names.size(), " names");
  std::vector<std::string> missing;
  for (const std::string& name : names) {
    const std::string doc = engine.doc(name);
    const size_t slash = name.find('/', 1);
    const std::string shortName = slash == std::string::npos ? name : name.substr(slash + 1);
    // The call form: "(name" or "(alias/name", or for a value, "name:".
    const bool form = doc.find("(" + name) != std::string::npos || doc.find("(" + shortName) != std::string::npos ||
                      doc.find("\n  " + shortName + ":") != std::string::npos;
    if (!form || exampleOf(doc).empty()) missing.push_back(name);
  }
  for (const std::string& name : missing) MESSAGE(name, ": ", engine.doc(name));
  CHECK(missing.empty());
}

TEST_CASE("every :doc example runs") {
  Engine names;
  const std::vector<std::string> mods = modules();
  for (const std::string& m : mods) names.eval(cat("(import \"", m, "\")"));
  for (const std::string& name : names.completions("")) {
    // Builtins whose example writes files, reads ones that may not exist or ends the
    // process are documented, not run.
    if (builtins::exampleHasEffects(name)) continue;
    const std::string example = exampleOf(names.doc(name));
    if (example.empty()) continue;
    CAPTURE(name);
    CAPTURE(example);
    Engine fresh;
    for (const std::string& m : mods) fresh.eval(cat("(import \"", m, "\")"));
    if (kRaising.count(name)) {
      CHECK_THROWS_WITH(fresh.eval(example), doctest::Contains(kRaising.at(name).c_str()));
      continue;
    }
    // "  ; result": the value must print so.
    const size_t comment = example.find("  ; ");
    std::string got;
    CHECK_NOTHROW(got = fresh.print(fresh.eval(example)));
    if (comment != std::string::npos) CHECK(got == example.substr(comment + 4));
  }
}

TEST_CASE("the effectful examples are few and name real builtins") {
  Engine engine;
  for (const builtins::BuiltinDoc& d : builtins::builtinDocs()) {
    CAPTURE(std::string(d.name));
    CHECK(engine.doc(d.name).find(builtins::docText(d)) != std::string::npos);
  }
  size_t effectful = 0;
  for (const builtins::BuiltinDoc& d : builtins::builtinDocs()) effectful += d.effects;
  CHECK(effectful < 12);
  CHECK(builtins::exampleHasEffects("spit"));
  CHECK(!builtins::exampleHasEffects("map"));
}

TEST_CASE("a name error suggests the nearest names, and imports to add") {
  Engine engine;
  auto message = [&](const std::string& source) {
    try {
      engine.eval(source);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  engine.eval("(defn shuffle [x] x)");
  CHECK(message("(shufle [1 2 3])").find("unbound symbol 'shufle' (did you mean shuffle?)") != std::string::npos);
  CHECK(message("(linear {:w 1 :b 2} 3)").find("(did you mean nn/linear? the nn/ names need (import \"stdlib/nn\"))") !=
        std::string::npos);
  CHECK(message("(nn/linear {:w 1 :b 2} 3)").find("(add (import \"stdlib/nn\"))") != std::string::npos);
  engine.eval("(import \"stdlib/nn\")");
  CHECK(message("(linear {:w 1 :b 2} 3)").find("(did you mean nn/linear?)") != std::string::npos);
  CHECK(message("(nn/lineer {:w 1 :b 2} 3)").find("(did you mean nn/linear?)") != std::string::npos);
  // Nothing close: no suggestion; short names are not matched loosely.
  CHECK(message("(qqqqqqqqqq 1)").find("did you mean") == std::string::npos);
  CHECK(message("(+ zz 1)").find("did you mean") == std::string::npos);
  CHECK_THROWS_WITH(engine.doc("pritnln"), doctest::Contains("did you mean println?"));
  const std::vector<Error> found = engine.check("(defn f [] (pritnln 1))", "x.tsl");
  REQUIRE(found.size() == 1);
  CHECK(std::string(found[0].what()).find("unbound symbol 'pritnln' (did you mean println?)") != std::string::npos);
}
