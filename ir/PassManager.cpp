// ir/PassManager.cpp — the pass registry and pipelines.
#include "ir/Pass.h"

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "runtime/Interrupt.h"

#include <chrono>
#include <functional>
#include <iomanip>
#include <iostream>
#include <mutex>

namespace tsl::ir {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::pair<std::string, PassFactory>> passes;
  Registry() {
    passes = {{"infer-types", createInferTypesPass}, {"inline", createInlinePass},
              {"fold-constants", createFoldConstantsPass}, {"simplify", createSimplifyPass},
              {"cse", createCsePass}, {"dce", createDcePass}};
  }
};

Registry& registry() {
  static Registry instance;
  return instance;
}

} // namespace

void registerPass(const std::string& name, PassFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [n, f] : r.passes) TSL_ASSERT(n != name, "the pass ", name, " is registered twice");
  r.passes.emplace_back(name, factory);
}

std::unique_ptr<Pass> createPass(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [n, factory] : r.passes)
    if (name == n) return factory();
  return nullptr;
}

std::vector<std::string> passNames() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [n, factory] : r.passes) names.push_back(n);
  return names;
}

const std::vector<std::string>& optimizationPasses() {
  static const std::vector<std::string> pipeline = {"inline", "simplify", "fold-constants", "cse",
                                                    "simplify", "dce",      "infer-types"};
  return pipeline;
}

PassManager::PassManager(const std::vector<std::string>& pipeline) {
  for (const std::string& name : pipeline) {
    auto pass = createPass(name);
    if (!pass) {
      std::string known;
      for (const std::string& n : passNames()) known += cat(known.empty() ? "" : ", ", n);
      fail(ErrorKind::Value, "unknown pass '", name, "' (passes: ", known, ")");
    }
    passes_.push_back(std::move(pass));
  }
}

bool PassManager::run(Module& module, PassContext& context) {
  std::ostream& out = context.out ? *context.out : std::cerr;
  bool changed = false;
  for (const auto& pass : passes_) {
    // Ctrl-C stops a long compile between passes (and long passes poll inside their loops).
    checkInterrupt();
    const auto start = std::chrono::steady_clock::now();
    const bool passChanged = pass->run(module, context);
    changed |= passChanged;
    // Functions inlined away are dropped before later passes spend time on them.
    if (passChanged && !context.entry.empty())
      if (const Function* entry = module.find(context.entry)) pruneUnreachable(module, *entry);
    // A memory plan describes the function as it was planned: a change makes it stale.
    if (passChanged && pass->name() != std::string_view("plan-memory"))
      for (const auto& f : module.functions()) f->setPlan(nullptr);
    if (context.timePasses)
      context.timings.emplace_back(pass->name(),
                                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (context.verifyEach) verify(module);
    if (context.printAfterAll || context.printAfter.count(pass->name()))
      out << "// -----// IR after " << pass->name() << " //----- //\n" << printModule(module, {false}) << std::flush;
  }
  checkInterrupt();
  return changed;
}

void PassManager::reportTimings(const PassContext& context) {
  std::ostream& out = context.out ? *context.out : std::cerr;
  double total = 0;
  for (const auto& [name, seconds] : context.timings) total += seconds;
  out << "// pass timings (total " << std::fixed << std::setprecision(3) << total * 1e3 << " ms)\n";
  for (const auto& [name, seconds] : context.timings)
    out << "//   " << std::setw(22) << std::left << name << std::right << std::setw(10) << seconds * 1e3 << " ms\n";
  out.unsetf(std::ios::fixed);
}

} // namespace tsl::ir
