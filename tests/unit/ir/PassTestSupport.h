// tests/unit/ir/PassTestSupport.h — running passes on IR text in the pass tests.
#pragma once

#include "IrTestSupport.h"

#include "compiler/interp/IrRunner.h"
#include "ir/Pass.h"

namespace tsl::ir::test {

struct PassResult {
  bool changed;
  std::string text; ///< printed without locations
};

/// Parses `text`, runs the named passes (verifying after each), returns the output.
inline PassResult runPasses(const std::string& text, const std::vector<std::string>& pipeline) {
  std::unique_ptr<Module> m = parseModule(text, "pass.ir");
  PassContext context;
  context.verifyEach = true;
  PassManager manager(pipeline);
  const bool changed = manager.run(*m, context);
  verify(*m);
  return {changed, printModule(*m, {false})};
}

/// Runs `text`'s function @f before and after `pipeline` and checks the results agree
/// bit for bit.
inline void checkSameResults(const std::string& text, const std::vector<std::string>& pipeline, const std::vector<Tensor>& args) {
  std::unique_ptr<Module> before = parseModule(text);
  std::unique_ptr<Module> after = parseModule(text);
  PassContext context;
  PassManager(pipeline).run(*after, context);
  const auto a = compiler::runIr(*before, *before->find("f"), args);
  const auto b = compiler::runIr(*after, *after->find("f"), args);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(TensorType::of(a[i]) == TensorType::of(b[i]));
    CHECK(bytesOf(a[i]) == bytesOf(b[i]));
  }
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline int occurrences(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

} // namespace tsl::ir::test
