// tests/unit/eval/OpRowsTest.cpp — what follows from the operation table's rows: every
// primitive is a builtin TSL can call, by its row's name or an alias, every documented
// example gives the result its row says, and every argument a row lets be traced has a
// traced form.
#include "eval/OpArgs.h"
#include "runtime/CallForms.h"
#include "tsl/tsl.h"

#include <doctest/doctest.h>

#include <string>

using namespace tsl;

TEST_CASE("every operation is callable from TSL by its row's name, or is internal") {
  Engine engine;
  for (const OpInfo& op : allOps()) {
    const std::string name = op.name;
    CAPTURE(name);
    if (!callable(op)) {
      // The compiler's own operations are no builtins.
      CHECK_THROWS_AS(engine.eval(name), Error);
      continue;
    }
    CHECK(engine.eval(cat("(fn? ", name, ")")).truthy());
  }
  for (const CallName& n : callNames()) {
    CAPTURE(std::string(n.name));
    CHECK(engine.eval(cat("(fn? ", n.name, ")")).truthy());
    // :doc prints the call form, the sentence and the example.
    const std::string doc = engine.doc(n.name);
    CHECK(doc.find(usageOf(n.name, *n.form)) == 0);
    CHECK(doc.find(n.doc) != std::string::npos);
  }
}

TEST_CASE("every row's example prints what the row says") {
  Engine engine;
  for (const CallName& n : callNames()) {
    const std::string example = n.example;
    CAPTURE(example);
    const size_t split = example.find(" ; ");
    REQUIRE(split != std::string::npos);
    const std::string expected = example.substr(split + 3);
    std::string got;
    try {
      got = engine.print(engine.eval(example.substr(0, split)));
    } catch (const Error& e) {
      got = engine.describe(e);
    }
    CHECK(got == expected);
  }
}

TEST_CASE("every argument a row lets be traced has the row's traced form") {
  for (const OpInfo& op : allOps())
    for (const ArgSpec& a : op.call->args)
      if (a.traced) {
        CAPTURE(std::string(op.name));
        CHECK((builtins::tracedForm(op.kind) != nullptr));
      }
}
